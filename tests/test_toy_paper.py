"""A paper from a package of its own: examples/toy_paper is installed (pip, into a folder of this test)
and attnsim finds it through its ``attnsim.papers`` entry point — ``claims`` lists it, ``check`` and
``teeth`` run it, the report includes it — without a change to attnsim."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from limits import limit
from shared_once import once

ROOT = Path(__file__).resolve().parents[1]
CLAIM = "toy_paper.block_mean"


def _install(target: Path, build: Path) -> None:
    """examples/toy_paper installed by pip into ``target``: with this environment's setuptools when it has a
    recent one (no network), else in pip's own build environment (setuptools from PyPI)."""
    try:
        import setuptools

        local = int(setuptools.__version__.split(".")[0]) >= 70  # builds a wheel without the wheel package
    except ImportError:
        local = False
    offline = ["--no-build-isolation", "--no-index"] if local else []
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", *offline,
                        "--target", str(target), str(ROOT / "examples" / "toy_paper")],
                       capture_output=True, text=True, timeout=limit(300), cwd=build)
    assert p.returncode == 0, p.stdout + p.stderr
    assert list(target.glob("attnsim_toy_paper-*.dist-info/entry_points.txt"))


# One process with the toy paper on its path loads attnsim's claims once (about 2 CPU s), then runs each command
# in a fork of itself with its own stdout and stderr files: each command starts from that same loaded state
# through the real entry point (``main``: exit statuses and one-line errors included).
COMMANDS = r"""
import json, os, sys
from attnsim.verify.cli.app import main
from attnsim.verify.registry import all_checkers
all_checkers()
results = []
for i, args in enumerate(json.loads(sys.argv[1])):
    out, err = f"{i}.out", f"{i}.err"
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for fd, name in ((1, out), (2, err)):
            os.dup2(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        try:
            main(args)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    results.append([os.waitstatus_to_exitcode(status), open(out).read(), open(err).read()])
json.dump(results, sys.stdout)
"""

RUNS = {
    "claims": ["claims", "--paper", "toy_paper", "--json", "-"],
    "check": ["check", CLAIM, "--N", "33", "--M", "4", "--json", "-"],
    "teeth": ["teeth", "toy_paper", "--json", "-"],
    "report": ["report", "--quick", "--paper", "toy_paper", "--scheduler", "serial", "--out", "rep"],
}


def _run_all(folder: Path) -> None:
    """The toy paper installed in ``folder/site``, then :data:`RUNS` run from ``folder/runs`` with it on the path;
    their (exit status, stdout, stderr) in ``folder/runs.json``."""
    site, cwd = folder / "site", folder / "runs"
    (folder / "build").mkdir()
    cwd.mkdir()
    _install(site, folder / "build")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, "-c", COMMANDS, json.dumps(list(RUNS.values()))], capture_output=True,
                       text=True, timeout=limit(600), env=env, cwd=cwd)
    assert p.returncode == 0, p.stdout + p.stderr
    (folder / "runs.json").write_text(p.stdout)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess]:
    """``attnsim ARGS`` for each of :data:`RUNS` (the report in ``rep`` of the folder they ran in): one install
    and one run for the test run, whichever xdist workers these tests land on."""
    folder = once(tmp_path_factory, "toy-paper", _run_all)
    done = {name: subprocess.CompletedProcess(args, code, out, err)
            for (name, args), (code, out, err) in zip(RUNS.items(), json.loads((folder / "runs.json").read_text()))}
    done["report"].cwd = folder / "runs"
    return done


def test_claims_lists_the_toy_paper(runs) -> None:
    p = runs["claims"]
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert row["id"] == CLAIM and row["checker"] and row["text"]["calls"]["bound"] == "O(n)"


def test_check_and_teeth_run_the_toy_claim(runs) -> None:
    p = runs["check"]
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["verdict"] == "pass" and rec["counts"]["calls"] == rec["predicted"]["calls"] == 9
    p = runs["teeth"]
    assert p.returncode == 0, p.stdout + p.stderr
    (c,) = json.loads(p.stdout)["claims"]
    assert c["claim"] == CLAIM and c["ok"] and c["caught"] == c["registered"] == 4  # 3 own, 1 growth twin


def test_the_report_includes_the_toy_paper(runs) -> None:
    p = runs["report"]
    assert p.returncode == 0, p.stdout + p.stderr
    rep = p.cwd / "rep"
    md = (rep / "report.md").read_text()
    assert "#### A Toy Paper: Averages from Block Averages (`toy_paper`)" in md  # the front page
    assert f"### Proposition 1 — `{CLAIM}`" in md and "| calls | O(n) | n |" in md
    assert f'data-claim="{CLAIM}"' in (rep / "report.html").read_text()
