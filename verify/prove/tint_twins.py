"""Broken twins of ``attnsim prove tint``: a bug planted in the stream layout that TinT's network runs; the
prover must find a counterexample, and ``tint.sgd_step``'s exact check, run with the same bug, must fail."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator
from unittest import mock

from attnsim.sim.tint import network
from attnsim.verify.prove.anna_twins import PlanTwin
from attnsim.verify.prove.tint import CLAIM


@contextmanager
def _overlapping_register() -> Iterator[None]:
    """Every register after the first starts one column early, over the last column of the one before."""
    def reg(self: network.StreamPlan, name: str, width: Any = None) -> str:
        if name not in self.registers:
            start = self._next - 1 if self.registers else self._next
            self.registers[name] = (start, self.D if width is None else width)
            self._next = start + self.registers[name][1]
        return name

    with mock.patch.object(network.StreamPlan, "reg", reg):
        yield


@contextmanager
def _read_before_write() -> Iterator[None]:
    """A layer norm's first module reads its own output register (not yet written) instead of its input."""
    def ln(p: network.StreamPlan, mods: tuple, at: Any, h: str, s: str, name: str) -> tuple[str, str]:
        hat = p.mod(mods[0], at, (name + ".y",), name + ".hat", s)
        return p.mod(mods[1], at, (hat,), name + ".y", s), hat

    with mock.patch.object(network, "_ln", ln):
        yield


def _point(model: dict[str, Any]) -> dict[str, Any]:
    """The check (float64 against torch: a wrong layout's values grow past what exact rationals run in
    seconds) at the named case whose loop shape is the counterexample's (two steps or one)."""
    case = "tiny-top1-2steps" if model.get("steps", 1) == 2 else "tiny-relu"
    return {"case": case, "approximations": False}


TWINS = (
    PlanTwin(CLAIM, "overlapping_register", "each register starts one column inside the one before",
             _overlapping_register, _point, numerics="float64"),
    PlanTwin(CLAIM, "read_before_write", "a layer norm reads its own output register before any layer wrote it",
             _read_before_write, _point, numerics="float64"),
)
