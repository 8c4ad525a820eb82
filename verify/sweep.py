"""Sweeps: a grid of parameters × numerics × seeds → check records, on a chosen executor.

Executors (:mod:`attnsim.verify.executors`): ``serial``, ``processes`` and ``dask``. Work is sent in chunks
of several checks (one task each), and results stream back as chunks finish, under a progress bar with an
ETA (plain lines off a terminal).

Resumable cache (``verify/cache.py``): every record is stored under ``<cache>/<key[:2]>/<key>.json``,
where the key is a hash of claim + parameters + numerics + seed + the code version (a hash of attnsim's
own source and claim files), in an envelope that carries that key and a checksum. A sweep restarted with
the same arguments computes only the records that are missing; an entry that does not verify is set
aside (renamed ``*.bad``), counted in :attr:`SweepResult.set_aside` and computed again. A spot audit
(``plan(..., audit=K)``) computes again K cached records drawn at random, each run a different draw, and
lists every one whose deterministic part differs from what the cache held
(:attr:`SweepResult.audit_failures`): the fresh record is the one returned and stored.
Each record is written atomically (temporary file, then rename) by the worker as soon as it is
computed — and again by the driver when the chunk comes back, for clusters that do not share the
cache's file system — so a crash or an interrupt loses no finished record.

Records are normalised through JSON, so a fresh record, a cached one and one from another executor
are equal objects; ``sweep`` returns them in grid order, whatever order they finished in.
"""

from __future__ import annotations

import hashlib
import importlib
import math
import random
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence

from rich.console import Console

from attnsim.sim.errors import AttnsimError
from attnsim.verify.cache import Cache, atomic_write, point_key
from attnsim.verify.executors import check_executor, reachable, run_tasks
from attnsim.verify.guards import check_workers
from attnsim.verify.limits import out_of_memory
from attnsim.verify.progress import progress
from attnsim.verify.records import normalise, split_varying
from attnsim.verify.registry import NO_NUMERICS, ResumableError, UsageError, all_checkers

__all__ = ["Cache", "Point", "SweepResult", "atomic_write", "code_version", "grid", "run_point", "sweep"]

_PACKAGES = ("attnsim", "attnsim.sim", "attnsim.theory", "attnsim.verify", "attnsim.paper_refs")


@dataclass(frozen=True)
class Point:
    """One check of a sweep. ``numerics`` None means the checker's default."""

    claim: str
    params: dict[str, Any] = field(hash=False)
    numerics: str | None = None
    seed: int = 0

    def fields(self) -> dict[str, Any]:
        """What the cache key hashes, besides the code version: the whole question, with every parameter
        after the checker's defaults and the numerics it runs in (``none`` for a counting claim)."""
        params, numerics = resolved(self.claim, self.params, self.numerics)
        return {"claim": self.claim, "params": params, "numerics": numerics, "seed": self.seed}

    def key(self, version: str) -> str:
        """The cache key of this check under code ``version``."""
        return point_key(self.fields(), version)


def resolved(claim: str, params: dict[str, Any], numerics: str | None) -> tuple[dict[str, Any], str | None]:
    """``params`` after the checker's defaults and ``numerics`` after its default, as a record states them
    (unchanged when the claim has no checker or a value is out of its domain: that record is an error)."""
    chk = all_checkers().get(claim)
    if chk is None:
        return params, numerics
    try:
        full = chk.resolve(params)
    except UsageError:
        full = params
    if not chk.numerics:
        return full, NO_NUMERICS if numerics is None else numerics
    return full, chk.default_numerics if numerics is None else numerics


@lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of every source and claim file of the installed attnsim (changes when the code does)."""
    h = hashlib.sha256()
    for pkg in _PACKAGES:
        for root in importlib.import_module(pkg).__path__:
            for path in sorted(Path(root).rglob("*")):
                if path.suffix in (".py", ".toml") and "__pycache__" not in path.parts:
                    h.update(str(path.relative_to(root)).encode())
                    h.update(path.read_bytes())
    return h.hexdigest()[:16]


def grid(claims: Sequence[str] | None = None, quick: bool = False, seeds: Sequence[int] | None = None,
         numerics: Sequence[str] | None = None) -> list[Point]:
    """Every checker's default grid (``quick`` or full), times ``seeds`` and ``numerics`` when given.

    A grid point that pins its own numerics or seed keeps it; ``seeds``/``numerics`` multiply the
    points that do not.
    """
    checkers = all_checkers()
    unknown = [c for c in claims or () if c not in checkers]
    if unknown:
        raise UsageError(f"--claim: no checker for {', '.join(unknown)}")
    points = []
    for claim, chk in checkers.items():
        if claims and claim not in claims:
            continue
        for raw in chk.grid(quick):
            params = dict(raw)
            pinned_nm = params.pop("numerics", None)
            pinned_seed = params.pop("seed", None)
            for nm in [pinned_nm] if pinned_nm or not numerics else list(numerics):
                for seed in [pinned_seed] if pinned_seed is not None or not seeds else list(seeds):
                    points.append(Point(claim, params, nm, int(seed or 0)))
    return points


def run_point(point: Point) -> dict[str, Any]:
    """One check; a bad grid point becomes a failing record with its reason, not a crash."""
    from attnsim.verify.check import run_check

    try:
        rec = run_check(point.claim, point.params, point.numerics, point.seed)
    except (AttnsimError, MemoryError) as exc:
        why = str(exc) if isinstance(exc, AttnsimError) else out_of_memory().removeprefix("error: ")
        rec = {**point.fields(), "verdict": "fail", "reasons": [f"error: {why}"], "counts": {}, "predicted": {},
               "bounds": {}, "agree": None}
    return normalise(rec)


def run_chunk(items: list[tuple[str, Point]], cache_root: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """A task: several checks; each record is cached the moment it exists (when the cache is reachable).
    Claims that share a construction measure it once in the task (:func:`_chunks` puts their points in one)."""
    from attnsim.verify.check import measurements_shared

    cache = Cache(cache_root) if cache_root else None
    out = []
    with measurements_shared():
        for key, point in items:
            rec = run_point(point)
            if cache is not None:
                try:
                    cache.put(key, point.fields(), code_version(), rec)
                except OSError:  # a remote worker without the driver's file system: the driver writes it
                    cache = None
            out.append((key, rec))
    return out


@dataclass
class SweepResult:
    """Every record in grid order; how many were computed, read from the cache, and set aside as bad."""

    records: list[dict[str, Any]]
    computed: int
    cached: int
    set_aside: int = 0
    audited: int = 0
    audit_failures: list[dict[str, Any]] = field(default_factory=list)
    """Failing records, one per audited entry whose fresh record differs from the cached one."""


TaskHook = Callable[[int], None]  # called with the number of finished tasks after each task


def expected_seconds(item: tuple[str, Point]) -> float:
    """The check's time by its claim's cost model (:func:`attnsim.verify.cost.estimate`; 0 where it has none):
    only the order in which a pool takes the checks."""
    from attnsim.verify.cost import estimate

    point = item[1]
    try:
        params, numerics = resolved(point.claim, point.params, point.numerics)
        return float(estimate(point.claim, params, numerics).seconds or 0.0)
    except (AttnsimError, ArithmeticError, TypeError, ValueError):
        return 0.0


def _shared_key(point: Point) -> str | None:
    """The key of the measurement ``point`` shares with other claims' points (None: its own)."""
    from attnsim.verify.check import share_key

    chk = all_checkers().get(point.claim)
    if chk is None or chk.shares is None:
        return None
    params, numerics = resolved(point.claim, point.params, point.numerics)
    return share_key(chk, params, numerics, point.seed)


def _chunks(items: list[tuple[str, Point]], size: int) -> list[list]:
    """``items`` in tasks of about ``size`` checks, in order; the points of claims that share one measurement
    (:func:`_shared_key`) join the task of the first of them, so it is made once."""
    units: dict[Any, list] = {}
    for n, item in enumerate(items):
        units.setdefault(_shared_key(item[1]) or n, []).append(item)
    chunks: list[list] = []
    for unit in units.values():
        if not chunks or len(chunks[-1]) >= size:
            chunks.append([])
        chunks[-1].extend(unit)
    return chunks


