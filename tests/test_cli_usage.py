"""The command line's usage errors, its shared option vocabulary and its help.

Every bad invocation (the CLI library's own errors and ours) prints one line ``error: ...`` naming
what is wrong and exits 2, without a traceback. Every line of ``BAD`` runs through the real entry point in
this process with both descriptors captured (``cli_run.invoke``); a sample of them (one of each way an
error arises: click's parser, the argv guard, a command's own refusal) also runs as a real process, started
the way a user does, which must say the same.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import subprocess
import sys

import pytest
from cli_run import invoke
from limits import limit

from attnsim.verify.cli.app import app, main

CLI = [sys.executable, "-m", "attnsim.verify.cli"]

BAD = [
    "nosuchcmd",
    "fuzz",
    "fuzz two_heads.nope --examples 1",
    "fuzz two_heads.lemma_3_1 --examples 0",
    "fuzz two_heads.lemma_3_1 --minutes -1",
    "fuzz two_heads.lemma_3_1 --minutes 1 --examples 3",
    "fuzz two_heads.lemma_3_1 --examples 2 --target speed",
    "--bogus",
    "-x",
    "claim",
    "claims --bogus",
    "claims --paper",
    "claims --paper nope",
    "claims --format xml",
    "claims --json",
    "claims extra",
    "check",
    "check --seed abc two_heads.lemma_3_1",
    "check two_heads.lemma_3_1 --min-bits x",
    "check nope.claim",
    "check two_heads.lemma_3_1 --format xml",
    "check two_heads.lemma_3_1 --N",
    "check two_heads.lemma_3_1 --numerics",
    "report --workers abc",
    "report --bogus",
    "report --scheduler nowhere",
    "report --out",
    "report extra",
    "report --quick=maybe",
    "bounds --format html",
    "bounds --paper nope",
    "bounds --bogus",
    "bounds extra",
    "precision",
    "precision nope.claim",
    "precision two_heads.lemma_3_1 --M abc",
    "precision two_heads.lemma_3_1 --N a,b",
    "precision two_heads.lemma_3_1 --format xml",
    "precision two_heads.lemma_3_1 --family wide",
    "precision two_heads.lemma_3_1 --input huge",
    "precision two_heads.lemma_3_1 --constructions foo",
    "precision two_heads.lemma_3_1 --M 1",
    "run --N abc",
    "run --scheduler processes",
    "run --format xml",
    "run --scheme nope",
    "run --workers x",
    "run --bogus",
    "growth",
    "growth nope.claim",
    "growth two_heads.lemma_3_3 --format xml",
    "growth two_heads.lemma_3_3 --seed=-1",
    "growth two_heads.lemma_3_3 --json /nonexistent-dir/x.json",
    "prove nosuch.claim",
    "prove two_heads.thm_4_1",
    "prove --format xml",
    "prove --rlimit 0",
    "teeth nosuch.claim",
    "teeth --bogus",
    "bench --repeats abc",
    "bench --format xml",
    "bench --bogus",
    "bench --torch --N x",
    "tint-size",
    "tint-size --aux nope",
    "tint-size --aux opt-125m --format html",
    "tint-size --aux opt-125m --steps x",
    "tint-size --aux opt-125m --K abc",
    "experiment",
    "experiment anna.nope",
    "experiment anna.match2 --steps 0",
    "experiment anna.match2 --format xml",
    "experiment anna.match2 --tests 6",
    "experiment anna.match2 --betas 1,x",
    "experiment anna.induction --betas 0.1",
]


def run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=limit(120))


def test_enough_bad_invocations_across_every_command():
    commands = {line.split()[0] for line in BAD}
    assert len(BAD) >= 40
    assert set(_commands()) <= commands


def _one_error_line(line: str, rc: int, out: str, err: str) -> str:
    lines = [x for x in err.splitlines() if x.strip()]
    assert rc == 2, (line, out, err)
    assert "Traceback" not in err + out
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.mark.parametrize("line", BAD)
def test_bad_usage_is_one_error_line_and_exit_2(line, capfd):
    _one_error_line(line, *invoke(shlex.split(line), capfd))


# click's parser (an unknown command, a value of the wrong type), the argv guard (an empty value) and a
# command's own refusal (an unknown claim, found once the registry is loaded).
AS_A_USER = ["nosuchcmd", "check --seed abc two_heads.lemma_3_1", "claims --paper ''", "check nope.claim"]


@pytest.mark.parametrize("line", AS_A_USER)
def test_bad_usage_as_a_process_says_the_same(line, capfd):
    p = run(shlex.split(line))
    assert _one_error_line(line, p.returncode, p.stdout, p.stderr) == _one_error_line(
        line, *invoke(shlex.split(line), capfd))


def test_version_and_bare_command():
    from attnsim.verify.cli.app import package_version

    p = run(["--version"])
    assert p.returncode == 0 and p.stdout.strip() == f"attnsim {package_version()}"
    p = run([])
    assert p.returncode == 0 and "Usage" in p.stdout and "claims" in p.stdout and not p.stderr


def _commands() -> dict:
    import typer

    return typer.main.get_command(app).commands


def _invoke(args: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


OUT = "{out}"
"""Stands for a fresh directory of the test's own (``tmp_path``) in the runs that write one."""

