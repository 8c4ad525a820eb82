"""theory.symbolic / conditions / catalog and `attnsim bounds`: containment, factors, solved conditions."""

from __future__ import annotations

import json
import sys

import pytest
import sympy as sp

from attnsim.paper_refs import Claim, Resource, all_claims, get, load
from attnsim.theory.bounds import contained
from attnsim.theory.conditions import conditions, minimum, minimum_value, solve
from attnsim.theory.formulas import FormulaError, evaluate, parse
from attnsim.theory.symbolic import LOOSE, OUTSIDE, TIGHT, analyse


def claim(exact: str, bound: str, defs: dict | None = None) -> Claim:
    return Claim("two_heads.test", "two_heads", "Test", "claim", "a test claim", limit="n",
                 definitions=defs or {"n": "N/M"}, resources={"calls": Resource("calls", bound, exact)})


def test_lemma_3_1_calls_tight_with_scheme_constant():
    t = analyse(get("two_heads.lemma_3_1"), "calls")
    assert t.verdict == TIGHT and t.leading_constant == parse("2 - fused")
    assert t.factors == {"fused": "count only"} and t.factors_exact
    assert r"\in O\left(n^{2}\right)" in t.latex()["statement"]


def test_width_factor_is_bounded_not_exact():
    t = analyse(get("two_heads.lemma_3_1"), "oracle_dim")
    assert t.verdict == TIGHT and t.factors["d"] == "bounded (-> 2)" and not t.factors_exact


@pytest.mark.parametrize("exact, bound, verdict, lead", [
    ("3*n**2*H*L/(Hp*Lp)", "n**2*H*L/(Hp*Lp)", TIGHT, "3"),
    ("n", "n**2", LOOSE, "0"),
    ("n**3", "n**2", OUTSIDE, "oo"),
    ("n**2 + 5*n*log(n)", "n**2", TIGHT, "1"),
])
def test_containment_verdicts(exact, bound, verdict, lead):
    t = analyse(claim(exact, bound), "calls")
    assert t.verdict == verdict and t.leading_constant == sp.sympify(lead)


def test_broken_per_head_factor_is_flagged():
    """A count that forgets to divide by the oracle's heads Hp: finite in n, but the Hp factor grows."""
    t = analyse(claim("n**2*H*L/Lp", "n**2*H*L/(Hp*Lp)"), "calls")
    assert t.verdict == TIGHT and t.factors["Hp"] == "grows" and t.growing_factors == ["Hp"]
    assert not t.factors_exact and t.factors["H"] == t.factors["L"] == "exact"
    c = contained(claim("n**3", "n**2"), "calls")
    assert c is not None and not c.finite


def test_bound_only_and_unparsable():
    bound_only = [
        (c, r) for c in all_claims().values() for r, res in c.resources.items() if res.bound and not res.exact
    ]
    assert bound_only, "the registry has resources with a bound and no exact count"
    assert all(analyse(c, r).verdict.startswith("bound only") for c, r in bound_only[:5])
    assert analyse(claim("n**(", "n"), "calls").verdict.startswith("error")


def test_thm_4_1_minimum_m_solved():
    c = get("two_heads.thm_4_1")
    conds = conditions(c)
    C, N, eps, D, d = (sp.Symbol(s, positive=True) for s in ("C", "N", "eps", "D", "d"))
    assert [x.variable for x in conds] == ["M", "M"]
    assert sp.simplify(conds[0].lower - 8 * C**4 * sp.log(40 * N) / eps**2) == 0
    assert sp.simplify(conds[1].lower - 128 * (sp.log(d) + sp.log(40) + sp.log(N)) / (eps**2 * D**2)) == 0
    vals = dict(C=2, eps=sp.Rational(1, 2), D=sp.Rational(1, 2), d=4, N=1000)
    m = minimum_value(c, vals)
    assert m == int(sp.ceiling(minimum(c).subs({sp.Symbol(k, positive=True): v for k, v in vals.items()})))
    with pytest.raises(FormulaError, match="needs values"):
        minimum_value(c, dict(C=2))