@dataclass
class Planned:
    """A sweep before it runs: every (key, point) in grid order, the records the cache already holds, the
    unique points still to compute (``todo``) and where their records go (:meth:`put`)."""

    keyed: list[tuple[str, Point]]
    results: dict[str, dict[str, Any]]
    todo: list[tuple[str, Point]]
    store: Cache | None
    version: str
    cached: int
    audited: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The cached records drawn for the spot audit, by key (they are in ``todo`` too)."""
    audit_failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def cache_root(self) -> str | None:
        """The cache folder the workers write records into (None without a cache)."""
        return str(self.store.root) if self.store else None

    def put(self, key: str, rec: dict[str, Any]) -> None:
        """Keep a computed record (and write it to the cache, for workers that could not)."""
        if self.store is not None:
            self.store.put(key, self.by_key[key].fields(), self.version, rec)
        held = self.audited.get(key)
        if held is not None and split_varying(held)[0] != split_varying(rec)[0]:
            fresh = split_varying(rec)[0]
            differ = sorted(k for k in set(fresh) | set(held) if fresh.get(k) != held.get(k) and k != "varying")
            self.audit_failures.append({**self.by_key[key].fields(), "verdict": "fail", "counts": {},
                                        "predicted": {}, "bounds": {}, "agree": None,
                                        "reasons": ["spot audit: the cached record differs from the one computed "
                                                    f"again (fields {', '.join(differ)}); the fresh one is "
                                                    "reported"]})
        self.results[key] = rec

    @cached_property
    def by_key(self) -> dict[str, Point]:
        """Each point by its key."""
        return dict(self.keyed)

    def resumable(self, exc: ResumableError) -> ResumableError:
        """``exc`` saying what the cache holds and that the same command resumes."""
        saved = (f"{len(self.results)} of {self.cached + len(self.todo)} records are in the cache" if self.store
                 else "no cache (--no-cache)")
        return ResumableError(f"{exc}; {saved}; run the same command again to resume")

    def result(self) -> SweepResult:
        """Every record in grid order."""
        return SweepResult([self.results[k] for k, _ in self.keyed], computed=len(self.todo) - len(self.audited),
                           cached=self.cached, set_aside=len(self.store.set_aside) if self.store else 0,
                           audited=len(self.audited), audit_failures=list(self.audit_failures))


def plan(points: Sequence[Point], cache: Path | str | None = None, audit: int = 0) -> Planned:
    """Key ``points``, read what the cache holds, and list the unique points left to compute; ``audit`` cached
    records, drawn at random (a fresh draw each run), are computed again and compared (:meth:`Planned.put`)."""
    version = code_version()
    keyed = [(p.key(version), p) for p in points]
    store = Cache(cache) if cache is not None else None
    results: dict[str, dict[str, Any]] = {}
    todo: list[tuple[str, Point]] = []
    seen: set[str] = set()
    for key, point in keyed:
        if key in seen:
            continue
        seen.add(key)
        hit = store.get(key, point.fields(), version) if store else None
        if hit is not None:
            results[key] = hit
        else:
            todo.append((key, point))
    drawn = random.SystemRandom().sample(sorted(results), min(max(0, audit), len(results)))
    by_key = dict(keyed)
    todo += [(key, by_key[key]) for key in drawn]
    return Planned(keyed, results, todo, store, version, len(results), {key: results[key] for key in drawn})


def sweep(points: Sequence[Point], *, executor: str = "serial", workers: int | None = None,
          scheduler: str | None = None, cache: Path | str | None = None, chunk_size: int | None = None,
          console: Console | None = None, on_task: TaskHook | None = None, audit: int = 0) -> SweepResult:
    """Run ``points`` (cached records are reused; ``audit`` of them, drawn at random, are computed again and
    compared) and return every record in grid order."""
    check_executor(executor)
    if scheduler and executor != "dask":
        raise UsageError("--scheduler: only with --executor dask")
    workers = check_workers(workers)
    planned = plan(points, cache, audit)
    todo, cached = list(planned.todo), planned.cached
    if scheduler and todo:
        reachable(scheduler)  # before the progress starts: an unreachable scheduler is one line, no progress
    if executor == "processes" and chunk_size is None:  # one check a task, the costliest first: no long tail
        todo.sort(key=expected_seconds, reverse=True)
        chunk_size = 1
    size = chunk_size or max(1, math.ceil(len(todo) / (4 * workers)))
    chunks = _chunks(todo, size)
    with progress(console, f"checks ({executor}, {cached} cached)", len(todo)) as bar:
        try:
            results = run_tasks(run_chunk, chunks, executor=executor, workers=workers, scheduler=scheduler,
                                cache_root=planned.cache_root)
            for done_tasks, chunk_result in enumerate(results, 1):
                for key, rec in chunk_result:
                    planned.put(key, rec)
                bar.advance(len(chunk_result))
                if on_task is not None:
                    on_task(done_tasks)
        except ResumableError as exc:
            raise planned.resumable(exc) from None
    return planned.result()
