"""Each shared mechanism is written once: the oracle's refusal checks and FLOP formula (sim/oracle.py), the
batched runner (sim/engine/runner.py), line fits and binomial intervals (verify/stats.py).

The test reads the source tree and fails when a second copy reappears somewhere else.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("sim", "theory", "verify", "paper_refs", "benchmarks", "examples")

#: pattern → the one file allowed to hold it (None: no file may)
ONE_COPY: dict[str, str | None] = {
    r"def run_batched\b": "sim/engine/runner.py",
    # a call's FLOP formula: 2·n·w·(2·kq + kv) + 2·n²·(kq + kv), whatever the names
    r"2\s*\*\s*\w+\s*\*\s*\w+\s*\*\s*\(\s*2\s*\*\s*\w+\s*\+\s*\w+\s*\)": "sim/oracle.py",
    r"exceeds max_len": "sim/oracle.py",
    r"W\^Q and W\^K widths differ": "sim/oracle.py",
    r"head width exceeds dim": "sim/oracle.py",
    r"output width \{": "sim/oracle.py",
    r"oracle refused call": "sim/oracle.py",
    r"\bpolyfit\b": None,
    r"\blinregress\b": "verify/stats.py",
    r"\bbinomtest\b": "verify/stats.py",
    r"def (clopper_pearson|wilson\w*)\b": None,
    r"\bbeta\.ppf\b": None,  # an exact interval written out from beta quantiles
}


def _files() -> list[Path]:
    return sorted(p for d in SOURCES if (ROOT / d).is_dir() for p in (ROOT / d).rglob("*.py"))


def test_the_tree_has_sources() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in _files()}
    assert {"sim/oracle.py", "sim/engine/runner.py", "verify/stats.py"} <= names


@pytest.mark.parametrize("pattern", ONE_COPY)
def test_written_once(pattern: str) -> None:
    holders = sorted(p.relative_to(ROOT).as_posix() for p in _files() if re.search(pattern, p.read_text("utf-8")))
    home = ONE_COPY[pattern]
    assert holders == ([home] if home else []), f"{pattern!r} is written in {holders}"
