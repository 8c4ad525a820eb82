"""Growth verdicts (verify/growth.py): the slope rule on made-up sweeps, a real sweep, the CLI, and the
size rule that makes a one-size resource a failing row."""

from __future__ import annotations

import json
import math

import pytest

from attnsim.verify.growth import VERDICTS, judge, judge_claim, run_growth, size_rule, verdict_counts
from attnsim.verify.registry import all_checkers

CLAIM, RESOURCE = "two_heads.lemma_3_3", "calls"  # bound jobs/(Hp*Lp): the fastest sweep


def _records(sizes, measured, bound):
    return [{"claim": CLAIM, "size": {"var": "jobs", "value": n},
             "bounds": {RESOURCE: {"measured": measured(n), "value": bound(n)}}} for n in sizes]


SIZES = (4, 8, 16, 32)


def test_a_constant_factor_is_within_and_a_growing_one_exceeds():
    for c in (1, 3, 1000):  # a constant moves the intercept only: a big-O bound cannot fail on it
        g = judge(CLAIM, RESOURCE, _records(SIZES, lambda n, c=c: c * n, lambda n: n))
        assert g.verdict == "within" and g.slope == 0.0, g
    g = judge(CLAIM, RESOURCE, _records(SIZES, lambda n: n * math.sqrt(n), lambda n: n))
    assert g.verdict == "exceeds" and g.slope == pytest.approx(0.5) and g.low > 0
    g = judge(CLAIM, RESOURCE, _records(SIZES, lambda n: n * (1 + math.log(n)), lambda n: n))
    assert g.verdict == "exceeds" and g.low > 0  # a log factor is growth too


def test_noise_around_a_flat_ratio_is_within():
    wobble = {4: 1.1, 8: 0.9, 16: 1.05, 32: 0.95}
    g = judge(CLAIM, RESOURCE, _records(SIZES, lambda n: wobble[n] * n, lambda n: n))
    assert g.verdict == "within" and g.low < 0 < g.high


def test_too_few_sizes_or_too_narrow_a_span_is_unmeasured_growth():
    assert judge(CLAIM, RESOURCE, _records((16,), lambda n: n, lambda n: n)).verdict == "unmeasured growth"
    g = judge(CLAIM, RESOURCE, _records((4, 5, 6, 7), lambda n: n, lambda n: n))
    assert g.verdict == "unmeasured growth" and "span" in g.why
    assert size_rule([1, 2, 4, 8]) is None and "3 distinct" in size_rule([1, 1, 2, 8])
    missing = _records(SIZES, lambda n: n, lambda n: n)
    for r in missing:
        r["bounds"][RESOURCE]["measured"] = None
    assert judge(CLAIM, RESOURCE, missing).verdict == "unmeasured growth"


def test_zero_everywhere_is_within_and_counts_cover_every_verdict():
    g = judge(CLAIM, RESOURCE, _records(SIZES, lambda n: 0, lambda n: n))
    assert g.verdict == "within" and "zero" in g.why
    assert verdict_counts([g]) == {"within": 1, "exceeds": 0, "unmeasured growth": 0}
    assert tuple(verdict_counts([])) == VERDICTS


def test_every_growth_grid_has_four_sizes_spanning_eight_times():
    from attnsim.paper_refs import get
    from attnsim.verify.check import record_size

    for cid, chk in all_checkers().items():
        if chk.growth_grid is None:
            continue
        for quick in (True, False):
            sizes = []
            for p in chk.growth_grid(quick):
                values = {k: v for k, v in chk.resolve({k: v for k, v in p.items()
                                                         if k not in ("numerics", "seed")}).items()
                          if isinstance(v, (int, float)) and not isinstance(v, bool)}
                sizes.append(record_size(get(cid), {**values, "strict": 0}))  # the paper's length convention
            assert size_rule(sizes) is None, (cid, quick, sizes)


def test_a_real_sweep_judges_every_bounded_resource():
    records, results = run_growth(CLAIM, quick=True)
    assert [r["size"]["value"] for r in records] == [4, 8, 16, 32]
    assert {g.resource for g in results} == {"calls", "abstract_calls", "oracle_dim"}
    assert all(g.verdict == "within" for g in results), results
    assert judge_claim(CLAIM, records) == results


def test_cli_json_to_stdout_only(capsys):
    from attnsim.verify.cli.app import app

    rc = app(["growth", CLAIM, "--quick", "--json", "-"], standalone_mode=False)
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["claim"] == CLAIM and doc["counts"]["within"] == 3
    (calls,) = [r for r in doc["resources"] if r["resource"] == "calls"]
    assert calls["sizes"] == [4, 8, 16, 32] and calls["verdict"] == "within" and calls["slope"] == 0.0


def _loose(sizes, factor):
    """anna.thm_4_2's rounds as a sweep that sits where the bound is loose: measured / bound falls like n^-0.8,
    and the measurement equals the proof's exact count (the record's ``predicted``) times ``factor(n)``."""
    exact = {n: 300 * n**0.2 for n in sizes}
    return [{"claim": "anna.thm_4_2", "size": {"var": "N", "value": n}, "predicted": {"rounds": exact[n]},
             "bounds": {"rounds": {"measured": exact[n] * factor(n), "value": float(n)}}} for n in sizes]


def test_growth_in_a_loose_bounds_slack_is_seen_against_the_exact_count():
    sizes = (128, 256, 512, 1024)
    g = judge("anna.thm_4_2", "rounds", _loose(sizes, lambda n: 1.0))
    assert g.verdict == "within" and g.slope == pytest.approx(-0.8) and g.exact_slope == 0.0
    g = judge("anna.thm_4_2", "rounds", _loose(sizes, lambda n: 7.0))  # a constant: within both fits
    assert g.verdict == "within" and g.exact_slope == 0.0
    g = judge("anna.thm_4_2", "rounds", _loose(sizes, math.sqrt))
    assert g.high < 0  # against the bound alone sqrt(n) hides in the slack
    assert g.verdict == "exceeds" and g.exact_low > 0 and "against the exact count" in g.why
