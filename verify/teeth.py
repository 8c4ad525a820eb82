"""Teeth: run every broken twin (:mod:`attnsim.verify.twins`) through its claim's check.

A twin is *caught* when the check's verdict is not ``pass`` or the run stops with the project's
:class:`~attnsim.sim.errors.AttnsimError` (a refusal naming what is wrong). Any other exception is a
crash, which is not a catch: a check that only fails by accident has no teeth.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnsim.sim.errors import AttnsimError
from attnsim.verify.check import run_check
from attnsim.verify.twins import Twin


@dataclass(frozen=True)
class TwinResult:
    """What the check said of one twin."""

    claim: str
    name: str
    what: str
    caught: bool
    reason: str


def run_twin(t: Twin, seed: int = 0) -> TwinResult:
    """Run ``t.claim``'s check with ``t``'s break applied and say whether the check failed it."""
    try:
        with t.breaks():
            record = run_check(t.claim, dict(t.params), t.numerics, seed)
    except AttnsimError as exc:
        return TwinResult(t.claim, t.name, t.what, True, f"refused: {exc}")
    except Exception as exc:  # noqa: BLE001 - a crash is reported as "not caught", never hidden
        return TwinResult(t.claim, t.name, t.what, False, f"crashed ({type(exc).__name__}: {exc})")
    if record["verdict"] != "pass":
        return TwinResult(t.claim, t.name, t.what, True, "; ".join(record["reasons"]) or "verdict fail")
    return TwinResult(t.claim, t.name, t.what, False, "the check passed the broken variant")
