"""Progress for anything that can take more than a few seconds (sweeps, report sections, bench, studies).

On a terminal it is a rich progress bar with an estimate of the time left. Anywhere else (a pipe, a
log file, CI) it is a plain line every few seconds — ``label: done/total (percent), elapsed, about
… left`` — plus one when the work is done, so that ``attnsim report --quick | cat`` is never silent.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from attnsim.verify.signal_latch import act_on_lost

EVERY_S = 3.0
_HUSH = threading.RLock()


@contextmanager
def hushed() -> Iterator[None]:
    """No tracker's thread prints while this runs: a measurement of this process's allocations (tracemalloc
    counts every thread's) must not count a progress line's, nor the first line's loading of rich's tables.

    The lock is reentrant and a tracker's thread never waits on it for more than a beat: an exception raised
    by a signal handler (a fuzz's time limit, every second) between the lock's acquisition and the block that
    releases it leaves the lock held. A plain lock then stopped the next measurement in this thread and the
    tracker's thread for good, and the command hung at its end, joining that thread."""
    with _HUSH:
        yield


def _seconds(s: float) -> str:
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.1f} min"


class Tracker:
    """Counts finished work; shows it as a bar (terminal) or as a line every ``every`` seconds (elsewhere)."""

    def __init__(self, console: Console, label: str, total: int, every: float = EVERY_S,
                 bar: Progress | None = None) -> None:
        """Count ``total`` items of ``label``; draw on ``bar`` when given, else print to ``console``."""
        self.console, self.label, self.total, self.every, self.bar = console, label, total, every, bar
        self.done = 0
        self.now = ""
        self.start = time.monotonic()
        self.task = bar.add_task(label, total=total) if bar is not None else None

    def line(self) -> str:
        """``label: done/total (p%), elapsed, about … left`` (the estimate once something is done)."""
        elapsed = time.monotonic() - self.start
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        left = ""
        if 0 < self.done < self.total:
            left = f", about {_seconds(elapsed / self.done * (self.total - self.done))} left"
        return f"{self.label}: {self.done}/{self.total}{pct}, {_seconds(elapsed)} elapsed{left}"

    def advance(self, n: int = 1, now: str | None = None) -> None:
        """Record ``n`` more items done (``now``: what is being worked on next, shown on the bar). A Ctrl-C or
        SIGTERM that a library swallowed is raised again here (:func:`~attnsim.verify.signal_latch.act_on_lost`):
        work that goes on after it is work the user stopped."""
        act_on_lost()
        self.done += n
        if self.bar is not None:
            desc = f"{self.label}: {now}" if now else self.label
            self.bar.update(self.task, advance=n, description=desc)
            return
        if now:
            self.now = now

    def _beat(self, stop: threading.Event) -> None:
        while not stop.wait(self.every):
            if not _HUSH.acquire(timeout=self.every):
                continue  # a measurement runs (or a lock was left held): skip this beat's line
            try:
                doing = f" — {self.now}" if self.now else ""
                self.console.print(self.line() + doing, markup=False, highlight=False, soft_wrap=True)
            finally:
                _HUSH.release()


@contextmanager
def progress(console: Console | None, label: str, total: int, every: float = EVERY_S) -> Iterator[Tracker]:
    """A :class:`Tracker` for ``total`` items; a final line when not on a terminal and it took a while."""
    console = console or Console(stderr=True)
    if console.is_terminal:
        with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=console,
                      transient=True) as bar:
            yield Tracker(console, label, total, every, bar)
        return
    tracker = Tracker(console, label, total, every)
    stop = threading.Event()
    beat = threading.Thread(target=tracker._beat, args=(stop,), daemon=True)
    beat.start()
    try:
        yield tracker
    finally:
        stop.set()
        beat.join()
    if time.monotonic() - tracker.start >= every:
        console.print(tracker.line(), markup=False, highlight=False, soft_wrap=True)


def cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


class Phases:
    """Wall time of each phase of a long command (``attnsim report``): a line on ``console`` as each ends,
    and :meth:`line` for the closing summary."""

    def __init__(self, console: Console | None) -> None:
        """Report each phase's time on ``console`` (stderr by default)."""
        self.console = console or Console(stderr=True)
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        """Time the block as the phase ``name`` (times of a repeated name add up); beside the wall time, the
        CPU time of this process and of the worker processes that ended within the block (a pool's)."""
        start, cpu = time.perf_counter(), cpu_seconds()
        try:
            yield
        finally:
            took = time.perf_counter() - start
            self.seconds[name] = self.seconds.get(name, 0.0) + took
            self.console.print(f"phase {name}: {took:.1f} s (CPU {cpu_seconds() - cpu:.1f} s)", markup=False,
                               highlight=False, soft_wrap=True)

    def line(self) -> str:
        """``name X s, ...`` in the order the phases ran."""
        return ", ".join(f"{name} {s:.0f} s" for name, s in self.seconds.items())