def test_conditions_from_extra_table_and_direction():
    c = Claim("two_heads.x", "two_heads", "X", "claim", "s", extra={"conditions": ["eps**2*M >= 4*log(N)"]})
    assert sp.simplify(conditions(c)[0].lower - 4 * sp.log(sp.Symbol("N", positive=True))
                       / sp.Symbol("eps", positive=True) ** 2) == 0
    with pytest.raises(FormulaError, match="from above"):
        solve("M <= N", "M")
    assert conditions(get("two_heads.lemma_3_1")) == []


def run(capsys, monkeypatch, *args: str) -> tuple[int, str, str]:
    """``attnsim ARGS`` in this process (its real entry point, error handling included)."""
    from attnsim.verify.cli.app import main

    monkeypatch.setattr(sys, "argv", ["attnsim", *args])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_bounds_json_lists_every_claim(capsys, monkeypatch):
    code, out, err = run(capsys, monkeypatch, "bounds", "--paper", "two_heads", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["id"] for r in rows] == [c.id for c in load("two_heads").claims]
    for r in rows:
        assert r["resources"], r["id"]
        for res in r["resources"].values():
            assert {"bound", "exact", "leading_constant", "verdict", "latex"} <= set(res)
    lemma = next(r for r in rows if r["id"] == "two_heads.lemma_3_1")
    assert lemma["resources"]["calls"]["verdict"] == "tight"
    assert lemma["resources"]["calls"]["leading_constant"] == "2 - fused"
    assert next(r for r in rows if r["id"] == "two_heads.thm_4_1")["minimum"]["value"].startswith("Max(")


def test_bounds_tex_md_and_bad_format(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, "bounds", "--paper", "two_heads", "--format", "tex")
    assert code == 0 and r"\begin{align*}" in out and r"\texttt{two\_heads.lemma\_3\_1}" in out
    code, out, _ = run(capsys, monkeypatch, "bounds", "--paper", "two_heads")
    row = "| calls | O(n²) | 2·n² (paper scheme); n² (fused scheme) | 2 (paper scheme); 1 (fused scheme) | tight |"
    assert code == 0 and row in out
    code, _, err = run(capsys, monkeypatch, "bounds", "--format", "pdf")
    assert code == 2 and err.count("\n") == 1 and "--format" in err


def test_a_resource_with_the_proofs_upper_formula_is_analysed_by_it_not_shown_as_bound_only():
    """Theory tables hold an upper-only resource's formula against its bound, marked as an upper formula (≤)."""
    from attnsim.theory.symbolic import claim_theory
    from attnsim.verify.cli.bounds import table_rows

    c = get("anna.alg_2")
    assert c.resources["memory_words"].upper and not c.resources["memory_words"].exact
    t = claim_theory(c)["memory_words"]
    assert (t.of, t.verdict) == ("upper", "tight") and t.exact is not None
    assert r"\leq" in t.latex()["statement"] and t.as_dict()["of"] == "upper"
    row = next(r for r in table_rows([{"id": c.id, "label": c.label, "resources": {"memory_words": t.as_dict()}}]))
    assert row[4].startswith("≤ ")
    assert claim_theory(get("anna.lemma_b_5"))  # claims without upper formulas are analysed as before
    assert all(v.of == "exact" for v in claim_theory(get("anna.lemma_b_5")).values())


def test_a_drawn_float_exponent_is_evaluated_to_fifty_digits_and_a_simple_one_exactly():
    # eps' = 0.4856601142699806 has no rational below 10^15: sympy's exact 250^(p/q) would build an integer too large
    # for memory (a fuzzer's draw once took Thm C.1 past 9 GiB); 0.95 = 19/20 stays exact.
    values = {"N": 250, "eps1": 0.4856601142699806, "s_scale": 104.0919443887434}
    drawn = evaluate("ceiling(s_scale*N**eps1)", {}, values)
    assert drawn == 1521 and isinstance(drawn, sp.Integer)
    assert evaluate("N**eps1", {}, values) == pytest.approx(250 ** 0.4856601142699806)
    simple = evaluate("N**eps1", {}, {"N": 2048, "eps1": 0.95})
    assert simple == sp.Integer(2048) ** sp.Rational(19, 20) and not isinstance(simple, sp.Float)
