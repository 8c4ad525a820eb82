"""Teeth: run every broken twin (:mod:`attnsim.verify.twins`) through its claim's check.

Each run ends one of four ways (:data:`OUTCOMES`): ``caught`` — the check's verdict is ``fail``;
``refused`` — the run stopped with the project's :class:`~attnsim.sim.errors.AttnsimError` (a guard or
a referee naming what is wrong) or an assertion; ``missed`` — the check passed the broken variant;
``crashed`` — any other exception. A refusal is not a catch: it *bites* only for a twin declared a
refusal twin (:data:`~attnsim.verify.twins.REFUSAL_KINDS`: the construction oversteps a referee's
limit), and such a twin bites only when refused (a referee that lets it through is broken); every
other twin bites only when caught. A claim has teeth (:attr:`ClaimTeeth.ok`) when it has at least
:data:`MIN_TWINS` twins, one of them a construction twin, every twin that ran bites, and at least one
was caught by the verdict (never by refusals alone). ``quick`` runs one construction twin per claim.
A growth twin (a resource inflated by a factor that grows with N) is also run with a constant factor in its
place (``constant_factor``): where the paper states no constant, a constant has the unbroken count's slope,
so a verdict that fails it too says the resource outgrows its bound unbroken (a real failure, shown by
``attnsim growth``); no break can show on top of it, and the growth twin counts as missed.

Before its twins, each claim's unbroken check runs on every point its twins run on (the *baseline*,
:func:`baseline_points`; growth twins judge a sweep and have their constant-factor contrast instead). A
baseline that does not pass is the claim failing, not its twins caught: the claim has no teeth to show
(:attr:`ClaimTeeth.problem`), whatever its twins did. Every twin and baseline runs in a forked child under the
check's memory backstop and time limit (:func:`attnsim.verify.isolate.in_child`), so exact arithmetic that
ends the process (GMP's abort) is a refused run with one line, not the end of the pass.
"""

from __future__ import annotations

import json
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, fields
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

from attnsim.sim.errors import AttnsimError
from attnsim.theory.symbolic import derived_here
from attnsim.verify.cache import set_aside, store, unseal
from attnsim.verify.check import run_check
from attnsim.verify.isolate import Isolated, in_child
from attnsim.verify.registry import UsageError, all_checkers
from attnsim.verify.twins import REFUSAL_KINDS, Twin, all_twins

MIN_TWINS = 2
OUTCOMES = ("caught", "refused", "missed", "crashed")


@dataclass(frozen=True)
class TwinResult:
    """What the check said of one twin: its ``outcome`` (one of :data:`OUTCOMES`) and why."""

    claim: str
    name: str
    what: str
    kind: str
    outcome: str
    reason: str
    seconds: float = 0.0
    constant_factor: str = ""  # a growth twin's contrast: the growth verdict on the resource x a constant

    @property
    def caught(self) -> bool:
        """The check's verdict failed on the broken variant."""
        return self.outcome == "caught"

    @property
    def refused(self) -> bool:
        """A guard, referee or assertion stopped the run before a verdict."""
        return self.outcome == "refused"

    @property
    def passed(self) -> bool:
        """A baseline run (the unbroken check) whose verdict passed."""
        return self.outcome == "passed"

    @property
    def bites(self) -> bool:
        """Caught by the verdict; for a declared refusal twin (a referee's limit), refused instead."""
        return self.refused if self.kind in REFUSAL_KINDS else self.caught

    def as_dict(self) -> dict[str, Any]:
        """The JSON form, with ``caught``, ``refused`` and ``bites`` spelled out."""
        return {**asdict(self), "caught": self.caught, "refused": self.refused, "bites": self.bites}


BASELINE = "baseline"
"""The name prefix and kind of a baseline run: a claim's unbroken check at one of its twins' points."""


def baseline_points(twins: Sequence[Twin]) -> list[tuple[dict[str, Any], str | None]]:
    """The distinct (parameters, numerics) its twins run the check on, growth twins aside, in twin order."""
    out: list[tuple[dict[str, Any], str | None]] = []
    for t in twins:
        point = (dict(t.params), t.numerics)
        if t.kind != "growth" and point not in out:
            out.append(point)
    return out


def baseline_name(params: dict[str, Any], numerics: str | None) -> str:
    """The key name of the baseline run at a point (it round-trips through :func:`baseline_point`)."""
    return f"{BASELINE} {json.dumps([params, numerics], sort_keys=True)}"


def baseline_point(name: str) -> tuple[dict[str, Any], str | None] | None:
    """The point of a baseline key name; None for a twin's name."""
    if not name.startswith(BASELINE + " "):
        return None
    params, numerics = json.loads(name[len(BASELINE) + 1:])
    return params, numerics


