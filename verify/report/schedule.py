"""The report's work as one graph of jobs that overlap, instead of phases that wait for each other.

Every job belongs to a *phase* (symbolic theory, checks and growth sweeps, broken variants, proofs, sections)
and says which *tokens* it needs: ``theory:<claim>`` (a check needs its claim's theory), ``checks:<claim>``
(a claim's section needs its records) and so on. A token is a count that the jobs providing it bring down;
it is met at zero (a token nobody expects is met from the start). A job runs as soon as what it needs is
met, the ready job of lowest *rank* first and among those the costliest, so the pool never waits for a whole
phase to end: a paper's sections are drawn while another paper's checks still run.

Lanes: ``main`` (the sweep's executor: theory, checks, sections), ``teeth`` (the broken variants, in worker
processes of their own, so that no process that ran a broken variant computes a record or a section
afterwards; the two pools share the ``workers`` CPUs) and ``local`` (a thread of this process: the proofs,
and work that must not run in a worker forked after it, such as torch's). With the ``processes`` executor
the pools stream: a finished job's worker takes the next ready job at once. The other executors run the
ready jobs of each lane in waves through :func:`attnsim.verify.executors.run_tasks` (one wave ends before the
next starts).

A job's inputs are built when it is submitted (``make``), so they can carry what finished before it, e.g.
the symbolic theory that a check's record needs (:func:`attnsim.theory.symbolic.remember` in the worker).
Each phase's wall time is from its first job's start to its last job's end, its CPU time the sum of its
jobs' (measured where they ran); phases overlap, so their walls add up to more than the total.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from typing import Any, Callable

from rich.console import Console

from attnsim.verify.executors import run_tasks
from attnsim.verify.procs import signals_deferred, stop_pool, worker_pool
from attnsim.verify.progress import progress

LANES = ("main", "teeth", "local")


@dataclass
class Job:
    """One task: ``fn(*make())`` in ``lane``, once every token of ``needs`` is met; ``done(result)`` in this
    process afterwards, then every token of ``provides`` is brought down by one."""

    phase: str
    fn: Callable[..., Any]
    make: Callable[[], tuple]
    done: Callable[[Any], None] = lambda _: None
    needs: tuple[str, ...] = ()
    provides: tuple[str, ...] = ()
    cost: float = 0.0
    rank: int = 0
    lane: str = "main"
    label: str = ""
    theories: Callable[[], list] = field(default=lambda: [])
    seconds: float = 0.0


def run_job(spec: tuple[Callable[..., Any], tuple, list], _cache: str | None = None) -> tuple[Any, float, float, float]:
    """A job where it runs: the theories it was given kept first, then ``fn(*args)``; with its start and end
    (epoch seconds, comparable across processes) and the CPU seconds it took."""
    fn, args, theories = spec
    if theories:
        from attnsim.theory.symbolic import remember

        remember(theories)
    start, cpu = time.time(), time.process_time()
    result = fn(*args)
    return result, start, time.time(), time.process_time() - cpu


def _run_local(spec: tuple[Callable[..., Any], tuple, list]) -> tuple[Any, float, float, float]:
    """A job of the local lane (a thread of this process): its CPU is the thread's."""
    fn, args, _ = spec
    start, cpu = time.time(), time.thread_time()
    result = fn(*args)
    return result, start, time.time(), time.thread_time() - cpu


def _in_thread(spec: tuple[Callable[..., Any], tuple, list]) -> Future:
    """A job of the local lane in a daemon thread (an interrupted report does not wait for it to end)."""
    fut: Future = Future()

    def work() -> None:
        try:
            fut.set_result(_run_local(spec))
        except BaseException as exc:  # noqa: BLE001 - handed to the report's loop, which raises it
            fut.set_exception(exc)

    threading.Thread(target=work, name="attnsim-report-local", daemon=True).start()
    return fut


def _chunk(specs: list[tuple[int, tuple]], _cache: str | None = None) -> list[tuple[int, tuple]]:
    """A task of :func:`run_tasks`: (index, outcome) of each job of a wave's chunk."""
    return [(i, run_job(s)) for i, s in specs]


