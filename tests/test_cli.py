"""The command line: bad input gets one clear line naming the parameter and a non-zero exit.

The commands run in this process (``cli_run.invoke``: the real entry point, both descriptors captured);
the reduced quick report (tests/small_report.py) runs as a real process, as a user starts it off a terminal."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from cli_run import invoke


@pytest.fixture
def cli(capfd):
    """``attnsim ARGS`` in this process: (exit status, stdout, stderr)."""
    return lambda *args: invoke(list(args), capfd)


def test_check_json_record_keys(cli):
    rc, out, err = cli("check", "two_heads.lemma_3_1", "--N", "16", "--M", "4", "--d", "2", "--numerics", "exact",
            "--format", "json")
    assert rc == 0, err
    r = json.loads(out)
    for key in ("claim", "params", "numerics", "length_convention", "agree", "error_bits", "calls", "calls_by_tag",
                "predicted_calls", "rounds", "bound", "verdict", "reasons"):
        assert key in r
    assert r["agree"] is True and r["calls"] == r["predicted_calls"] == 32 and r["verdict"] == "pass"


@pytest.mark.parametrize("args, needle", [
    (["check", "two_heads.lemma_3_1", "--M", "1"], "--M"),
    (["check", "two_heads.lemma_3_1", "--N", "0"], "--N"),
    (["check", "two_heads.lemma_3_1", "--d", "0"], "--d"),
    (["check", "two_heads.nope"], "CLAIM"),
    (["check", "two_heads.lemma_3_1", "--numerics", "quad"], "--numerics"),
    (["check", "two_heads.lemma_3_1", "--N", "abc"], "--N"),
    (["check", "two_heads.lemma_3_1", "--bogus", "3"], "--bogus"),
    (["check", "two_heads.lemma_3_1", "--scheme", "fast"], "--scheme"),
])
def test_bad_input_one_line_no_traceback(args, needle, cli):
    rc, out, err = cli(*args)
    assert rc == 2, (out, err)
    assert "Traceback" not in err
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], err


def test_nan_input_file_is_refused(tmp_path, cli):
    X = np.zeros((8, 2))
    X[3, 1] = np.nan
    np.save(tmp_path / "x.npy", X)
    rc, _, err = cli("check", "two_heads.lemma_3_1", "--N", "8", "--M", "4", "--d", "2",
                     "--input-file", str(tmp_path / "x.npy"))
    assert rc == 2 and "Traceback" not in err
    assert "--input-file" in err and "non-finite" in err


def test_input_file_is_used(tmp_path, cli):
    X = (np.arange(16, dtype=float).reshape(8, 2) - 8) / 4
    np.save(tmp_path / "x.npy", X)
    rc, out, err = cli("check", "two_heads.lemma_3_1", "--N", "8", "--M", "4", "--d", "2",
                       "--input-file", str(tmp_path / "x.npy"))
    assert rc == 0, out + err


def test_call_over_the_oracle_limit_is_a_clear_error(monkeypatch):
    """Shrink the oracle below what the construction needs: the oracle refuses, the CLI says why."""
    from attnsim.sim.errors import AttnsimError
    from attnsim.sim.oracle import OracleSpec
    from attnsim.verify import check

    original = OracleSpec.max_len_for
    monkeypatch.setattr(OracleSpec, "max_len_for", staticmethod(lambda M, c: original(M, c) - 1))
    with pytest.raises(AttnsimError, match="oracle length|max_len"):
        check.run_check("two_heads.lemma_3_1", dict(N=8, M=4, d=2))


def test_claims_lists_registry(cli):
    rc, out, _ = cli("claims", "--paper", "two_heads", "--format", "json")
    assert rc == 0
    ids = {c["id"] for c in json.loads(out)}
    assert {"two_heads.lemma_3_1", "two_heads.thm_3_4", "two_heads.lower_bound"} <= ids


def test_report_quick_writes_files(serial_report):
    # The reduced quick report (tests/small_report.py: a few claims of two papers, every phase) runs the pipeline
    # through the real command line, as a user starts it off a terminal; its run is shared with the fault tests
    # that read it. Every paper's quick report (growth sweeps, proofs) is `attnsim report --quick`'s job.
    out, err = (serial_report / "stdout.txt").read_text(), (serial_report / "stderr.txt").read_text()
    for name in ("report.md", "checks.csv", "checks.json"):
        assert (serial_report / "rep" / name).stat().st_size > 0
    assert str((serial_report / "rep").resolve()) in out.replace("\n", "")
    # not a terminal: progress comes on stderr as plain lines with done/total; stdout holds only the closing summary
    assert re.search(r"^checks .*: \d+/\d+ \(\d+%\)", err, re.M), err[:2000]
    # no progress line on stdout: it holds the summary (its phase times included)
    assert not re.search(r"\d+/\d+ \(\d+%\)", out), out
    assert re.search(r"report took \d+ s", out)