def run_baseline(claim: str, params: dict[str, Any], numerics: str | None, seed: int = 0) -> TwinResult:
    """The unbroken check of ``claim`` at one point: ``passed``, ``failed`` (its verdict), ``refused`` or
    ``crashed``."""
    start = time.perf_counter()
    what = f"the unbroken check at {params or 'its default point'}" + (f" ({numerics})" if numerics else "")

    def result(outcome: str, reason: str) -> TwinResult:
        return TwinResult(claim, baseline_name(params, numerics), what, BASELINE, outcome, reason,
                          round(time.perf_counter() - start, 2))

    try:
        record = run_check(claim, dict(params), numerics, seed)
    except (AttnsimError, AssertionError) as exc:
        return result("refused", f"refused: {exc}")
    except Exception as exc:  # noqa: BLE001 - a crash of the unbroken check is its failure, named
        return result("crashed", f"crashed ({type(exc).__name__}: {exc})")
    if record["verdict"] != "pass":
        return result("failed", "; ".join(record["reasons"]) or "verdict fail")
    return result("passed", "the check passes")


def run_twin(t: Twin, seed: int = 0) -> TwinResult:
    """Run ``t.claim``'s check with ``t``'s break applied and say how the run ended."""
    start = time.perf_counter()

    def result(outcome: str, reason: str, flat: str = "") -> TwinResult:
        return TwinResult(t.claim, t.name, t.what, t.kind, outcome, reason, round(time.perf_counter() - start, 2), flat)

    try:
        if t.kind == "growth":  # the growth verdict over the claim's quick growth sweep, and a constant's contrast
            from attnsim.verify.growth import judge_twin
            from attnsim.verify.twins.growth import CONSTANT, constant_contrast, resource_of, sweep_of

            res, sweep = resource_of(t.name), sweep_of(t.name)
            outcome, why = judge_twin(t.claim, res, t.breaks, seed, sweep)
            flat = constant_contrast(t.claim, res, seed, sweep) or ""
            if flat == "exceeds":  # a constant has the unbroken slope: the resource outgrows its bound unbroken
                outcome, why = "missed", (f"x{CONSTANT:g} (a constant) is judged exceeds too: {res} outgrows its bound "
                                          f"unbroken (a failing growth verdict: attnsim growth {t.claim}), so no break "
                                          f"can show; {why}")
            return result(outcome, why, flat)
        with derived_here() if t.kind == "formula" else nullcontext(), t.breaks():  # see derived_here
            record = run_check(t.claim, dict(t.params), t.numerics, seed)
    except (AttnsimError, AssertionError) as exc:
        return result("refused", f"refused: {exc}")
    except Exception as exc:  # noqa: BLE001 - a crash is reported as "not caught", never hidden
        return result("crashed", f"crashed ({type(exc).__name__}: {exc})")
    if record["verdict"] != "pass":
        return result("caught", "; ".join(record["reasons"]) or "verdict fail")
    return result("missed", "the check passed the broken variant")


@dataclass(frozen=True)
class ClaimTeeth:
    """A claim's twins and what the check said of each, after its baseline (see the module's docstring)."""

    claim: str
    registered: int
    results: tuple[TwinResult, ...]
    construction_twins: int
    baseline: tuple[TwinResult, ...] = ()

    @property
    def baseline_failing(self) -> list[TwinResult]:
        """The baseline runs that did not pass: the unbroken check fails (or cannot run) at a twin's point."""
        return [b for b in self.baseline if not b.passed]

    @property
    def caught(self) -> int:
        """How many of the twins that ran the check's verdict failed."""
        return sum(r.caught for r in self.results)

    @property
    def refused(self) -> int:
        """How many of the twins that ran were stopped by a refusal (whether or not that bites)."""
        return sum(r.refused for r in self.results)

    @property
    def bitten(self) -> int:
        """How many of the twins that ran bite: caught, or refused where refusal is their point."""
        return sum(r.bites for r in self.results)

    @property
    def ok(self) -> bool:
        """Enough twins, a construction twin among them, every one that ran bites, one caught by the verdict."""
        return self.problem is None

    @property
    def problem(self) -> str | None:
        """Why the claim has no teeth, in words (None when it has); a failing baseline comes first."""
        bad = self.baseline_failing
        if bad:
            first = bad[0]
            return (f"the claim fails unbroken (baseline): {len(bad)} of {len(self.baseline)} baseline run(s) not "
                    f"passing; first, {first.what}: {first.outcome}: {first.reason[:300]}")
        if self.registered < MIN_TWINS:
            return f"no teeth: {self.registered} broken variant(s) registered, {MIN_TWINS} needed"
        if not self.construction_twins:
            return "no teeth: no construction twin registered"
        missed = [f"{r.name} ({r.outcome})" for r in self.results if not r.bites]
        if missed:
            return f"broken variant(s) not caught: {', '.join(missed)}"
        if self.results and not self.caught:
            return "caught only by refusals: no broken variant made the check's verdict fail"
        return None

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``attnsim teeth --json`` and the report's cache)."""
        return {"claim": self.claim, "registered": self.registered, "run": len(self.results),
                "caught": self.caught, "refused": self.refused, "bitten": self.bitten,
                "construction_twins": self.construction_twins, "ok": self.ok, "problem": self.problem,
                "baseline_failing": len(self.baseline_failing),
                "baseline": [r.as_dict() for r in self.baseline], "twins": [r.as_dict() for r in self.results]}


