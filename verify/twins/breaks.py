"""Ways to break what a check relies on, shared by the twin modules (no twins are registered here).

Each function returns a context manager that applies one break with :mod:`unittest.mock` and undoes
it on exit; production code carries no switch for any of them.
"""

from __future__ import annotations

import dataclasses
import sys
from contextlib import ExitStack, contextmanager
from typing import Any, Callable, Iterator
from unittest import mock

from attnsim.sim.ledger import Entry, Ledger
from attnsim.sim.oracle import Oracle
from attnsim.verify import check as check_module
from attnsim.verify.agreement import Agreement

_WHERE = ("attnsim.sim.", "attnsim.verify.")
_NOT = ("attnsim.verify.twins",)


@contextmanager
def replaced(original: Any, replacement: Any) -> Iterator[None]:
    """Replace ``original`` by ``replacement`` in every loaded attnsim module that holds it by name.

    A function imported with ``from … import f`` is bound in each importing module, so patching its
    home module alone would miss the callers; this patches every binding.
    """
    with ExitStack() as stack:
        for name, module in list(sys.modules.items()):
            if module is None or not name.startswith(_WHERE) or name.startswith(_NOT):
                continue
            for attr, value in list(vars(module).items()):
                if value is original:
                    stack.enter_context(mock.patch.object(module, attr, replacement))
        yield


def wrapped(original: Callable[..., Any], wrapper: Callable[..., Any]) -> Any:
    """:func:`replaced` with ``wrapper(original, *args, **kwargs)``."""
    return replaced(original, lambda *a, **k: wrapper(original, *a, **k))


@contextmanager
def ledger_entry(kind: str = "oracle", factor: int = 0, nth: int = 1) -> Iterator[None]:
    """The ``nth`` ledger entry of ``kind`` is recorded ``factor`` times (0: dropped, 2: doubled)."""
    original = Ledger.record
    seen = [0]

    def record(self: Ledger, kind_: str, tag: str, **kw: Any) -> Entry:
        if kind_ == kind:
            seen[0] += 1
            if seen[0] == nth:
                if factor == 0:
                    return Entry(kind_, tag, int(kw.get("round", 0)))
                kw["amount"] = kw.get("amount", 1) * factor
        return original(self, kind_, tag, **kw)

    with mock.patch.object(Ledger, "record", record):
        yield


@contextmanager
def formula_off(resource: str, delta: str = "1") -> Iterator[None]:
    """The loaded paper_refs claim's exact count of ``resource`` is off by the constant ``delta``."""
    original = check_module.get_claim

    def get(claim_id: str) -> Any:
        claim = original(claim_id)
        res = claim.resources[resource]
        broken = dataclasses.replace(res, exact=f"({res.exact}) + {delta}")
        return dataclasses.replace(claim, resources={**claim.resources, resource: broken})

    with mock.patch.object(check_module, "get_claim", get):
        yield


@contextmanager
def oracle_unlimited() -> Iterator[None]:
    """The oracle lets calls of any length, layer count and width through."""
    with ExitStack() as stack:
        for name in ("_check_call", "_check_output"):
            stack.enter_context(mock.patch.object(Oracle, name, lambda *a, **k: None))
        yield


@contextmanager
def loose_agreement(bits: float = 8.0) -> Iterator[None]:
    """Every agreement test calls outputs equal when they agree to ``bits`` bits (exactness dropped)."""
    from attnsim.verify import agreement

    original = agreement.compare

    def compare(y: Any, ref: Any, nm: Any, truth: Any, min_bits: float | None) -> Agreement:
        ag = original(y, ref, nm, truth, min_bits)
        return Agreement(ag.agree or ag.error_bits >= bits, ag.error_bits, ag.worst_row, min_bits)

    with replaced(original, compare):
        yield


@contextmanager
def together(*breaks: Any) -> Iterator[None]:
    """Several breaks at once (e.g. a loose oracle and a construction that uses it)."""
    with ExitStack() as stack:
        for b in breaks:
            stack.enter_context(b)
        yield
