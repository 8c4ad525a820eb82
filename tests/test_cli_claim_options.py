"""A claim's parameters are real options of ``attnsim check CLAIM``: generated from the checker's parameter list
for every claim, shown in the help with their ranges in words, completed by the shell, given before or after the
claim, and refused in the same one line as before (``error: --M: ...``, exit 2). Building them imports only the
claim's own checker module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import invoke
from limits import limit

from attnsim.verify.cli.claim_options import PREFIX, build_options, claim_in
from attnsim.verify.registry import all_checkers

CLI = [sys.executable, "-m", "attnsim.verify.cli"]
OWN = {"--numerics", "--seed", "--min-bits", "--format", "--json", "--list-params", "--max-memory", "--max-time",
       "--help", "-h"}


@pytest.mark.parametrize("claim", sorted(all_checkers()))
def test_every_parameter_of_every_claim_is_an_option(claim):
    chk = all_checkers()[claim]
    options = build_options(chk)
    assert [o.opts for o in options] == [[p.flag] for p in chk.params]
    assert [o.name for o in options] == [PREFIX + p.name for p in chk.params]
    assert not OWN & {p.flag for p in chk.params}, "a claim parameter hides an option of the command"
    for o, p in zip(options, chk.params):
        assert o.claim_param is p and not o.is_flag  # a bool parameter takes true/false, as in Python
        assert str(p.default).lower() in o.help.lower()


def test_the_claim_is_found_among_options():
    assert claim_in(["--seed", "3", "two_heads.lemma_3_1", "--N", "8"], {"--seed"}, {"--seed"}) == "two_heads.lemma_3_1"
    assert claim_in(["--N", "8", "two_heads.lemma_3_1"], set(), {"--seed"}) == "two_heads.lemma_3_1"
    assert claim_in(["--N=8", "--list-params", "x.y"], set(), {"--list-params"}) == "x.y"
    assert claim_in(["--seed", "3"], {"--seed"}, {"--seed"}) is None


@pytest.mark.parametrize("args, message", [
    (["--M", "1"], "error: --M: must be >= 2, got 1"),
    (["--M"], "error: --M: missing value"),
    (["--M", "--N", "8"], "error: --M: missing value"),
    (["--M=abc"], "error: --M: expected int, got 'abc'"),
    (["--scheme", "bogus"], "error: --scheme: must be one of paper, fused; got 'bogus'"),
    (["--nope", "3"], "error: --nope: not a parameter of two_heads.lemma_3_1 (it takes N, M, d, scheme, length, "
                      "psi, input, input_file, decode)"),
])
def test_a_bad_value_is_one_line_naming_the_option(capfd, args, message):
    rc, out, err = invoke(["check", "two_heads.lemma_3_1", *args], capfd)
    assert (rc, out, err.strip()) == (2, "", message)


def test_a_power_of_two_domain_is_shown_and_its_refusal_says_why(capfd):
    rc, out, err = invoke(["check", "anna.lemma_b_12", "--list-params"], capfd)
    assert rc == 0 and "--N INT          input words (a power of two, at least 4)" in out, out
    rc, out, err = invoke(["check", "anna.lemma_b_12", "--P", "24"], capfd)
    assert (rc, err.strip()) == (2, "error: --P: must be a power of two (the machines share N, a power of two, in "
                                    "equal blocks), got 24")


@pytest.mark.parametrize("args, message", [
    (["two_heads.lemma_3_3", "--H", "3"], "error: --H: must divide d = 8 (each of the H heads gets d/H coordinates), "
                                          "got 3"),
    (["anna.lemma_b_13", "--P", "7"], "error: --P: must divide N = 1024 (the machines split the N tokens in equal "
                                      "blocks), got 7"),
    (["tint.linear_forward", "--K", "3"], "error: --K: must divide D = 8 (the K prefixes split the width D), got 3"),
])
def test_a_value_that_must_divide_another_is_refused_in_one_line(capfd, args, message):
    rc, out, err = invoke(["check", *args], capfd)
    assert (rc, out, err.strip()) == (2, "", message)


def test_parameters_may_come_before_the_claim(capfd):
    rc, out, err = invoke(["check", "--N", "8", "--M=4", "--d", "2", "two_heads.lemma_3_1", "--format", "md"], capfd)
    assert rc == 0, err
    assert "N=8, M=4, d=2" in out and "verdict: pass" in out


def test_a_boolean_parameter_takes_a_value(capfd):
    rc, _, err = invoke(["check", "two_heads.lemma_3_3", "--causal", "maybe"], capfd)
    assert rc == 2 and err.strip() == "error: --causal: expected true/false, got 'maybe'"


def _complete(words: str, cword: int) -> list[str]:
    env = {**os.environ, "_ATTNSIM_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    script = Path(sys.executable).with_name("attnsim")  # the installed script beside this interpreter
    p = subprocess.run([str(script) if script.exists() else "attnsim"], env=env, capture_output=True, text=True,
                       timeout=limit(120))
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def test_the_shell_completes_claims_options_and_choices():
    assert _complete("attnsim check two_heads.lemma_3", 2) == ["two_heads.lemma_3_1", "two_heads.lemma_3_3"]
    assert "--scheme" in _complete("attnsim check two_heads.lemma_3_1 --sc", 3)
    assert _complete("attnsim check two_heads.lemma_3_1 --scheme ", 4) == ["paper", "fused"]


def test_help_imports_only_the_claims_own_module():
    code = ("import sys\nfrom attnsim.verify.cli.app import main\ntry:\n main(['check', 'two_heads.lemma_3_1', '-h'])\n"
            "except SystemExit as e:\n assert e.code == 0\n"
            "heavy = sorted(m for m in ('torch', 'scipy', 'attnsim.verify.claims.tint', 'attnsim.verify.claims.anna')"
            " if m in sys.modules)\nprint(heavy)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=limit(120))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "[]"
    assert "--decode TEXT" in p.stdout


def test_every_checker_loads_without_torch_or_scipy_stats():
    """Every command loads the registry of checkers; importing torch and scipy.stats with it took about 2 of the
    5 CPU s of a small check of Lemma 3.1. They are loaded by the checks that use them, not by the registry."""
    code = ("import sys\nfrom attnsim.verify.registry import all_checkers\nassert all_checkers()\n"
            "print(sorted(m for m in ('torch', 'scipy.stats') if m in sys.modules))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=limit(120))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == "[]"