def select_claims(selected: Sequence[str] | None) -> list[str]:
    """Claim ids with a checker: all, or those named (a claim id, or a paper such as ``two_heads``)."""
    checkers = list(all_checkers())
    if not selected:
        return checkers
    out: list[str] = []
    for name in selected:
        hits = [c for c in checkers if c == name or c.startswith(name + ".")]
        if not hits:
            from attnsim.paper_refs import papers

            raise UsageError(f"CLAIM: no checker for {name!r} (a claim id or a paper: {', '.join(papers())})")
        out += [c for c in hits if c not in out]
    return out


def quick_twin(twins: Sequence[Twin]) -> Twin | None:
    """The twin ``--quick`` runs for a claim: its first construction twin by name (else its first twin)."""
    built = [t for t in twins if t.kind == "construction"]
    return (built or list(twins) or [None])[0]


def plan(claims: Sequence[str], quick: bool = False) -> dict[str, tuple[int, list[Twin]]]:
    """Per claim: how many twins are registered and which run (``quick``: one construction twin)."""
    by_claim: dict[str, list[Twin]] = {c: [] for c in claims}
    for t in all_twins():
        if t.claim in by_claim:
            by_claim[t.claim].append(t)
    if not quick:
        return {c: (len(ts), ts) for c, ts in by_claim.items()}
    return {c: (len(ts), [t for t in [quick_twin(ts)] if t is not None]) for c, ts in by_claim.items()}


def run_key(key: tuple[str, str], seed: int = 0) -> TwinResult:
    """The twin or baseline run named by (claim, name), in a forked child under the check's guards: a child
    that ends the process or runs past the time limit is a refused run with one line."""
    claim, name = key
    point = baseline_point(name)
    if point is not None:
        what = f"the unbroken check of {claim}"
        work: tuple[Any, ...] = (run_baseline, claim, point[0], point[1], seed)
        kind, label = BASELINE, f"the unbroken check at {point[0] or 'its default point'}"
    else:
        t = {(t.claim, t.name): t for t in all_twins()}[key]
        what, work, kind, label = f"{claim}:{name}", (run_twin, t, seed), t.kind, t.what
    start = time.perf_counter()
    try:
        return in_child(*work, what=what)
    except Isolated as exc:
        return TwinResult(claim, name, label, kind, "refused", f"refused: {exc}", round(time.perf_counter() - start, 2))


def run_twin_chunk(keys: list[tuple[str, str]], _cache: str | None = None, seed: int = 0) -> list[TwinResult]:
    """A task of the sweep's executors: the twins and baseline runs named by (claim, name)."""
    return [run_key(key, seed) for key in keys]


def run_teeth(claims: Sequence[str], quick: bool = False, seed: int = 0,
              on_twin: Callable[[TwinResult], None] | None = None, *, executor: str = "serial",
              workers: int | None = None, scheduler: str | None = None) -> list[ClaimTeeth]:
    """Run the planned twins of ``claims`` on one of the sweep's executors (:func:`attnsim.verify.executors.run_tasks`);
    ``on_twin`` hears each result as it comes; results in plan order."""
    from attnsim.verify.executors import run_tasks

    planned = plan(claims, quick)
    task = run_twin_chunk if seed == 0 else partial(run_twin_chunk, seed=seed)
    done: list[TwinResult] = []
    for results in run_tasks(task, [[k] for k in twin_keys(planned)], executor=executor, workers=workers,
                             scheduler=scheduler):
        for r in results:
            done.append(r)
            if on_twin is not None:
                on_twin(r)
    return assemble(claims, planned, done)


