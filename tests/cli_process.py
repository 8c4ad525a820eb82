"""What the fault tests that run the CLI as a real process share: the command line and the reading of its
one error line (docs/faults.md)."""

from __future__ import annotations

import re
import subprocess
import sys

CLI = [sys.executable, "-m", "attnsim.verify.cli"]

PROGRESS_LINE = re.compile(r"^(.+: \d+/\d+ \(\d+%\), [\d.]+ (s|min) elapsed|phase .+: [\d.]+ s \(CPU [\d.]+ s\)$)")
"""A progress line (long work off a terminal, on stderr) or a phase's time: either may come before the error, and
neither is an error line."""


def one_line(p: subprocess.CompletedProcess) -> str:
    """The process's one error line; fails the test where stderr holds more, or a traceback."""
    lines = [line for line in p.stderr.strip().splitlines() if not PROGRESS_LINE.match(line)]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    return lines[0]
