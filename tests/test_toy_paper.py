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

ROOT = Path(__file__).resolve().parents[1]
CLAIM = "toy_paper.block_mean"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/toy_paper installed by pip into a folder of its own: with this environment's setuptools when it
    has a recent one (no network), else in pip's own build environment (setuptools from PyPI)."""
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build")
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
    return target


def _attnsim(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "attnsim.verify.cli", *args], capture_output=True, text=True,
                          timeout=limit(300), env=env, cwd=cwd)


def test_claims_lists_the_toy_paper(site: Path) -> None:
    p = _attnsim(site, "claims", "--paper", "toy_paper", "--json", "-")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)
    assert row["id"] == CLAIM and row["checker"] and row["text"]["calls"]["bound"] == "O(n)"


def test_check_and_teeth_run_the_toy_claim(site: Path) -> None:
    p = _attnsim(site, "check", CLAIM, "--N", "33", "--M", "4", "--json", "-")
    assert p.returncode == 0, p.stderr
    rec = json.loads(p.stdout)
    assert rec["verdict"] == "pass" and rec["counts"]["calls"] == rec["predicted"]["calls"] == 9
    p = _attnsim(site, "teeth", "toy_paper", "--json", "-")
    assert p.returncode == 0, p.stdout + p.stderr
    (c,) = json.loads(p.stdout)["claims"]
    assert c["claim"] == CLAIM and c["ok"] and c["caught"] == c["registered"] == 4  # 3 own, 1 growth twin


def test_the_report_includes_the_toy_paper(site: Path, tmp_path: Path) -> None:
    p = _attnsim(site, "report", "--quick", "--paper", "toy_paper", "--scheduler", "serial", "--out",
                 str(tmp_path / "rep"))
    assert p.returncode == 0, p.stdout + p.stderr
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "#### A Toy Paper: Averages from Block Averages (`toy_paper`)" in md  # the front page
    assert f"### Proposition 1 — `{CLAIM}`" in md and "| calls | O(n) | n |" in md
    assert f'data-claim="{CLAIM}"' in (tmp_path / "rep" / "report.html").read_text()
