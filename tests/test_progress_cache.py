"""Progress off a terminal, and the report's section cache."""

from __future__ import annotations

import io
import time

from rich.console import Console

from attnsim.verify.progress import progress
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