# The smallest run of each command, for trying every --format value its help names.
SMALL = {
    "claims": ["--paper", "anna"],
    "check": ["two_heads.lemma_3_1", "--N", "8", "--M", "4", "--d", "2"],
    "bounds": ["--paper", "tint"],  # the cheapest paper to analyse (anna's takes ~6 CPU s a format)
    "growth": ["two_heads.lemma_3_3", "--quick"],
    "prove": ["two_heads.lemma_3_3"],
    "precision": ["two_heads.lemma_3_1", "--N", "16", "--M", "4", "--d", "2", "--sample-blocks", "1"],
    "run": ["--N", "64", "--M", "16", "--d", "4"],
    "bench": ["--torch", "--N", "64", "--M", "16", "--d", "4", "--repeats", "1", "--engine", "torch-oracle"],
    "tint-size": ["--aux", "opt-125m"],
    "experiment": ["anna.induction", "--quick", "--out", OUT],
    "fuzz": ["two_heads.lemma_3_3", "--examples", "2", "--out", OUT],
}


def test_every_command_has_a_small_run():
    assert set(SMALL) == {name for name, cmd in _commands().items()
                          if any("--format" in p.opts for p in cmd.params)}


HAS_TORCH = importlib.util.find_spec("torch") is not None


@pytest.mark.parametrize("name", sorted(SMALL))
def test_every_format_named_in_help_works(name, capsys, tmp_path):
    """Every format runs; without the torch extra, bench's small run (the torch figure) and the experiments
    (they train with torch) are refused in one line naming the install instead."""
    args = [str(tmp_path / "out") if a == OUT else a for a in SMALL[name]]
    rc, text, _ = _invoke([name, "--help"], capsys)
    assert rc == 0 and "--format" in text
    (param,) = [p for p in _commands()[name].params if "--format" in p.opts]
    formats = re.search(r"one of: ([\w, ]+)", param.help).group(1).split(", ")
    assert formats and set(formats) <= {"table", "md", "tex", "csv", "json"}
    for fmt in formats:
        rc, out, err = _invoke([name, *args, "--format", fmt], capsys)
        if name in ("bench", "experiment") and not HAS_TORCH:
            assert rc == 2 and "pip install" in err and len(err.strip().splitlines()) == 1, err
            continue
        assert rc in (0, 1) and out.strip(), (name, fmt, err)
        if fmt == "json":
            json.loads(out)


def test_tint_size_json_has_the_total(capsys):
    rc, out, _ = _invoke(["tint-size", "--aux", "opt-125m", "--format", "json"], capsys)
    r = json.loads(out)
    assert rc == 0 and r["total"] == 1_669_324_018 and r["under_ceiling"] is True


def test_json_path_is_written(tmp_path, capsys):
    rc, _, _ = _invoke(["claims", "--paper", "tint", "--json", str(tmp_path / "c.json")], capsys)
    assert rc == 0 and {c["id"] for c in json.loads((tmp_path / "c.json").read_text())} >= {"tint.size"}


def test_claims_piped_lists_every_id_whole(capsys):
    from attnsim.paper_refs import PAPERS, load

    rc, out, _ = _invoke(["claims"], capsys)
    lines = out.splitlines()[1:]
    ids = [line.split("\t")[0] for line in lines if not line.startswith("# ")]
    assert rc == 0 and ids == [c.id for p in PAPERS for c in load(p).claims]
    assert all(line.startswith("# ") and "independent evidence" in line for line in lines[len(ids):])


def test_check_help_lists_the_claim_parameters(capsys):
    rc, out, _ = _invoke(["check", "two_heads.lemma_3_1", "--help"], capsys)
    assert rc == 0
    section = " ".join(out.split("Parameters of two_heads.lemma_3_1:")[1].split())
    assert re.search(r"--scheme TEXT .*\(one of: paper, fused\) \[default: paper\]", section)
    assert re.search(r"--M INT oracle length .*\(at least 2\) \[default: 8\]", section)


def test_unknown_claim_suggests_close_ids(capsys):
    rc, _, err = _invoke(["check", "two_heads.lema_3_1"], capsys)
    assert rc == 2 and "did you mean two_heads.lemma_3_1" in err and err.count("anna.") == 0


def test_precision_command_names_match_the_study():
    from attnsim.verify.cli import precision as cli_precision
    from attnsim.verify.precision import study

    assert cli_precision.CLAIMS == study.CLAIMS
    assert cli_precision.CONSTRUCTIONS == study.CONSTRUCTIONS and cli_precision.FAMILIES == study.FAMILIES
