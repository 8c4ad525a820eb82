"""Fuzz one claim's check with hypothesis: its own parameter domains, its inputs (through the seed), a database.

Every example is an ordinary check (:func:`attnsim.verify.check.run_check`) at parameters drawn from the
claim's :class:`~attnsim.verify.registry.Param` domains (near the default sizes, so that an example takes
about as long as the default check) and a seed that draws its inputs. A failing verdict (or a crash) is a
failure: hypothesis shrinks it to a small case (for at most :data:`SHRINK_SECONDS`), which is printed as the
``attnsim check ...`` command that replays it and saved as a record. Bad input that a guard refuses (a size
that does not divide, a cost past the limit) is not a failure: hypothesis rejects the example and draws
another. Drawn values that break a relation between two parameters (:mod:`attnsim.verify.relations`: heads that
must divide the width, a block at most the tokens) are first moved to the nearest value that keeps it, and each
rejection is tallied by what refused it (:attr:`FuzzResult.rejected_by`).

``hypothesis.target()`` climbs toward the worst case of the chosen ``target``:

- ``error``: the bits lost — the fewest bits of agreement with the reference (approximate numerics; exact
  numerics agree with ``==`` or fail);
- ``cost``: the largest measured / bound over the claim's bounded resources (the constant the paper's O(·)
  hides, at that example's size).

Examples found failing (and, for targets, the best ones) persist in a hypothesis database under the output
folder, so a second run replays them first.
"""

from __future__ import annotations

import math
import re
import shlex
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from hypothesis import HealthCheck, Phase, given, reject, settings, target
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import Flaky, Unsatisfiable
from hypothesis.reporting import with_reporter

from attnsim.sim.errors import AttnsimError
from attnsim.verify.registry import INT_MAX, Checker, Param, UsageError, get_checker
from attnsim.verify.relations import kept

TARGETS = ("error", "cost")
CHUNK = 25
"""Examples per hypothesis run; a time-limited fuzz runs chunks until its time is up (the database carries
what each chunk found into the next)."""


def param_strategy(p: Param, seen: list[Any] | None = None) -> st.SearchStrategy[Any]:
    """Values of ``p`` inside its domain, at the scale its claim's quick grid runs (``seen``: the values the grid
    gives ``p``, in every grid point or not at all; the default when it gives none): integers from the minimum
    to twice the largest, reals from a quarter of the smallest to twice the largest, both truth values, and
    every choice, powers of two where only those are allowed — unless every grid point pins ``p``, to the choices
    it pins (a costly named case stays out)."""
    seen = [v for v in (seen or []) if v is not None]
    if p.choices is not None:
        pinned = sorted({*seen, p.default}, key=list(p.choices).index) if seen else list(p.choices)
        return st.sampled_from([p.default, *[c for c in pinned if c != p.default]])
    if p.type is bool:
        return st.booleans()
    if p.default is None or p.type is str:
        return st.just(p.default)
    scale = [v for v in (seen or [p.default]) if isinstance(v, (int, float))]
    upper = p.upper if p.upper is not None else INT_MAX
    if p.power_of_two:  # 2^a from the least the minimum allows to twice the largest seen
        least = max(0, math.ceil(math.log2(max(p.minimum or 1, 1))))
        most = max(least, min(math.floor(math.log2(upper)), math.ceil(math.log2(max(max(scale), 1))) + 1))
        return st.integers(least, most).map(lambda a: 2 ** a)
    if p.type is int:
        low = int(p.minimum) if p.minimum is not None else min(0, *scale)
        return st.integers(low, int(max(low, min(upper, max(low + 4, 2 * max(scale))))))
    low_f = max(p.minimum if p.minimum is not None else -upper, min(scale) / 4 if min(scale) > 0 else min(scale))
    high_f = max(low_f, min(upper, 2 * max(scale) if max(scale) > 0 else max(scale)))
    return st.floats(low_f, high_f, allow_nan=False, allow_infinity=False)


