"""Growth twins (verify/twins/growth.py) and the single-record guard (verify/check.bound_entry): a resource's
measurement times sqrt(n) (never lifted to the bound) is caught by the growth verdict over the claim's own
sweep; times a constant it is not (a big-O bound without the paper's constant cannot fail on a constant); a
resource measured 0 everywhere is reported not caught, saying why; a frozen constant fails a later, larger
record only."""

from __future__ import annotations

from attnsim.paper_refs import Resource, all_claims, get
from attnsim.verify.check import bound_entry, on_growth_sweep, run_check
from attnsim.verify.growth import bounded_resources, judge_twin
from attnsim.verify.registry import all_checkers, get_checker
from attnsim.verify.teeth import run_twin
from attnsim.verify.twins import all_twins
from attnsim.verify.twins.growth import PREFIX, inflated

CLAIM = "two_heads.lemma_3_3"


def test_every_bounded_resource_of_every_checker_has_a_growth_twin():
    have = {(t.claim, t.name) for t in all_twins() if t.kind == "growth"}
    want = {(c, PREFIX + r) for c in all_checkers() for r in bounded_resources(c)}
    swept = {(c, f"{PREFIX}{r}@{name}") for c, chk in all_checkers().items() for name, ps in chk.param_sweeps
             for r in ps.resources}  # and one per resource of each sweep in another parameter (eps' - eps)
    assert want and swept and want | swept == have


def test_a_growth_twin_is_caught_by_the_deciding_evidence():
    (t,) = [t for t in all_twins() if t.claim == CLAIM and t.name == PREFIX + "oracle_dim"]
    r = run_twin(t)  # an exact count decides: the inflated count is off it at every size but n = 1
    assert r.outcome == "caught" and r.reason.startswith("exact count: failing points") and "!= exact" in r.reason
    assert r.constant_factor == "failing points"  # a constant is off the exact count too, and never "exceeds"


def test_a_constant_factor_does_not_fail_a_big_o_bound_by_growth(monkeypatch):
    from attnsim.verify import growth

    flat = [{"claim": "anna.def_ema", "verdict": "pass", "size": {"value": n}, "bounds": {"time": {
        "measured": 7.0 * n, "value": float(n)}}} for n in (16, 32, 64, 128)]
    monkeypatch.setattr(growth, "judge_broken", lambda c, r, b, s=0, sweep=None: growth.judge(c, r, flat))
    outcome, reason = judge_twin("anna.def_ema", "time", lambda: None)
    assert outcome == "missed" and reason.startswith("growth test: within"), reason


def test_a_growth_twin_multiplies_the_measurement_itself():
    """The twin's count is the unbroken count times sqrt(size) at every point of the sweep: nothing is lifted."""
    import math

    from attnsim.verify.growth import growth_points
    from attnsim.verify.twins.growth import _MEASURED

    pt = growth_points(CLAIM, True)[-1]
    plain = run_check(CLAIM, dict(pt.params), pt.numerics, pt.seed)
    with inflated(CLAIM, "oracle_dim", math.sqrt):
        broken = run_check(CLAIM, dict(pt.params), pt.numerics, pt.seed)
    size = plain["size"]["value"]
    assert broken["counts"]["oracle_dim"] == plain["counts"]["oracle_dim"] * math.sqrt(size)
    assert _MEASURED  # the unbroken measurement is shared, not re-run


def test_a_resource_measured_zero_everywhere_is_reported_not_caught_saying_why(monkeypatch):
    from attnsim.verify import growth

    zero = [{"claim": CLAIM, "verdict": "pass", "size": {"value": n}, "bounds": {"calls": {"measured": 0, "value": n}}}
            for n in (4, 8, 16, 32)]
    monkeypatch.setattr(growth, "judge_broken", lambda c, r, b, s=0, sweep=None: growth.judge(c, r, zero))
    outcome, reason = judge_twin(CLAIM, "calls", lambda: None)
    assert outcome == "missed" and "measured 0 at every size" in reason


def _entry(res: Resource, measured: float, size: float) -> tuple[dict, list[str]]:
    reasons: list[str] = []
    return bound_entry(res, {}, {"N": size}, measured, size, reasons), reasons


def test_a_frozen_constant_fails_a_larger_record_only():
    res = Resource("width", "N", constant=40.0, calibrated_at=512)
    e, why = _entry(res, 50 * 512, 512)  # at the calibration size: not judged by the guard
    assert e["guard"] == "at or below calibration size" and not why
    e, why = _entry(res, 39 * 4096, 4096)
    assert e["guard"] == "within" and not why and e["constant"] == "frozen"
    e, why = _entry(res, 41 * 4096, 4096)
    assert e["guard"] == "exceeds" and why and "frozen at size 512" in why[0]


def test_a_frozen_constant_says_nothing_off_its_growth_sweeps_parameters():
    # the fuzzer's Thm C.1 at eps' = 1/8 with the radix sort: work 103 x N d layers log N against 97 fitted on the
    # sweep at eps' = 0.95: a radix sort at a small gap takes more passes, and the constant does not carry over
    res = Resource("width", "N", constant=40.0, calibrated_at=512)
    reasons: list[str] = []
    e = bound_entry(res, {}, {"N": 4096}, 41 * 4096, 4096, reasons, calibrated_here=False)
    assert e["guard"] == "other parameters than its calibration's" and not reasons
    chk = get_checker("anna.thm_c_1")
    assert on_growth_sweep(chk, "N", chk.resolve({"layers": 1, "N": 999}))
    assert not on_growth_sweep(chk, "N", chk.resolve({"layers": 1, "N": 999, "eps1": 0.125, "sort": "radix"}))


def test_the_papers_constant_holds_at_every_size_and_no_constant_is_no_guard():
    res = Resource("load", "N", constant=1.0, stated_by="Section 2")
    e, why = _entry(res, 9, 8)
    assert e["guard"] == "exceeds" and "Section 2" in why[0] and e["constant"] == "paper"
    e, why = _entry(Resource("calls", "N"), 10**6, 8)
    assert e["guard"] == "no constant" and not why and e["ratio"] == 10**6 / 8


def test_no_frozen_constant_stands_beside_an_exact_count_or_the_proofs_upper_formula():
    """A resource with an exact count (or the proof's upper formula) is decided by it; a constant fitted once and
    frozen is for a bound without one (fails naming the resource that carries both)."""
    both = [f"{cid}.{name}" for cid, c in all_claims().items() for name, r in c.resources.items()
            if (r.exact or r.upper) and r.calibrated_at is not None]
    assert not both, f"frozen constants beside exact counts: {both}"


def test_paper_refs_constants_are_frozen_or_stated_and_guard_a_resource_without_an_exact_count():
    c = get("anna.thm_c_1").resources["work"]
    assert c.constant and c.calibrated_at and not c.exact
    assert get("anna.lemma_c_2").resources["max_load"].stated_by
    from attnsim.verify.growth import guard_summary

    recs = [{"size": {"value": n}, "bounds": {"work": {"guard": g}}}
            for n, g in ((64, "at or below calibration size"), (1024, "within"), (2048, "exceeds"))]
    assert guard_summary("anna.thm_c_1", "work", recs) == "97 x bound (frozen at N = 64): exceeded at 2048"
    assert guard_summary("anna.thm_c_1", "machines", recs) == "no constant"
