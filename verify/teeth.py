"""Teeth: run every broken twin (:mod:`attnsim.verify.twins`) through its claim's check.

A twin is *caught* when the check's verdict is not ``pass`` or the run stops with the project's
:class:`~attnsim.sim.errors.AttnsimError` (a refusal naming what is wrong). Any other exception is a
crash, which is not a catch: a check that only fails by accident has no teeth. A claim with a
checker but fewer than :data:`MIN_TWINS` twins has no teeth either (:func:`plan`).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from attnsim.sim.errors import AttnsimError
from attnsim.verify.check import run_check
from attnsim.verify.registry import UsageError, all_checkers
from attnsim.verify.twins import Twin, all_twins

MIN_TWINS = 2


@dataclass(frozen=True)
class TwinResult:
    """What the check said of one twin."""

    claim: str
    name: str
    what: str
    caught: bool
    reason: str
    seconds: float = 0.0


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


@dataclass(frozen=True)
class ClaimTeeth:
    """A claim's twins and what the check said of each; ``ok`` iff it has enough twins, all caught."""

    claim: str
    registered: int
    results: tuple[TwinResult, ...]

    @property
    def caught(self) -> int:
        """How many of the twins that ran were caught."""
        return sum(r.caught for r in self.results)

    @property
    def ok(self) -> bool:
        """Enough twins registered, and every one that ran caught."""
        return self.registered >= MIN_TWINS and self.caught == len(self.results)

    @property
    def problem(self) -> str | None:
        """Why the claim has no teeth, in words (None when it has)."""
        if self.registered < MIN_TWINS:
            return f"no teeth: {self.registered} broken variant(s) registered, {MIN_TWINS} needed"
        missed = [r.name for r in self.results if not r.caught]
        return f"broken variant(s) not caught: {', '.join(missed)}" if missed else None

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``attnsim teeth --json`` and the report's cache)."""
        return {"claim": self.claim, "registered": self.registered, "run": len(self.results),
                "caught": self.caught, "ok": self.ok, "problem": self.problem,
                "twins": [asdict(r) for r in self.results]}


def select_claims(selected: Sequence[str] | None) -> list[str]:
    """Claim ids with a checker: all, or those named (a claim id, or a paper such as ``two_heads``)."""
    checkers = list(all_checkers())
    if not selected:
        return checkers
    out: list[str] = []
    for name in selected:
        hits = [c for c in checkers if c == name or c.startswith(name + ".")]
        if not hits:
            raise UsageError(f"CLAIM: no checker for {name!r} (a claim id or a paper: two_heads, anna, tint)")
        out += [c for c in hits if c not in out]
    return out


def plan(claims: Sequence[str], quick: bool = False) -> dict[str, tuple[int, list[Twin]]]:
    """Per claim: how many twins are registered and which run (``quick``: the first by name only)."""
    by_claim: dict[str, list[Twin]] = {c: [] for c in claims}
    for t in all_twins():
        if t.claim in by_claim:
            by_claim[t.claim].append(t)
    return {c: (len(ts), ts[:1] if quick else ts) for c, ts in by_claim.items()}


def run_teeth(claims: Sequence[str], quick: bool = False, seed: int = 0,
              on_twin: Callable[[TwinResult], None] | None = None) -> list[ClaimTeeth]:
    """Run the planned twins of ``claims``; ``on_twin`` hears each result as it comes."""
    out = []
    for claim, (registered, twins) in plan(claims, quick).items():
        results = []
        for t in twins:
            start = time.perf_counter()
            r = run_twin(t, seed)
            r = TwinResult(r.claim, r.name, r.what, r.caught, r.reason, round(time.perf_counter() - start, 2))
            results.append(r)
            if on_twin is not None:
                on_twin(r)
        out.append(ClaimTeeth(claim, registered, tuple(results)))
    return out


def save(results: Sequence[ClaimTeeth], path: Path | str, version: str, quick: bool) -> None:
    """Write a teeth pass as JSON (read back by :func:`load` for the report)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps({"version": version, "quick": quick,
                                      "claims": [c.as_dict() for c in results]}, indent=1), encoding="utf-8")


def load(path: Path | str, version: str) -> dict[str, dict[str, Any]] | None:
    """A saved teeth pass of this code ``version`` keyed by claim, or None when absent or stale."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    if data.get("version") != version:
        return None
    return {c["claim"]: c for c in data["claims"]}
