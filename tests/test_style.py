"""House style checked by the suite: ruff is clean, and the repository cites papers, not our working notes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from limits import limit

ROOT = Path(__file__).resolve().parents[1]

# What a reader of the repository cannot follow: our notes' section marks, the design notes, issue numbers.
# (Bracketed letters keep this file itself from matching a plain search for those words.)
_NOT_CITABLE = re.compile(r"(?<![\w.])(?i:d[i]gest)(?![\w(])|D[E]SIGN\.md|\b[Ii]ssue\s\d")
_SCANNED = ("sim", "theory", "verify", "paper_refs", "docs", "tests", "examples", "benchmarks", "_pkg")
_SUFFIXES = {".py", ".md", ".toml"}


def test_ruff_check_is_clean() -> None:
    p = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True,
                       timeout=limit(300))
    assert p.returncode == 0, p.stdout + p.stderr


def test_no_citation_of_notes_or_issue_numbers() -> None:
    files = [ROOT / "README.md", ROOT / "pyproject.toml"]
    for folder in _SCANNED:
        files += [f for f in (ROOT / folder).rglob("*") if f.suffix in _SUFFIXES and "__pycache__" not in f.parts]
    hits = [f"{f.relative_to(ROOT)}:{i}: {line.strip()}"
            for f in files if f.is_file()
            for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1) if _NOT_CITABLE.search(line)]
    assert not hits, "cite the paper (result, section) or docs/, not our notes:\n" + "\n".join(hits)