def anchored_params(chk: Checker, free: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Parameters near a point of the claim's quick grid (its defaults where the point is silent): each parameter
    keeps the point's value, takes a value another grid point gives it, or is drawn freely (``free``). Joint
    conditions that the grid's points meet and independent draws rarely do (N a power of two that P divides, a
    memory between the key size and N) then hold for most examples, and shrinking leads back to the grid."""
    defaults = {p.name: p.default for p in chk.params}
    points = [defaults | pt for pt in chk.grid(True)] or [defaults]
    others = {p.name: sorted({pt[p.name] for pt in points if pt.get(p.name) is not None}, key=repr)
              for p in chk.params}

    @st.composite
    def near_a_point(draw: st.DrawFn) -> dict[str, Any]:
        point = draw(st.sampled_from(points))
        params = {}
        for p in chk.params:
            how = draw(st.sampled_from(("keep", "other", "free")))
            if how == "free":
                params[p.name] = draw(free[p.name])
            elif how == "other" and others[p.name]:
                params[p.name] = draw(st.sampled_from(others[p.name]))
            else:
                params[p.name] = point[p.name]
        return params

    return near_a_point()


def grid_values(chk: Checker) -> dict[str, list[Any]]:
    """Per parameter, the values the claim's quick grid gives it when every point gives one (else none)."""
    points = chk.grid(True)
    return {p.name: [pt[p.name] for pt in points] for p in chk.params if points and all(p.name in pt for pt in points)
            } | {p.name: [pt[p.name] for pt in points if p.name in pt] for p in chk.params
                 if p.choices is None and any(p.name in pt for pt in points)}


def replay_command(claim: str, params: dict[str, Any], numerics: str | None, seed: int) -> str:
    """The ``attnsim check`` command line that runs this example again."""
    chk = get_checker(claim)
    parts = ["attnsim", "check", claim]
    for p in chk.params:
        value = params.get(p.name)
        if value is not None:
            parts += [p.flag, str(value).lower() if isinstance(value, bool) else repr(value) if p.type is float
                      else str(value)]
    if numerics is not None and chk.numerics:
        parts += ["--numerics", numerics]
    return shlex.join(parts + ["--seed", str(seed)])


@dataclass
class Failure:
    """One shrunk failing example: its parameters, the replay command, and the record (None after a crash)."""

    params: dict[str, Any]
    seed: int
    command: str
    reasons: list[str]
    record: dict[str, Any] | None = None


@dataclass
class FuzzResult:
    """What a fuzz run saw: examples run and rejected, the worst target values and where, the failures."""

    claim: str
    target: str
    numerics: str | None
    examples: int = 0
    rejected: int = 0
    cut: int = 0
    """Examples still running when the time was up (stopped, counted among the rejected)."""
    rejected_by: dict[str, int] = field(default_factory=dict)
    """The rejected examples by what refused them (:func:`rejection`), so that a run that rejects most of what
    it draws says which guard does."""
    seconds: float = 0.0
    worst_bits: float | None = None
    worst_bits_at: str | None = None
    worst_ratio: float | None = None
    worst_ratio_at: str | None = None
    failures: list[Failure] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No failure found."""
        return not self.failures

    def reject(self, why: str) -> None:
        """Count one rejected example under what refused it (:func:`rejection`)."""
        self.rejected += 1
        self.rejected_by[why] = self.rejected_by.get(why, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {k: v for k, v in self.__dict__.items() if k != "failures"} | {
            "failures": [{"params": f.params, "seed": f.seed, "command": f.command, "reasons": f.reasons}
                         for f in self.failures]}


def rejection(exc: BaseException) -> str:
    """What refused an example, with its numbers left out so that refusals by one guard count together: the
    parameter and message of a guard's error, or that the fuzz's time ran out."""
    if isinstance(exc, OutOfTime):
        return "still running when the time was up"
    return re.sub(r"-?\d+(\.\d+)?(e[+-]?\d+)?", "#", str(exc))[:120]


TOO_LONG = "estimated to take longer than the whole fuzz"
"""The rejection of an example whose cost estimate (``verify.cost``) exceeds the fuzz's whole time: it is not run,
since it could only be stopped (a wide TinT case in exact numerics takes more than ten minutes). One that exceeds
only what is left of the time is not run either, and not tallied, like an example drawn after the time is up."""


def _estimated_seconds(chk: Checker, params: dict[str, Any], numerics: str | None) -> float:
    """The cost model's seconds for an example (0 where the parameters do not resolve: the check refuses them)."""
    from attnsim.verify.cost import estimate

    try:
        return estimate(chk.claim, chk.resolve(params), numerics).seconds or 0.0
    except AttnsimError:
        return 0.0


