"""attnsim teeth runs each claim's unbroken check first: a failing baseline is the claim failing; twins run in a
forked child, so a run that ends the process is one refused line; the front page lists bounds not tight."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from attnsim.verify.report.not_tight import not_tight, not_tight_lines
from attnsim.verify.teeth import run_teeth, summary
from attnsim.verify.twins.two_heads_breaks import drop_term


def test_a_construction_broken_unbroken_fails_its_baseline_not_its_twins() -> None:
    (good,) = run_teeth(["two_heads.lemma_3_1"], quick=True)
    assert good.ok and good.baseline and not good.baseline_failing
    with drop_term():  # eq. (1) broken in the construction itself: the forked runs inherit the break
        (bad,) = run_teeth(["two_heads.lemma_3_1"], quick=True)
    assert bad.caught == len(bad.results)  # its twins are "caught" all the same ...
    assert not bad.ok and bad.problem.startswith("the claim fails unbroken (baseline)")  # ... but the claim fails
    assert summary([bad])["baseline_failing"] == ["two_heads.lemma_3_1"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="a forked child is what turns an abort into a line")
def test_a_run_that_aborts_the_process_is_one_line() -> None:
    """In a fresh interpreter: a test worker may have other threads running, where ``in_child`` runs the work in
    its own process (a fork would copy their locks) and the abort would end the worker."""
    script = ("import os\nfrom attnsim.verify.isolate import Isolated, in_child\n"
              "try:\n    in_child(os.abort, what='the twin')\nexcept Isolated as exc:\n    print(exc)\n"
              "print(in_child(sum, [1, 2]))\n")
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    lines = p.stdout.strip().splitlines()
    assert p.returncode == 0 and "SIGABRT" in lines[0] and lines[1] == "3", p.stdout + p.stderr


def test_bounds_beaten_by_a_growing_factor_are_listed() -> None:
    rec = {"claim": "two_heads.lemma_3_1", "containment": {
        "calls": {"verdict": "within bound (not tight)", "leading_constant": "0", "limit": "n"},
        "rounds": {"verdict": "tight", "leading_constant": "1", "limit": "n"}}}
    (row,) = not_tight([rec, rec])
    assert (row["resource"], row["limit"], row["checks"]) == ("calls", "0", 2)
    assert any("bound not tight here: 0 as n" in line for line in not_tight_lines([rec]))
    assert "tight" in not_tight_lines([])[2]
