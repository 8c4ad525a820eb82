"""A reduced ``attnsim report --quick``, run as a real process off a terminal, and its serial run, which the
fixture ``serial_report`` of conftest.py builds once per test run.

The reduced report runs the quick grids of a few claims, the papers cut down to those claims (their sections,
theory and proofs: only those claims' obligations are proved), without the topic sections and without the computed
findings (which run checks of their own: half the run's time), so a test that starts it takes seconds of work.
Every phase still runs, each on a cluster of its own under a Dask scheduler. The command line is the real one: its
options, progress, summary and files.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from limits import limit

SMALL_REPORT = """
import dataclasses
import sys
import attnsim.verify.report.build as build
from attnsim.verify.sweep import grid
claims = ["two_heads.lemma_3_3", "two_heads.cor_3_2", "anna.lemma_b_5", "two_heads.lemma_3_1"]
build.grid = lambda _chosen=None, quick=False: grid(claims, quick=True)
_load = build.load
build.load = lambda paper: dataclasses.replace(_load(paper), claims=tuple(c for c in _load(paper).claims
                                                                          if c.id in claims))
import attnsim.verify.report.section_tasks as section_tasks
build.paper_sections = section_tasks.paper_sections = lambda _paper: []
build.findings = lambda _paper, _records: []
import attnsim.verify.prove.status as status
status.CLAIMS = [c for c in status.CLAIMS if c in claims]
from attnsim.verify.cli.app import main
sys.argv = ["attnsim", "report", "--quick", *sys.argv[1:]]
main()
"""


def small_report(*args: str, cwd: Path, timeout: float = limit(150),
                 env: dict | None = None) -> subprocess.CompletedProcess:
    """``attnsim report --quick ARGS``, reduced, in ``cwd``."""
    return subprocess.run([sys.executable, "-c", SMALL_REPORT, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env={**os.environ, **(env or {})})


def serial_report_in(root: Path) -> None:
    """Run the reduced report serially in ``root`` (``--out rep``), keeping what it printed."""
    p = small_report("--out", "rep", "--scheduler", "serial", cwd=root)
    (root / "stdout.txt").write_text(p.stdout)
    (root / "stderr.txt").write_text(p.stderr)
    assert p.returncode == 0, p.stderr
