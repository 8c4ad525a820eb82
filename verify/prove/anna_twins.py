"""Broken twins of ``attnsim prove anna``: each plants one bug in the integer plan the relay or Lemma B.4's
code runs; the prover must find a counterexample, and the claim's ordinary exact check, run with the same
bug, must fail (``attnsim prove anna --twins``)."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, ContextManager, Iterator
from unittest import mock

from attnsim.sim.anna import message_code, relay_plan
from attnsim.verify.prove.anna import CODE, RELAY


@dataclass(frozen=True)
class PlanTwin:
    """A bug in the ANNA plan: ``breaks()`` applies it to the construction and the prover alike."""

    claim: str
    name: str
    what: str
    breaks: Callable[[], ContextManager[None]]
    replay: Callable[[dict[str, int]], dict[str, Any]] = field(default=lambda model: {})
    numerics: str = "exact"  # the replay's numerics
    observable: bool = True  # False: no run can tell the bug apart (the prover's word alone; never "caught")


@contextmanager
def _patched(module: Any, name: str, fn: Callable[..., Any]) -> Iterator[None]:
    with mock.patch.object(module, name, fn):
        yield


def _move_digit_plus_one(ops: Any, tok: Any, dest: Any, place: Any, base: Any) -> Any:
    return relay_plan.with_digit(ops, tok, place, base, ops.mod(relay_plan.digit(ops, dest, place, base) + 1, base))


def _relay_point(model: dict[str, int]) -> dict[str, Any]:
    """The relay at a small sort (k and D are the check's: P = 16 machines of N = 64 words)."""
    return {"protocol": "sort", "N": 64, "P": 16}


def _code_point(model: dict[str, int]) -> dict[str, Any]:
    """Lemma B.4's check with the counterexample's alpha (at least 2, at most 8)."""
    return {"q": 256, "alpha": max(2, min(8, model.get("alpha", 4))), "Delta": 2, "trials": 40}


TWINS = (
    PlanTwin(RELAY, "move_digit_off_by_one", "the move sets the destination's digit plus one (mod k)",
             lambda: _patched(relay_plan, "move_target", _move_digit_plus_one), _relay_point),
    PlanTwin(RELAY, "capacity_plus_one", "the relay's capacity is s + 2 k D + 1",
             lambda: _patched(relay_plan, "capacity", lambda s, k, D: s + 2 * k * D + 1), _relay_point,
             observable=False),
    PlanTwin(RELAY, "deal_to_member_zero", "a deal hands every pooled unit to the member with digit 0",
             lambda: _patched(relay_plan, "deal_member", lambda ops, pooled, base: 0 * pooled), _relay_point),
    PlanTwin(CODE, "validity_ignores_squares", "a bucket is read as one sender whenever it is not empty",
             lambda: _patched(message_code, "single_sender", lambda ops, c, s1, s2: c != 0), _code_point),
    PlanTwin(CODE, "rows_one_short", "the code has (alpha - 1)(d - 1) rows, one short",
             lambda: _patched(message_code, "code_rows", lambda alpha, digits: (alpha - 1) * (digits - 1)),
             _code_point),
)
