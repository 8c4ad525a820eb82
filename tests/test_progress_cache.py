"""Progress off a terminal, and the report's section cache."""

from __future__ import annotations

import io
import threading
import time

from rich.console import Console

from attnsim.verify.progress import _HUSH, hushed, progress
from attnsim.verify.report.section_cache import cached_section


def test_progress_prints_lines_with_an_estimate_off_a_terminal():
    console = Console(file=io.StringIO(), force_terminal=False, width=200)
    with progress(console, "work", 4, every=0.05) as bar:
        bar.advance(now="first")
        time.sleep(0.2)
        bar.advance(3)
    lines = console.file.getvalue().splitlines()
    assert len(lines) >= 2 and lines[0].startswith("work: 1/4 (25%)") and "left — first" in lines[0]
    assert lines[-1].startswith("work: 4/4 (100%)")


def test_a_hush_left_held_neither_stops_its_thread_nor_hangs_the_tracker():
    """A signal's exception between the lock's acquisition and its block leaves the hush held (a fuzz's time limit
    can, and the command then hung joining its tracker's thread): the next hush in that thread goes on, and a
    tracker skips its lines instead of waiting for ever."""
    console = Console(file=io.StringIO(), force_terminal=False, width=200)
    finished = threading.Event()

    def measuring_thread() -> None:
        _HUSH.acquire()  # as the leak leaves it
        try:
            with hushed():
                pass
            with progress(console, "work", 2, every=0.05) as bar:
                time.sleep(0.3)
                bar.advance(2)
            finished.set()
        finally:
            _HUSH.release()

    worker = threading.Thread(target=measuring_thread, daemon=True)
    worker.start()
    worker.join(30)
    assert finished.is_set(), "the thread that left the hush held hung"
    assert console.file.getvalue().splitlines()[-1].startswith("work: 2/2 (100%)")


def test_progress_is_silent_when_quick():
    console = Console(file=io.StringIO(), force_terminal=False)
    with progress(console, "work", 2, every=5) as bar:
        bar.advance(2)
    assert console.file.getvalue() == ""


def test_section_cache_reuses_until_inputs_or_files_change(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        (tmp_path / "plots").mkdir(exist_ok=True)
        (tmp_path / "plots" / "a.png").write_bytes(b"png")
        return "text ![a](plots/a.png)"

    records = [{"claim": "x.y", "verdict": "pass"}]
    for _ in range(2):
        assert cached_section(tmp_path, "sec", True, records, compute) == "text ![a](plots/a.png)"
    assert len(calls) == 1
    cached_section(tmp_path, "sec", False, records, compute)  # quick is part of the key
    cached_section(tmp_path, "sec", True, records + records, compute)  # so are the records
    assert len(calls) == 3
    (tmp_path / "plots" / "a.png").unlink()  # a plot it shows is gone: computed again
    cached_section(tmp_path, "sec", True, records, compute)
    assert len(calls) == 4 and (tmp_path / "plots" / "a.png").exists()
    cached_section(tmp_path, "sec", True, records, compute, enabled=False)
    assert len(calls) == 5
