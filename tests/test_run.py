"""``attnsim run`` and the schedulers: Dask output is bit-identical to serial output; sampled rows
agree with direct attention; calls are counted; bad input is one clear line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from attnsim.verify.long_run import direct_rows, error_bits, random_layer, run_layer
from attnsim.verify.registry import UsageError

CLI = [sys.executable, "-m", "attnsim.verify.cli"]


@pytest.fixture(scope="module")
def serial_runs():
    return {scheme: run_layer(200, 16, 8, H=2, scheme=scheme, check_rows=20, seed=4) for scheme in ("fused", "paper")}


def test_dask_is_bit_identical_to_serial(serial_runs):
    for scheme, (rec, Y) in serial_runs.items():
        rec_d, Y_d = run_layer(200, 16, 8, H=2, scheme=scheme, scheduler="local", workers=2, seed=4)
        assert np.array_equal(Y, Y_d), scheme
        assert rec_d["calls"] == rec["calls"] and rec_d["calls_by_tag"] == rec["calls_by_tag"]


def test_serial_run_counts_and_checks(serial_runs):
    n = -(-200 // 16)
    fused, _ = serial_runs["fused"]
    paper, _ = serial_runs["paper"]
    assert fused["calls"] == 2 * n * n and paper["calls"] == 2 * 2 * n * n  # H = 2 heads
    assert fused["rounds"] == paper["rounds"] == 1
    assert fused["check_rows"] == 20 and fused["min_error_bits"] > 40 and paper["min_error_bits"] > 40


def test_check_catches_a_wrong_output():
    spec, weights, X = random_layer(64, 4, 1, 0)
    rows = np.arange(8)
    ref = direct_rows(spec, weights, X, rows)
    Y = ref.astype(np.float64)
    assert error_bits(Y, ref).min() > 50
    Y[3, 0] += 1e-3
    assert error_bits(Y, ref)[3] < 20


@pytest.mark.parametrize("kwargs, needle", [
    (dict(N=0, M=4, d=2), "--N"), (dict(N=8, M=1, d=2), "--M"), (dict(N=8, M=4, d=3, H=2), "--H"),
    (dict(N=8, M=4, d=2, check_rows=9), "--check-rows"), (dict(N=8, M=4, d=2, scheme="x"), "--scheme"),
    (dict(N=8, M=4, d=2, scheduler="nowhere"), "--scheduler"),
])
def test_bad_input_names_the_parameter(kwargs, needle):
    with pytest.raises(UsageError if needle != "--scheduler" else Exception, match=needle):
        run_layer(**kwargs)


def test_cli_run_json(tmp_path):
    out = tmp_path / "run.json"
    p = subprocess.run([*CLI, "run", "--N", "300", "--M", "32", "--d", "8", "--check-rows", "10", "--json", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "calls 100" in p.stdout and "bits" in p.stdout
    rec = json.loads(out.read_text())
    assert rec["calls"] == 100 and rec["min_error_bits"] > 40 and rec["peak_rss_mib"] > 0


def test_cli_run_bad_input_is_one_line():
    p = subprocess.run([*CLI, "run", "--N", "8", "--M", "4", "--d", "2", "--check-rows", "99"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2
    assert p.stderr.strip().startswith("error: --check-rows") and "Traceback" not in p.stderr
