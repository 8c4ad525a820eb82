"""Where batches run: in this process (:class:`Serial`) or on Dask workers (:class:`DaskScheduler`).

A scheduler takes (batch, meta) items — in the order the construction made them — plus the named
source arrays, and yields (meta, output) in *that same order*, so whatever consumes the outputs
(the combination of eq. (1)) folds them in a fixed order and the result does not depend on where
or when a batch ran: Dask output is bit-identical to serial output. The Dask scheduler ships the
sources once per round (``scatter``), sends consecutive batches in chunks, and keeps a bounded
number of chunks in flight, so memory stays bounded on both sides.
"""

from __future__ import annotations

import os
import uuid
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Iterator, Mapping, Protocol

import numpy as np

from attnsim.sim.engine.backend import get_backend
from attnsim.sim.engine.batch import CallBatch, ProjectionCache, execute
from attnsim.sim.engine.blas import single_threaded_blas
from attnsim.sim.engine.scratch import scratch
from attnsim.sim.errors import AttnsimError

Item = tuple[CallBatch, Any]


class Scheduler(Protocol):
    """Where batches run: ``run`` yields each item's metadata and output in submission order."""
    name: str

    def run(self, items: Iterable[Item], arrays: Mapping[str, np.ndarray],
            causal: bool = False) -> Iterator[tuple[Any, np.ndarray]]:
        """Execute each (batch, metadata) item against the shared ``arrays``; yield (metadata, output) in order."""


class Serial:
    """Batches in this process, on ``threads`` threads with single-threaded BLAS (see ``blas``);
    outputs in submission order, at most ``2·threads`` batches ahead; projections cached per round."""

    name = "serial"

    def __init__(self, backend: str = "numpy", threads: int | None = None) -> None:
        """Run batches in this process on ``backend`` with ``threads`` threads."""
        self.backend = get_backend(backend)
        self.threads = threads if threads is not None else max(1, min(os.cpu_count() or 1, 8))
        if self.threads < 1:
            raise AttnsimError(f"must be >= 1, got {self.threads}", param="threads")

    def run(self, items: Iterable[Item], arrays: Mapping[str, np.ndarray],
            causal: bool = False) -> Iterator[tuple[Any, np.ndarray]]:
        """Execute each batch here; outputs come back in submission order."""
        cache: ProjectionCache = {}
        if self.threads == 1:  # each output is taken before the next batch runs: it may live in scratch
            for batch, meta in items:
                B, n, _ = batch.inputs.shape
                out = scratch("outputs", (B, n, batch.WV.shape[1]))
                yield meta, execute(batch, arrays, self.backend, causal, cache, out)
            return
        it = iter(items)
        pending: deque = deque()
        with single_threaded_blas(), ThreadPoolExecutor(self.threads) as pool:
            def submit_next() -> bool:
                item = next(it, None)
                if item is None:
                    return False
                batch, meta = item
                pending.append((meta, pool.submit(execute, batch, arrays, self.backend, causal, cache)))
                return True

            while len(pending) < 2 * self.threads and submit_next():
                pass
            while pending:
                meta, fut = pending.popleft()
                out = fut.result()
                submit_next()
                yield meta, out


_WORKER_CACHE: dict[str, Any] = {"round": None, "cache": {}}


def _execute_chunk(batches: list[CallBatch], backend: str, causal: bool, round_id: str,
                   arrays: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Runs on a (single-threaded) worker: the chunk's batches in order; projections are cached on
    the worker for the whole round (``round_id``), as the serial scheduler caches them."""
    if _WORKER_CACHE["round"] != round_id:
        _WORKER_CACHE["round"], _WORKER_CACHE["cache"] = round_id, {}
    be = get_backend(backend)
    return [execute(b, arrays, be, causal, _WORKER_CACHE["cache"]) for b in batches]


class DaskScheduler:
    """Chunks of consecutive batches on a Dask cluster; outputs come back in submission order.

    ``address``: ``"local"`` starts a LocalCluster of ``workers`` single-threaded processes;
    ``"tcp://host:port"`` connects to a running scheduler. ``client``: a client of a cluster that the
    caller started and will close itself (``address`` is then ignored).
    """

    name = "dask"

    def __init__(self, address: str = "local", workers: int = 2, chunk: int = 2, backend: str = "numpy",
                 in_flight: int | None = None, timeout: str = "2s", client: Any = None) -> None:
        """Run batches on a Dask cluster (``local`` starts one), keeping at most ``in_flight`` pending."""
        try:
            from distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover
            raise AttnsimError("dask.distributed is not installed", param="scheduler") from None
        if workers < 1:
            raise AttnsimError(f"must be >= 1, got {workers}", param="workers")
        if chunk < 1:
            raise AttnsimError(f"chunk: must be >= 1, got {chunk}")
        self.backend, self.chunk = backend, chunk
        self.in_flight = in_flight or 2 * workers
        self._cluster = None
        self._own_client = client is None
        try:
            if client is not None:
                self.client = client
            elif address == "local":
                # the scheduler serves its HTTP routes even without a dashboard: on a free port, not 8787, so
                # that a second cluster on the machine does not warn that the port is taken
                self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                             dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"})
                self.client = Client(self._cluster)
            elif address.startswith("tcp://"):
                self.client = Client(address, timeout=timeout)
            else:
                raise AttnsimError(f"expected serial, local or tcp://HOST:PORT, got {address!r}", param="scheduler")
        except OSError as e:
            raise AttnsimError(f"cannot reach Dask scheduler {address!r}: {e}", param="scheduler") from None

    def run(self, items: Iterable[Item], arrays: Mapping[str, np.ndarray],
            causal: bool = False) -> Iterator[tuple[Any, np.ndarray]]:
        """Scatter the shared arrays, submit the batches, and yield outputs in submission order."""
        # hash=False: a key of this round's own. Content-hashed keys are the same in two runs on the
        # same arrays, and a run started as the previous one's futures are released lost its data
        # ("lost dependencies") when the release reached the scheduler after the new scatter.
        remote = {k: self.client.scatter(v, broadcast=True, hash=False) for k, v in arrays.items()}
        round_id = uuid.uuid4().hex
        pending: deque = deque()
        it = iter(items)

        def submit_next() -> bool:
            chunk = [item for _, item in zip(range(self.chunk), it)]
            if not chunk:
                return False
            fut = self.client.submit(_execute_chunk, [b for b, _ in chunk], self.backend, causal, round_id,
                                     remote, pure=False)
            pending.append(([m for _, m in chunk], fut))
            return True

        while len(pending) < self.in_flight and submit_next():
            pass
        while pending:
            metas, fut = pending.popleft()
            outs = fut.result()
            submit_next()
            yield from zip(metas, outs)

    def close(self) -> None:
        """Close the client and the local cluster, if this scheduler started them."""
        if self._own_client:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()

    def __enter__(self) -> "DaskScheduler":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_scheduler(name: str, workers: int = 2, backend: str = "numpy") -> Serial | DaskScheduler:
    """``serial`` (this process, ``workers`` threads), ``local`` (LocalCluster of ``workers``
    processes) or ``tcp://HOST:PORT``."""
    if name == "serial":
        return Serial(backend, threads=workers)
    return DaskScheduler(name, workers=workers, backend=backend)
