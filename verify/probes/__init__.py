"""Probes of what every verdict rests on: the referee (the oracle's limits, the exact comparator, the
ledger) and the theory (big-O containment).

A check can only fail a construction as well as its referee refuses an overstep, its comparator tells two
outputs apart and its ledger keeps the counts; a bound can only be met honestly when the containment
routine decides known pairs right. Each :class:`Probe` asks one such question of the code as it is and
says whether the answer is the right one (:func:`run_probes`). ``attnsim teeth`` and ``attnsim report`` run
them: a failing probe fails the command.

Probes need teeth too: a :class:`ProbeTwin` breaks the referee or the theory in one place (a limit
compared with ``>=`` instead of ``>``, or against the limit + 1; exact equality loosened to a tolerance;
the ledger's compaction dropping an amount; a containment that answers "limit 0") and names the probes that
must then fail (:func:`run_probe_twins`). The twins live in :mod:`attnsim.verify.twins.referee`.
"""

from __future__ import annotations

import importlib
import time
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from typing import Any, Callable, Sequence

SUBJECTS = ("referee", "theory")
MODULES = ("oracle_limits", "referee", "theory")


@dataclass(frozen=True)
class Probe:
    """One question with a known answer: ``run()`` returns None when the code answers it right, else why not."""

    name: str
    subject: str  # one of SUBJECTS
    what: str
    run: Callable[[], str | None]


@dataclass(frozen=True)
class ProbeResult:
    """How one probe came out on the code as it is (``ok``) and why."""

    name: str
    subject: str
    what: str
    ok: bool
    reason: str
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return asdict(self)


@dataclass(frozen=True)
class ProbeTwin:
    """A break of the referee or the theory (``breaks()``, a context manager) that the probes named in
    ``caught_by`` must notice (at least one of them fails)."""

    name: str
    subject: str
    what: str
    breaks: Callable[[], AbstractContextManager[Any]]
    caught_by: tuple[str, ...]


@dataclass(frozen=True)
class ProbeTwinResult:
    """Whether a probe twin was caught, and by which probes."""

    name: str
    subject: str
    what: str
    caught: bool
    failed: tuple[str, ...]
    reason: str

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {**asdict(self), "failed": list(self.failed)}


_PROBES: dict[str, Probe] = {}
_TWINS: dict[str, ProbeTwin] = {}


def probe(name: str, subject: str, what: str) -> Callable[[Callable[[], str | None]], Callable[[], str | None]]:
    """Register a function returning None (the right answer) or why not, as a probe of ``subject``."""
    if subject not in SUBJECTS:
        raise ValueError(f"probe {name}: subject must be one of {SUBJECTS}, got {subject!r}")

    def register(fn: Callable[[], str | None]) -> Callable[[], str | None]:
        if name in _PROBES:
            raise RuntimeError(f"two probes named {name!r}")
        _PROBES[name] = Probe(name, subject, what, fn)
        return fn

    return register


def probe_twin(name: str, subject: str, what: str, caught_by: Sequence[str]
               ) -> Callable[[Callable[[], AbstractContextManager[Any]]], Callable[[], AbstractContextManager[Any]]]:
    """Register a context-manager factory as a break that one of the probes ``caught_by`` must notice."""
    def register(fn: Callable[[], AbstractContextManager[Any]]) -> Callable[[], AbstractContextManager[Any]]:
        if name in _TWINS:
            raise RuntimeError(f"two probe twins named {name!r}")
        _TWINS[name] = ProbeTwin(name, subject, what, fn, tuple(caught_by))
        return fn

    return register


def all_probes() -> list[Probe]:
    """Every registered probe, in registration order (referee first, then theory)."""
    for mod in MODULES:
        importlib.import_module(f"{__name__}.{mod}")
    return sorted(_PROBES.values(), key=lambda p: SUBJECTS.index(p.subject))


def all_probe_twins() -> list[ProbeTwin]:
    """Every registered probe twin (:mod:`attnsim.verify.twins.referee`)."""
    all_probes()
    importlib.import_module("attnsim.verify.twins.referee")
    return list(_TWINS.values())


def _ask(p: Probe) -> ProbeResult:
    start = time.perf_counter()
    try:
        why = p.run()
    except Exception as exc:  # noqa: BLE001 - a probe that cannot ask its question fails, with the reason
        why = f"the probe could not run ({type(exc).__name__}: {exc})"
    seconds = round(time.perf_counter() - start, 3)
    return ProbeResult(p.name, p.subject, p.what, why is None, why or "holds", seconds)


def run_probes(subjects: Sequence[str] = SUBJECTS, names: Sequence[str] | None = None) -> list[ProbeResult]:
    """Run the probes of ``subjects`` (or only those in ``names``) on the code as it is."""
    return [_ask(p) for p in all_probes() if p.subject in subjects and (names is None or p.name in names)]


def run_probe_twin(t: ProbeTwin) -> ProbeTwinResult:
    """Apply ``t``'s break and run the probes it names: caught when at least one of them fails."""
    unknown = [n for n in t.caught_by if n not in _PROBES]
    if unknown:
        return ProbeTwinResult(t.name, t.subject, t.what, False, (), f"names no such probe: {', '.join(unknown)}")
    try:
        with t.breaks():
            results = run_probes(SUBJECTS, t.caught_by)
    except Exception as exc:  # noqa: BLE001 - a break that cannot be applied is not caught
        return ProbeTwinResult(t.name, t.subject, t.what, False, (), f"the break could not be applied "
                               f"({type(exc).__name__}: {exc})")
    failed = tuple(r.name for r in results if not r.ok)
    why = "; ".join(f"{r.name}: {r.reason}" for r in results if not r.ok)
    return ProbeTwinResult(t.name, t.subject, t.what, bool(failed), failed,
                           why or f"every probe it names still holds ({', '.join(t.caught_by)})")


def run_probe_twins(subjects: Sequence[str] = SUBJECTS) -> list[ProbeTwinResult]:
    """Run every probe twin of ``subjects``."""
    return [run_probe_twin(t) for t in all_probe_twins() if t.subject in subjects]


def probe_pass(seconds: bool = True) -> dict[str, Any]:
    """The probes and their twins, run once: what ``attnsim teeth`` and the report show (JSON-ready).
    ``ok`` is True when every probe holds and every probe twin is caught."""
    start = time.perf_counter()
    probes = run_probes()
    twins = run_probe_twins()
    out = {"probes": [p.as_dict() for p in probes], "twins": [t.as_dict() for t in twins],
           "ok": all(p.ok for p in probes) and all(t.caught for t in twins),
           "failing": [p.name for p in probes if not p.ok], "not_caught": [t.name for t in twins if not t.caught]}
    if seconds:
        out["seconds"] = round(time.perf_counter() - start, 2)
    return out


def probe_failures(pass_: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, why) of every probe of ``pass_`` that fails and every probe twin it does not catch."""
    return ([(p["name"], p["reason"]) for p in pass_["probes"] if not p["ok"]]
            + [(t["name"], f"broken variant not caught: {t['reason']}") for t in pass_["twins"] if not t["caught"]])