def twin_keys(planned: dict[str, tuple[int, list[Twin]]]) -> list[tuple[str, str]]:
    """(claim, name) of every baseline run and twin a :func:`plan` runs: per claim its baseline first, then its
    twins, in plan order."""
    keys: list[tuple[str, str]] = []
    for claim, (_, twins) in planned.items():
        keys += [(claim, baseline_name(*p)) for p in baseline_points(twins)] + [(t.claim, t.name) for t in twins]
    return keys


def key_point(planned: dict[str, tuple[int, list[Twin]]], key: tuple[str, str]) -> tuple[dict[str, Any], str | None]:
    """The (parameters, numerics) a key of :func:`twin_keys` runs at (for a scheduler's cost estimate)."""
    point = baseline_point(key[1])
    if point is not None:
        return point
    t = next(t for t in planned[key[0]][1] if t.name == key[1])
    return dict(t.params), t.numerics


def assemble(claims: Sequence[str], planned: dict[str, tuple[int, list[Twin]]],
             results: Sequence[TwinResult]) -> list[ClaimTeeth]:
    """Each claim's teeth from the results of its planned twins (in plan order, whatever order they came in)."""
    built = {c: sum(t.kind == "construction" for t in all_twins() if t.claim == c) for c in claims}
    done = {(r.claim, r.name): r for r in results}
    return [ClaimTeeth(claim, registered, tuple(done[(t.claim, t.name)] for t in twins), built[claim],
                       tuple(done[(claim, baseline_name(*p))] for p in baseline_points(twins)))
            for claim, (registered, twins) in planned.items()]


def summary(results: Sequence[ClaimTeeth]) -> dict[str, Any]:
    """What a teeth pass shows in figures: twins run, caught and refused apart, those not caught; every bounded
    resource's growth twin and whether it was caught; the constant-factor contrasts (none may fail a bound whose
    constant the paper does not state); the claims caught only by refusals."""
    from attnsim.verify.growth import bounded_resources
    from attnsim.verify.twins.growth import resource_of

    ran = [r for c in results for r in c.results]
    growth = [r for r in ran if r.kind == "growth"]
    have = {(r.claim, resource_of(r.name)) for r in growth}
    bounded = [(c.claim, n) for c in results for n in bounded_resources(c.claim)]
    return {"twins": len(ran), "caught": sum(r.caught for r in ran), "refused": sum(r.refused for r in ran),
            "not_caught": [f"{r.claim}:{r.name} ({r.outcome})" for r in ran if not r.bites],
            "bounded_resources": len(bounded), "growth_twins": len(growth),
            "growth_caught": sum(r.caught for r in growth),
            "without_growth_twin": [f"{c}:{n}" for c, n in bounded if (c, n) not in have],
            "constant_factor_run": sum(bool(r.constant_factor) for r in growth),
            "constant_factor_failed": [f"{r.claim}:{resource_of(r.name)}" for r in growth
                                       if r.constant_factor == "exceeds"],
            "caught_only_by_refusals": [c.claim for c in results if c.results and not c.caught],
            "baseline_runs": sum(len(c.baseline) for c in results),
            "baseline_failing": [c.claim for c in results if c.baseline_failing],
            "without_teeth": [c.claim for c in results if not c.ok]}


def save(results: Sequence[ClaimTeeth], path: Path | str, version: str, quick: bool) -> None:
    """Write a teeth pass in the cache envelope (``verify/cache.py``, kind ``teeth``; read back by :func:`load`)."""
    path = Path(path)
    body = json.dumps({"quick": quick, "claims": [c.as_dict() for c in results]}, indent=1)
    store(path, "teeth", {"version": version}, body, path.parent)


def _claim_ok(c: Any) -> bool:
    """Whether a saved claim's entry is what its own twins make of it (counts, ok, problem all recomputed)."""
    try:
        names = [f.name for f in fields(TwinResult)]
        twins, baseline = (tuple(TwinResult(**{n: t[n] for n in names}) for t in c[part])
                           for part in ("twins", "baseline"))
        again = ClaimTeeth(c["claim"], c["registered"], twins, c["construction_twins"], baseline)
        return json.loads(json.dumps(again.as_dict())) == c
    except (KeyError, TypeError, ValueError):
        return False


def load(path: Path | str, version: str) -> dict[str, dict[str, Any]] | None:
    """A saved teeth pass of this code ``version`` keyed by claim; None when absent, stale or set aside
    (an entry that does not verify, or whose claims do not agree with themselves, is set aside)."""
    path = Path(path)
    text = unseal(path, "teeth", {"version": version}, path.parent)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    claims = data.get("claims") if isinstance(data, dict) else None
    if not isinstance(claims, list) or not all(_claim_ok(c) for c in claims):
        set_aside(path)
        return None
    return {c["claim"]: c for c in claims}
