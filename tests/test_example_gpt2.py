"""examples/gpt2_long_context.py runs end to end at a tiny size and reports ≥ 40 bits."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from limits import limit

pytest.importorskip("transformers", reason="the torch extra is not installed (pip install -e '.[torch]')")

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "gpt2_long_context.py"


def test_example_runs_and_agrees(tmp_path):
    """Streamed on the torch oracle, then batched: one test, so that the second run reads the direct forward
    the first one wrote (``--reference``) instead of computing it again in a process of its own."""
    reference = tmp_path / "direct.npz"
    for path in ([], ["--batched"]):
        out = subprocess.run([sys.executable, str(EXAMPLE), "--N", "96", "--M", "32", "--layers", "2",
                              "--embd", "32", "--heads", "2", "--reference", str(reference), *path],
                             capture_output=True, text=True, timeout=limit(300))
        assert out.returncode == 0, out.stderr
        assert ("direct forward read from" in out.stdout) == bool(path)  # written by the first run, then read
        calls = re.search(r"oracle calls: (\d+)", out.stdout)
        assert calls and int(calls.group(1)) == 3 * 3 * 2 * 2  # n² per head and layer, n = 96/32
        assert re.search(r"rounds: 2\b", out.stdout)
        assert out.stdout.count("  layer ") == (0 if path else 2)  # a progress line per streamed round
        bits = re.search(r"= ([\d.]+) bits", out.stdout)
        assert bits and float(bits.group(1)) >= 40