@dataclass
class PhaseTime:
    """A phase's first start, last end, CPU seconds and jobs still to finish."""

    start: float = float("inf")
    end: float = 0.0
    cpu: float = 0.0
    left: int = 0

    @property
    def wall(self) -> float:
        """Seconds from the first job's start to the last job's end (0 when none ran)."""
        return max(0.0, self.end - self.start) if self.end else 0.0


class Graph:
    """Jobs, the tokens they need and provide, and their phases' times (see the module docstring)."""

    def __init__(self, console: Console | None, executor: str, workers: int, scheduler: str | None = None,
                 label: str = "checks and other report jobs") -> None:
        """Run on ``executor`` with ``workers`` workers; one progress line for all jobs on ``console``."""
        self.console, self.executor, self.workers, self.scheduler, self.label = (console, executor, workers,
                                                                                 scheduler, label)
        self.jobs: list[Job] = []
        self.tokens: dict[str, int] = {}
        self.phases: dict[str, PhaseTime] = {}
        self.after_forks: list[Job] = []
        self.timings: list[dict[str, Any]] = []

    def expect(self, token: str, count: int = 1) -> None:
        """``token`` is met once ``count`` more provided jobs have finished."""
        self.tokens[token] = self.tokens.get(token, 0) + count

    def phase(self, name: str) -> None:
        """Declare the phase ``name`` (in this order): it is reported, at 0 s, even when no job of it runs (its
        results came from a cache, or it was turned off)."""
        self.phases.setdefault(name, PhaseTime())

    def add(self, job: Job) -> None:
        """Schedule ``job`` (its phase's time starts counting when it starts)."""
        self.jobs.append(job)
        self.phases.setdefault(job.phase, PhaseTime()).left += 1

    def _ready(self, job: Job) -> bool:
        return all(self.tokens.get(t, 0) <= 0 for t in job.needs)

    def _finish(self, job: Job, outcome: tuple[Any, float, float, float]) -> None:
        result, start, end, cpu = outcome
        p = self.phases[job.phase]
        p.start, p.end, p.cpu, p.left = min(p.start, start), max(p.end, end), p.cpu + cpu, p.left - 1
        job.seconds = end - start
        self.timings.append({"phase": job.phase, "job": job.label or job.phase, "lane": job.lane,
                             "start": round(start, 3), "seconds": round(end - start, 3), "cpu": round(cpu, 3)})
        job.done(result)
        for t in job.provides:
            self.tokens[t] = self.tokens.get(t, 0) - 1
        if p.left == 0 and self.console is not None:
            self.console.print(f"phase {job.phase}: {p.wall:.1f} s (CPU {p.cpu:.1f} s)", markup=False,
                               highlight=False, soft_wrap=True)

    def _spec(self, job: Job) -> tuple[Callable[..., Any], tuple, list]:
        return job.fn, job.make(), job.theories()

    def run(self) -> None:
        """Run every job; returns when all have finished (an exception in one stops the others)."""
        if self.console is not None:
            for name, p in self.phases.items():
                if p.left == 0:
                    self.console.print(f"phase {name}: 0.0 s (CPU 0.0 s)", markup=False, highlight=False,
                                       soft_wrap=True)
        with progress(self.console, f"{self.label} ({self.executor})", len(self.jobs)) as bar:
            self._bar = bar
            if self.executor == "processes":
                self._stream()
            else:
                self._waves()

    def _take(self, waiting: list[Job], lanes: str | tuple[str, ...], n: int) -> list[Job]:
        """Up to ``n`` ready jobs of ``lanes``: the lowest rank first, then the costliest (removed from ``waiting``)."""
        lanes = (lanes,) if isinstance(lanes, str) else lanes
        ready = sorted((j for j in waiting if j.lane in lanes and self._ready(j)), key=lambda j: (j.rank, -j.cost))[:n]
        for j in ready:
            waiting.remove(j)
        return ready

    def _advance(self, job: Job) -> None:
        self._bar.advance(1, now=job.label or job.phase)

    def _waves(self) -> None:
        """Serial or Dask: each lane's ready jobs as one :func:`run_tasks` call, until none is left; the jobs that
        must follow the last fork (:attr:`after_forks`) once no other lane has any left (a later wave may start
        a Dask cluster's workers)."""
        waiting = list(self.jobs)
        while waiting:
            finished = 0
            for lane in LANES:
                wave = self._take(waiting, lane, len(waiting))
                if lane == "local":
                    others = any(w.lane != "local" for w in waiting)
                    waiting += [j for j in wave if j in self.after_forks and others]
                    for job in [j for j in wave if j not in self.after_forks or not others]:
                        self._finish(job, _run_local(self._spec(job)))
                        self._advance(job)
                        finished += 1
                    continue
                chunks = [[(i, self._spec(j))] for i, j in enumerate(wave)]
                for results in run_tasks(_chunk, chunks, executor=self.executor, workers=self.workers,
                                         scheduler=self.scheduler) if wave else ():
                    for i, outcome in results:
                        self._finish(wave[i], outcome)
                        self._advance(wave[i])
                        finished += 1
            if not finished:
                raise RuntimeError(f"report jobs wait on tokens never provided: {sorted(set(waiting[0].needs))}")

    def _stream(self) -> None:
        """Processes: a pool per process lane and a thread for the local lane. The two pools share ``workers + 1``
        jobs in flight (the costliest ready job of either lane next), so the CPUs are never oversubscribed
        and neither lane's tail runs on one worker while the other's are idle."""
        waiting = list(self.jobs)
        sizes = {"main": self.workers, "teeth": self.workers}
        pools: dict[str, Any] = {}
        running: dict[Future, tuple[Job, str]] = {}
        try:
            for lane in ("main", "teeth"):  # every worker forked now, before a local job starts a thread of its own
                if any(j.lane == lane for j in waiting):
                    pools[lane] = worker_pool(sizes[lane])
                    with signals_deferred():
                        pools[lane].submit(int)  # the first submit forks the pool's workers
            while waiting or running:
                busy = sum(1 for _, ln in running.values() if ln != "local")
                for job in self._take(waiting, ("main", "teeth"), max(0, self.workers + 1 - busy)):
                    with signals_deferred():  # a submit may fork a worker: none is born with Ctrl-C armed
                        running[pools[job.lane].submit(run_job, self._spec(job))] = (job, job.lane)
                if not any(ln == "local" for _, ln in running.values()):
                    for job in self._take(waiting, "local", 1):
                        if job in self.after_forks and not self._forked(pools, sizes, waiting):
                            waiting.append(job)  # torch after the last fork: no worker may be forked after it
                            break
                        running[_in_thread(self._spec(job))] = (job, "local")
                if not running:
                    raise RuntimeError(f"report jobs wait on tokens never provided: {sorted(waiting[0].needs)}")
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    job, _ = running.pop(fut)
                    self._finish(job, fut.result())
                    self._advance(job)
        except BaseException:
            for pool in pools.values():
                stop_pool(pool)
            raise
        for pool in pools.values():
            pool.shutdown(wait=True)

    def _forked(self, pools: dict[str, Any], sizes: dict[str, int], waiting: list[Job]) -> bool:
        """Whether no process lane will fork another worker: each is full, or has no job left to run."""
        for lane, size in sizes.items():
            left = any(j.lane == lane for j in waiting)
            full = lane in pools and len(getattr(pools[lane], "_processes", {}) or {}) >= size
            if left and not full:
                return False
        return True

    def line(self) -> str:
        """``name X s, ...`` in the order the phases were first scheduled."""
        return ", ".join(f"{name} {p.wall:.0f} s" for name, p in self.phases.items())

    def seconds(self) -> dict[str, float]:
        """Every phase's wall seconds."""
        return {name: p.wall for name, p in self.phases.items()}