def worst_ratio(record: dict[str, Any]) -> float | None:
    """The largest measured / bound of a record's bounded resources (None without one)."""
    ratios = [b["ratio"] for b in record["bounds"].values() if isinstance(b.get("ratio"), (int, float))
              and math.isfinite(b["ratio"])]
    return max(ratios) if ratios else None


def fuzz(claim_id: str, *, examples: int | None = None, minutes: float | None = None, target_kind: str = "error",
         numerics: str | None = None, out: Path | str | None = None, derandomize: bool = False,
         on_example: Callable[[FuzzResult], None] | None = None) -> FuzzResult:
    """Fuzz ``claim_id`` for ``examples`` examples or ``minutes`` of wall time (exactly one of them) and return
    what was found. ``out``: the folder of the example database and the failing records (None: no database)."""
    if (examples is None) == (minutes is None):
        raise UsageError("give exactly one of minutes and examples", param="minutes/examples")
    if examples is not None and not 1 <= examples <= 10 ** 6:
        raise UsageError(f"must be 1 to 1000000, got {examples}", param="examples")
    if minutes is not None and not 0 < minutes <= 24 * 60:
        raise UsageError(f"must be more than 0 and at most 1440, got {minutes}", param="minutes")
    if target_kind not in TARGETS:
        raise UsageError(f"must be one of {', '.join(TARGETS)}; got {target_kind!r}", param="target")
    chk = get_checker(claim_id)
    from attnsim.verify.check import check_numerics

    check_numerics(chk, numerics, None)
    result = FuzzResult(claim_id, target_kind, (numerics or chk.default_numerics) if chk.numerics else None)
    folder = Path(out) if out is not None else None
    database = (DirectoryBasedExampleDatabase(str(folder / "hypothesis-db"))
                if folder is not None and not derandomize else None)  # a derandomized run replays nothing
    start = time.monotonic()
    stop = None if minutes is None else start + 60 * minutes
    for budget in _chunks(examples, stop):
        found = _run_chunk(chk, result, budget, stop, 60 * (minutes or 0), database, derandomize, on_example)
        result.seconds = time.monotonic() - start
        if found is not None:
            result.failures.append(found)
            break
    if folder is not None:
        _save_failures(folder, result)
    return result


def _chunks(examples: int | None, stop: float | None) -> Iterator[int]:
    if examples is not None:
        yield examples
        return
    while stop is not None and time.monotonic() < stop:
        yield CHUNK


