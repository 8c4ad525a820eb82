"""Sweeps: a grid of parameters × numerics × seeds → check records, on a chosen executor.

Executors: ``serial`` (in this process), ``processes`` (a local process pool) and ``dask``
(``dask.distributed``: an embedded ``LocalCluster`` by default, or an existing cluster given as
``scheduler="tcp://host:port"``). Work is sent in chunks of several checks (one task each), and
results stream back as chunks finish, under a progress bar with an ETA (plain lines off a terminal).

Resumable cache: every record is stored under ``<cache>/<key[:2]>/<key>.json``, where the key is a
hash of claim + parameters + numerics + seed + the code version (a hash of attnsim's own source and
claim files). A sweep restarted with the same arguments computes only the records that are missing.
Each record is written atomically (temporary file, then rename) by the worker as soon as it is
computed — and again by the driver when the chunk comes back, for clusters that do not share the
cache's file system — so a crash or an interrupt loses no finished record.

Records are normalised through JSON, so a fresh record, a cached one and one from another executor
are equal objects; ``sweep`` returns them in grid order, whatever order they finished in.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import tempfile
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from rich.console import Console

from attnsim.sim.errors import AttnsimError
from attnsim.verify.progress import progress
from attnsim.verify.records import dumps, loads, normalise
from attnsim.verify.registry import UsageError, all_checkers

EXECUTORS = ("serial", "processes", "dask")
_PACKAGES = ("attnsim", "attnsim.sim", "attnsim.theory", "attnsim.verify", "attnsim.paper_refs")


@dataclass(frozen=True)
class Point:
    """One check of a sweep. ``numerics`` None means the checker's default."""

    claim: str
    params: dict[str, Any] = field(hash=False)
    numerics: str | None = None
    seed: int = 0

    def key(self, version: str) -> str:
        """The cache key of this point under a code version."""
        blob = json.dumps([self.claim, self.params, self.numerics, self.seed, version], sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()


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
    except AttnsimError as exc:
        rec = {"claim": point.claim, "params": point.params, "numerics": point.numerics, "seed": point.seed,
               "verdict": "fail", "reasons": [f"error: {exc}"], "counts": {}, "predicted": {}, "bounds": {},
               "agree": None}
    return normalise(rec)


def atomic_write(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class Cache:
    """One JSON file per record, keyed by :meth:`Point.key`."""

    def __init__(self, root: Path | str):
        """A record cache under ``root``."""
        self.root = Path(root)

    def path(self, key: str) -> Path:
        """Where the record of ``key`` is stored."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached record of ``key``, or None (missing or unreadable)."""
        try:
            return loads(self.path(key).read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            return None

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store ``record`` under ``key`` atomically."""
        atomic_write(self.path(key), dumps(record))


def run_chunk(items: list[tuple[str, Point]], cache_root: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """A task: several checks; each record is cached the moment it exists (when the cache is reachable)."""
    cache = Cache(cache_root) if cache_root else None
    out = []
    for key, point in items:
        rec = run_point(point)
        if cache is not None:
            try:
                cache.put(key, rec)
            except OSError:  # a remote worker without the driver's file system: the driver writes it
                cache = None
        out.append((key, rec))
    return out


@dataclass
class SweepResult:
    """Records of a sweep, and how many were computed and how many read from the cache."""
    records: list[dict[str, Any]]
    computed: int
    cached: int


TaskHook = Callable[[int], None]  # called with the number of finished tasks after each task


def _chunks(items: list, size: int) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _serial(chunks: list, cache_root: str | None, workers: int, scheduler: str | None) -> Iterator[list]:
    for chunk in chunks:
        yield run_chunk(chunk, cache_root)


def _processes(chunks: list, cache_root: str | None, workers: int, scheduler: str | None) -> Iterator[list]:
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending = {pool.submit(run_chunk, chunk, cache_root) for chunk in chunks}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    yield fut.result()
        finally:
            for fut in pending:
                fut.cancel()


def _dask(chunks: list, cache_root: str | None, workers: int, scheduler: str | None) -> Iterator[list]:
    """The embedded LocalCluster has one single-threaded worker process per worker, started by fork
    where the platform has it: forked workers inherit the loaded checkers (a spawned worker would
    import sympy and every construction again, several seconds each)."""
    import logging
    import multiprocessing

    import dask
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"--scheduler: cannot reach {scheduler} ({exc})") from None
    else:
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        with dask.config.set({"distributed.worker.multiprocessing-method": method}):
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR)
        client = Client(cluster)
    try:
        futures = [client.submit(run_chunk, chunk, cache_root, pure=False) for chunk in chunks]
        try:
            for fut in as_completed(futures):
                yield fut.result()
        finally:
            client.cancel(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


_RUNNERS = {"serial": _serial, "processes": _processes, "dask": _dask}


def sweep(points: Sequence[Point], *, executor: str = "serial", workers: int | None = None,
          scheduler: str | None = None, cache: Path | str | None = None, chunk_size: int | None = None,
          console: Console | None = None, on_task: TaskHook | None = None) -> SweepResult:
    """Run ``points`` (cached records are reused) and return every record in grid order."""
    if executor not in EXECUTORS:
        raise UsageError(f"--executor: must be one of {', '.join(EXECUTORS)}; got {executor!r}")
    if scheduler and executor != "dask":
        raise UsageError("--scheduler: only with --executor dask")
    if workers is not None and workers < 1:
        raise UsageError(f"--workers: must be >= 1, got {workers}")
    workers = workers or os.cpu_count() or 1
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
        hit = store.get(key) if store else None
        if hit is not None:
            results[key] = hit
        else:
            todo.append((key, point))
    cached = len(results)
    size = chunk_size or max(1, math.ceil(len(todo) / (4 * workers)))
    chunks = _chunks(todo, size)
    cache_root = str(store.root) if store else None
    with progress(console, f"checks ({executor}, {cached} cached)", len(todo)) as bar:
        for done_tasks, chunk_result in enumerate(_RUNNERS[executor](chunks, cache_root, workers, scheduler), 1):
            for key, rec in chunk_result:
                if store is not None and not store.path(key).exists():
                    store.put(key, rec)
                results[key] = rec
            bar.advance(len(chunk_result))
            if on_task is not None:
                on_task(done_tasks)
    return SweepResult([results[k] for k, _ in keyed], computed=len(todo), cached=cached)
