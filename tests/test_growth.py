"""Growth verdicts (verify/growth.py): the strongest evidence decides (exact count, the proof's upper formula,
the growth test robust to curvature), only correct points are measured, on made-up sweeps, a real sweep and the
CLI; the size rule makes a one-size resource a failing row."""

from __future__ import annotations

import json
import math

import pytest

from attnsim.verify.growth import VERDICTS, evidence_of, judge, judge_claim, run_growth, size_rule, verdict_counts
from attnsim.verify.registry import all_checkers

CLAIM, RESOURCE = "anna.def_ema", "time"  # d N log N, no exact count, no constant: the growth test decides


def _records(sizes, measured, bound):
    return [{"claim": CLAIM, "verdict": "pass", "size": {"var": "N", "value": n},
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


def test_sizes_whose_record_ran_outside_the_stated_range_are_marked_and_the_verdict_stays_the_evidences():
    from attnsim.verify.growth_rules import OUTSIDE_MARK, size_cells
    from attnsim.verify.report.sections.growth import claim_growth

    records = _records(SIZES, lambda n: n, lambda n: n)
    for r in records[:2]:
        r["extra"] = {"in_stated_range": False}
    records[2]["extra"] = {"in_stated_range": True}
    g = judge(CLAIM, RESOURCE, records)
    assert g.outside == (4.0, 8.0) and g.verdict == "within"
    assert size_cells(g) == [f"4{OUTSIDE_MARK}", f"8{OUTSIDE_MARK}", "16", "32"]
    assert "partial evidence" in claim_growth(CLAIM, {CLAIM: [g]})
    plain = judge(CLAIM, RESOURCE, _records(SIZES, lambda n: n, lambda n: n))
    assert plain.outside == () and "partial evidence" not in claim_growth(CLAIM, {CLAIM: [plain]})


def test_zero_everywhere_is_within_and_counts_cover_every_verdict():
    g = judge(CLAIM, RESOURCE, _records(SIZES, lambda n: 0, lambda n: n))
    assert g.verdict == "within" and "zero" in g.why
    assert verdict_counts([g]) == {"within": 1, "exceeds": 0, "failing points": 0, "unmeasured growth": 0}
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


def test_a_real_sweep_is_decided_by_the_exact_counts():
    claim = "two_heads.lemma_3_3"  # bound jobs/(Hp*Lp): the fastest sweep
    records, results = run_growth(claim, quick=True)
    assert [r["size"]["value"] for r in records] == [4, 8, 16, 32]
    assert {g.resource for g in results} == {"calls", "abstract_calls", "oracle_dim"}
    assert all(g.verdict == "within" and g.evidence == "exact count" for g in results), results
    assert all("measured == the exact count" in g.why and "tight" in g.why for g in results)
    assert judge_claim(claim, records) == results


def test_cli_json_to_stdout_only(capsys):
    from attnsim.verify.cli.app import app

    rc = app(["growth", "two_heads.lemma_3_3", "--quick", "--json", "-"], standalone_mode=False)
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["claim"] == "two_heads.lemma_3_3" and doc["counts"]["within"] == 3
    (calls,) = [r for r in doc["resources"] if r["resource"] == "calls"]
    assert calls["sizes"] == [4, 8, 16, 32] and calls["verdict"] == "within" and calls["slope"] == 0.0
    assert calls["evidence"] == "exact count" and calls["failing"] == []


def _loose(sizes, factor):
    """anna.thm_4_2's rounds as a sweep that sits where the bound is loose: measured / bound falls like n^-0.8,
    and the measurement equals the proof's exact count (the record's ``predicted``) times ``factor(n)``."""
    exact = {n: 300 * n**0.2 for n in sizes}
    return [{"claim": "anna.thm_4_2", "verdict": "pass", "size": {"var": "N", "value": n},
             "predicted": {"rounds": exact[n]},
             "containment": {"rounds": {"verdict": "tight", "leading_constant": "1"}},
             "bounds": {"rounds": {"measured": exact[n] * factor(n), "value": float(n)}}} for n in sizes]


def test_an_exact_count_decides_whatever_the_slope_of_measured_over_bound():
    sizes = (128, 256, 512, 1024)
    g = judge("anna.thm_4_2", "rounds", _loose(sizes, lambda n: 1.0))
    assert g.verdict == "within" and g.evidence == "exact count" and g.slope == pytest.approx(-0.8)
    assert g.exact_slope == 0.0
    for factor in (lambda n: 7.0, math.sqrt):  # off the exact count by any factor: exceeds, however loose the bound
        g = judge("anna.thm_4_2", "rounds", _loose(sizes, factor))
        assert g.verdict == "exceeds" and "fails at N = 128, 256, 512, 1024" in g.why
    rising = [{**r, "bounds": {"rounds": {"measured": r["predicted"]["rounds"], "value": 1.0}}}
              for r in _loose(sizes, lambda n: 1.0)]
    assert judge("anna.thm_4_2", "rounds", rising).verdict == "within"  # measured / bound rising: shown, not deciding


def test_the_toy_count_with_a_negative_lower_order_term_is_within():
    """N r - r(r-1)/2 score evaluations against O(N r), r = 8: measured / bound climbs 0.94 -> 0.99 toward 1. Its
    exact count decides; and the growth test alone (no exact count) sees curvature, not growth."""
    count = lambda n: n * 8 - 8 * 7 / 2  # noqa: E731
    for sizes in ((56, 112, 224, 448), (16, 32, 64, 128, 256)):
        g = judge(CLAIM, RESOURCE, _records(sizes, count, lambda n: 8 * n))
        assert g.low > 0 and g.verdict == "within" and "levels off" in g.why, g
    exact = _loose((56, 112, 224, 448), lambda n: 1.0)
    for r in exact:
        n = r["size"]["value"]
        r["predicted"]["rounds"] = count(n)
        r["bounds"]["rounds"] = {"measured": count(n), "value": 8.0 * n}
    assert judge("anna.thm_4_2", "rounds", exact).verdict == "within"


def test_the_growth_test_sees_powers_and_logs_that_persist():
    for sizes in ((4, 8, 16, 32), (32, 64, 128, 256, 512)):
        for grows in (math.sqrt, lambda n: 1 + math.log(n), math.log):
            g = judge(CLAIM, RESOURCE, _records(sizes, lambda n, f=grows: n * f(n), lambda n: n))
            assert g.verdict == "exceeds" and "persists" in g.why, (sizes, g)


def test_the_proofs_upper_formula_decides_where_no_exact_count_exists():
    assert evidence_of("anna.alg_1", "memory_words") == "proof's inequality"
    share = {32: 0.39, 64: 0.43, 128: 0.47, 256: 0.51, 512: 0.51}  # of the buckets a table fills: rises toward 1

    def recs(scale):
        return [{"claim": "anna.alg_1", "verdict": "pass", "size": {"var": "N", "value": n},
                 "containment": {"memory_words": {"verdict": "tight", "leading_constant": "3"}},
                 "bounds": {"memory_words": {"measured": share[n] * scale * 10 * n, "value": 3.0 * n,
                                             "upper": {"value": 10.0 * n}}}} for n in share]
    g = judge("anna.alg_1", "memory_words", recs(1.0))
    assert g.verdict == "within" and g.low > 0 and "measured <= the proof's upper formula" in g.why
    assert g.upper == tuple(10.0 * n for n in share)
    g = judge("anna.alg_1", "memory_words", recs(2.5))
    assert g.verdict == "exceeds" and "fails at N = 64, 128, 256, 512" in g.why


def test_a_failing_point_is_listed_and_never_measured():
    recs = _records((4, 8, 16, 32), lambda n: n * math.sqrt(n), lambda n: n)
    recs[3] = {**recs[3], "verdict": "fail", "reasons": ["output does not agree with the reference (error bits 0)"]}
    recs.append({"claim": CLAIM, "verdict": "fail", "size": {"value": 64}, "reasons": ["error: N too large"]})
    g = judge(CLAIM, RESOURCE, recs)
    assert g.verdict == "failing points" and g.sizes == (4, 8, 16)
    assert g.failing == ("N = 32: output does not agree with the reference (error bits 0)",)
    assert g.refused == ("N = 64: error: N too large",) and not g.ok


def test_a_construction_bug_that_breaks_outputs_gives_failing_points_and_no_measurement():
    """A planted construction bug (the packed call's outputs come back in reverse job order) over the claim's
    growth sweep: every point where the outputs disagree is listed with its reason, and no size is measured."""
    from attnsim.verify.growth import judge_broken
    from attnsim.verify.twins import all_twins

    (t,) = [t for t in all_twins() if t.claim == "two_heads.lemma_3_3" and t.name == "slots_reversed"]
    g = judge_broken("two_heads.lemma_3_3", "calls", t.breaks)
    assert g.verdict == "failing points" and not g.ok and g.failing
    assert all("does not agree" in line for line in g.failing), g.failing
    broken = {float(line.split(":")[0].split("=")[1]) for line in g.failing}
    assert not broken & set(g.sizes)  # a failing size is never a measurement