def _run_chunk(chk: Checker, result: FuzzResult, budget: int, stop: float | None, span: float, database: Any,
               derandomize: bool, on_example: Callable[[FuzzResult], None] | None) -> Failure | None:
    from attnsim.verify.check import run_check

    last: list[Failure] = []
    shrink_stop: list[float | None] = [None]

    def _failed(failure: Failure) -> None:
        if not last:
            shrink_stop[0] = time.monotonic() + SHRINK_SECONDS
        last.append(failure)

    seen = grid_values(chk)
    strategies = {p.name: param_strategy(p, seen.get(p.name)) for p in chk.params}

    def deadline() -> float | None:
        """Before a failure: until the fuzz's time is up; after one, its shrinking until SHRINK_SECONDS later."""
        return stop if not last else shrink_stop[0]

    def time_up() -> bool:
        until = deadline()
        return until is not None and time.monotonic() > until

    @settings(max_examples=budget, deadline=None, database=database, derandomize=derandomize,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
              phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink])
    @given(st.one_of(anchored_params(chk, strategies), st.fixed_dictionaries(strategies))
           .map(lambda params: params if time_up() else kept(chk, params, result.numerics)),
           st.integers(0, 2 ** 32 - 1))
    def example(params: dict[str, Any], seed: int) -> None:
        # a draw after the time is up is not moved into the relations (which can cost a relation's search) nor run
        until = deadline()
        if time_up():
            reject()
        command = replay_command(chk.claim, params, result.numerics, seed)
        cost = _estimated_seconds(chk, params, result.numerics) if until is not None else 0.0
        if until is not None and cost > until - time.monotonic():  # it could only be stopped: not run
            if cost > span:  # longer than the whole run, not only than what is left of it: a rejection of its own
                result.reject(TOO_LONG)
            reject()
        try:
            with _time_box(until):
                record = run_check(chk.claim, params, result.numerics, seed)
        except (AttnsimError, OutOfTime) as exc:  # a guard's refusal (not the claim's domain, past the cost limit)
            result.reject(rejection(exc))  # or an example still running when the time is up: drawn again, not failed
            if isinstance(exc, OutOfTime):
                result.cut += 1
            reject()
        except Exception as exc:  # a crash is a failure too (bad input gets one line, never a traceback)
            _failed(Failure(params, seed, command, [f"crashed: {type(exc).__name__}: {exc}"]))
            raise
        result.examples += 1
        _note_targets(result, record, command)
        if on_example is not None:
            on_example(result)
        if record["verdict"] != "pass":
            _failed(Failure(params, seed, command, list(record["reasons"]), record))
            raise AssertionError(f"{command}: {'; '.join(record['reasons'])}")

    try:
        with with_reporter(lambda message: None):  # the failure is printed as its replay command instead
            example()
    except Unsatisfiable:  # the time ran out before any example of this chunk ran
        return None
    except Exception as exc:
        if last:
            return last[-1]  # the smallest failing example shrinking reached (hypothesis replays it last)
        if isinstance(exc, Flaky) and stop is not None and time.monotonic() > stop:
            return None  # hypothesis replayed a passing example after the time ran out: the replay was refused
        raise
    return None


SHRINK_SECONDS = 120.0
"""How long a failure found is shrunk at most: after that, hypothesis's further candidates are refused and the
smallest failing example reached is reported (shrinking a check that takes seconds can otherwise run for an hour,
however short ``--minutes``)."""

ALARM_REPEAT = 1.0
"""Seconds between the repeats of an example's time-out alarm (:func:`_time_box`)."""


class OutOfTime(BaseException):
    """The fuzz's time ran out inside an example (a BaseException, so that no ``except Exception`` in a check
    takes it for the check's own error)."""


@contextmanager
def _time_box(stop: float | None) -> Iterator[None]:
    """Interrupt the block with :class:`OutOfTime` at ``stop`` (monotonic seconds; None: no limit), so that
    ``--minutes T`` ends near T even when one example takes far longer than its cost estimate. Only the main
    thread can take the alarm; elsewhere the block runs to its end. The alarm repeats every
    ``ALARM_REPEAT`` seconds until the block ends: Python swallows an exception raised where it cannot propagate
    (a garbage collector's callback, a finaliser), and the next alarm then stops the block."""
    if stop is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def alarm(signum: int, frame: Any) -> None:
        raise OutOfTime()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, max(stop - time.monotonic(), 1e-3), ALARM_REPEAT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _note_targets(result: FuzzResult, record: dict[str, Any], command: str) -> None:
    bits = record.get("error_bits")
    if isinstance(bits, (int, float)) and not math.isnan(bits):
        if result.worst_bits is None or bits < result.worst_bits:
            result.worst_bits, result.worst_bits_at = float(bits), command
        if result.target == "error" and math.isfinite(bits):
            target(-float(bits), label="bits of agreement (negated)")
    ratio = worst_ratio(record)
    if ratio is not None:
        if result.worst_ratio is None or ratio > result.worst_ratio:
            result.worst_ratio, result.worst_ratio_at = ratio, command
        if result.target == "cost":
            target(ratio, label="measured / bound")


def _save_failures(folder: Path, result: FuzzResult) -> None:
    from attnsim.verify.records import dumps

    for i, f in enumerate(result.failures):
        path = folder / "failures" / f"{result.claim}-{i + 1}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dumps({"command": f.command, "reasons": f.reasons, "record": f.record}, indent=2) + "\n")
