"""``attnsim run`` and the schedulers: Dask output is bit-identical to serial output; sampled rows
agree with direct attention; calls are counted; bad input is one clear line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from limits import limit

from attnsim.sim.engine.schedulers import DaskScheduler, Serial
from attnsim.sim.engine.simulate import simulate
from attnsim.sim.errors import AttnsimError
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.verify.long_run import direct_rows, error_bits, random_layer, run_layer

CLI = [sys.executable, "-m", "attnsim.verify.cli"]


@pytest.fixture(scope="module")
def serial_runs():
    return {scheme: run_layer(200, 16, 8, H=2, scheme=scheme, check_rows=20, seed=4) for scheme in ("fused", "paper")}


def test_a_local_cluster_beside_another_does_not_warn_about_the_port():
    """Two local clusters on one machine (two simulations at once, or the suite's workers): the second one's
    scheduler must not ask for the dashboard's port 8787 and warn that it is taken."""
    import socket
    import warnings

    taken = socket.socket()
    try:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            taken.bind(("0.0.0.0", 8787))
            taken.listen()
        except OSError:  # something on this machine holds it already: the case under test all the same
            pass
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            with DaskScheduler("local", workers=1) as dask:
                assert dask.client.scheduler_info()["workers"]
    finally:
        taken.close()


def test_dask_is_bit_identical_to_serial():
    """Both schemes, two heads, a partial block: the Dask merge order makes the outputs identical."""
    spec, weights, X = random_layer(200, 8, 2, 4)
    nm = get_numerics("float64", 0)

    def run(scheme, sched):
        oracle = Oracle(OracleSpec(17, dim=10), nm)
        return simulate(spec, weights, X, oracle, b=16, scheme=scheme, scheduler=sched), oracle.ledger

    outputs = {}
    with DaskScheduler("local", workers=2) as dask:
        for scheme in ("fused", "paper"):
            (Y, led), (Y_d, led_d) = run(scheme, Serial(threads=2)), run(scheme, dask)
            assert np.array_equal(Y, Y_d), scheme
            outputs[scheme] = Y
            assert led.by_tag() == led_d.by_tag() and led.total("oracle") == led_d.total("oracle") > 0
        # back to back on the same arrays: content-hashed scatter keys lost their data on the second run
        for _ in range(3):
            assert np.array_equal(run("fused", dask)[0], outputs["fused"])


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
    (dict(N=0, M=4, d=2), "^N: "), (dict(N=8, M=1, d=2), "^M: "), (dict(N=8, M=4, d=3, H=2), "^H: "),
    (dict(N=8, M=4, d=2, check_rows=9), "^check_rows: "), (dict(N=8, M=4, d=2, scheme="x"), "^scheme: "),
    (dict(N=8, M=4, d=2, scheduler="nowhere"), "^scheduler: "),
])
def test_bad_input_names_the_parameter(kwargs, needle):
    with pytest.raises(AttnsimError, match=needle):
        run_layer(**kwargs)


def test_unreachable_dask_scheduler_is_one_clear_error():
    with pytest.raises(AttnsimError, match="^scheduler: "):
        DaskScheduler("tcp://127.0.0.1:1", timeout="1s")


def test_cli_run_json(tmp_path):
    out = tmp_path / "run.json"
    p = subprocess.run([*CLI, "run", "--N", "300", "--M", "32", "--d", "8", "--check-rows", "10", "--json", str(out)],
                       capture_output=True, text=True, timeout=limit(300))
    assert p.returncode == 0, p.stderr
    assert "calls 100" in p.stdout and "bits" in p.stdout
    rec = json.loads(out.read_text())
    assert rec["calls"] == 100 and rec["min_error_bits"] > 40 and rec["peak_rss_mib"] > 0


def test_cli_run_bad_input_is_one_line(monkeypatch, capsys):
    from attnsim.verify.cli import app as cli

    monkeypatch.setattr(sys, "argv", ["attnsim", "run", "--N", "8", "--M", "4", "--d", "2", "--check-rows", "99"])
    with pytest.raises(SystemExit) as e:
        cli.main()
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.strip().startswith("error: --check-rows") and "Traceback" not in err
