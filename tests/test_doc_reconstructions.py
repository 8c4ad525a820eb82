"""The figures of docs/reconstructions.md, read off the page and recomputed from the code.

Where a paper leaves a step open, the page says what attnsim chose; its figures are the choices' counts and
constants: the oracle's length under the two conventions, the causal and window call counts of Two Heads (Thm 3.5,
Thm 5.1), the key codes of Thm 4.2, the hidden constants of ANNA's Thm A.1, the experiments' settings and the
angular hashes' collision chances, TinT's prefix sets and widths, and the hardness demo's two cases. The trials told
as history (the token errors after 1,500 and 250 steps) and the trained surrogate's angles (minutes of training)
are not held here; GPT-2's LinFwd count is held by tests/tint/test_size.py.
"""

from __future__ import annotations

import inspect
import math
import re
from functools import cache
from math import comb

import numpy as np
import pytest
import sympy as sp
from doc_page import Page
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_multiplication_application,
    parse_expr,
    standard_transformations,
)

from attnsim.paper_refs import all_claims
from attnsim.paper_refs import get as get_claim
from attnsim.sim.errors import AttnsimError
from attnsim.sim.tint import builder
from attnsim.sim.tint.aux_model import Approx
from attnsim.sim.tint.configs import PUBLISHED
from attnsim.sim.tint.linear_attention import sink_score
from attnsim.sim.two_heads import hardness
from attnsim.sim.two_heads.converse import code_length
from attnsim.theory import tint_size
from attnsim.theory.lsh import HYPERPLANE_COLLISION, proof_parameters, u
from attnsim.verify.check import run_check
from attnsim.verify.experiments import induction, match2
from attnsim.verify.experiments.tasks import BINS, Match2Data, induction_batch
from attnsim.verify.lsh_sensitivity import cross_polytope_collisions
from attnsim.verify.registry import UsageError

_PAGE = Page("reconstructions.md")
PAGE = _PAGE.text
TEXT = _PAGE.flat
said = _PAGE.said
WORDS = {"two": 2, "four": 4, "twelve": 12, "eighteen": 18}
SUPERSCRIPT = {"¹": 1, "²": 2, "³": 3, "⁴": 4}


def formula(text: str) -> sp.Expr:
    """A formula as the page writes it (·, −, ², ⌈⌉, Greek letters, implicit products) as a sympy expression."""
    for a, b in (("·", "*"), ("−", "-"), ("²", "^2"), ("⌈", "ceiling("), ("⌉", ")"), ("β", "beta"), ("ε′", "eps1"),
                 ("ε", "eps"), ("ρ", "rho"), ("{", "("), ("}", ")")):
        text = text.replace(a, b)
    names = {n: sp.Symbol(n, positive=True) for n in re.findall(r"[A-Za-z_]\w*", text)
             if n not in ("exp", "log", "ceiling")}
    return parse_expr(text, local_dict=names, transformations=standard_transformations
                      + (implicit_multiplication_application, convert_xor))


def value(expr: sp.Expr, **values: float) -> float:
    return float(expr.subs({sp.Symbol(k, positive=True): v for k, v in values.items()}))


@cache
def counts(claim: str, **params) -> dict:
    """The measured counts of one exact check (which must pass)."""
    r = run_check(claim, params, "exact", 0)
    assert r["verdict"] == "pass", r["reasons"]
    return r["counts"]


def test_anna_numbering():
    pairs = re.findall(r"Thm (\d\.\d) = ([A-F]\.\d)", said(r"ANNA follows the arXiv version \(([^)]*)\)")[0])
    assert len(pairs) == 3
    labels = [c.label for c in all_claims().values() if c.paper == "anna"]
    for main, appendix in pairs:
        assert any(label.startswith(f"Theorem {main}") and appendix in label for label in labels), (main, appendix)


# -- Two Heads ---------------------------------------------------------------------------------------------------
def test_oracle_length_under_the_two_conventions():
    """Lemma 3.1 at N = 13, M = 4: calls 2 n² with n blocks of M (paper) or of M − 1 (strict)."""
    (paper,) = said(r"``paper`` \(blocks of M, ``max_len = M \+ (\d)``\)")
    (strict,) = said(r"``strict`` \(``max_len = M``, blocks of M − (\d), so ⌈N/\(M − \d\)⌉ blocks")
    N, M = 13, 4
    for length, extra, block in (("paper", int(paper), M), ("strict", 0, M - int(strict))):
        c = counts("two_heads.lemma_3_1", N=N, M=M, d=2, length=length)
        assert c["oracle_len"] == M + extra and c["calls"] == 2 * math.ceil(N / block) ** 2, length


def test_the_causal_count():
    lhs, rhs = map(formula, said(r"the causal count is (4·n\(n − 1\)/2 \+ 2n) = (2n²) calls for n = N/M"))
    assert sp.expand(lhs - rhs) == 0
    for length, block in (("paper", 4), ("strict", 3)):  # one head and layer: the count per head
        c = counts("two_heads.thm_3_5", N=12, M=4, d=2, H=1, L=1, Hp=1, Lp=1, length=length)
        assert c["calls"] == value(rhs, n=math.ceil(12 / block)), length


def test_the_window_count():
    per_head = formula(said(r"That is (2 \+ 4·⌈\(N − s − r\)/C⌉) calls per head")[0])
    chunk = formula(said(r"cuts the remaining queries into chunks of C = (b − s − r)")[0])
    N, M, r, s = 20, 6, 2, 1
    for length, b in (("paper", M), ("strict", M - 1)):  # b real tokens per call: M, or M − 1 when strict
        c = counts("two_heads.thm_5_1", N=N, M=M, d=2, H=1, L=1, Hp=1, Lp=1, window=r, sinks=s, length=length)
        assert c["calls"] == value(per_head, N=N, s=s, r=r, C=value(chunk, b=b, s=s, r=r)), length
    with pytest.raises(AttnsimError):  # "a larger window or sink set is refused": s + r = b
        run_check("two_heads.thm_5_1", dict(N=N, M=M, d=2, H=1, L=1, window=4, sinks=2), "exact", 0)


def test_fused_values_halve_the_calls():
    fused, paper = map(formula, said(r"share a call: (n²) calls instead of (2n²)"))
    n = math.ceil(13 / 4)
    for scheme, calls in (("fused", fused), ("paper", paper)):
        assert counts("two_heads.lemma_3_1", N=13, M=4, d=2, scheme=scheme)["calls"] == value(calls, n=n), scheme


def test_key_codes_of_thm_4_2():
    (parity,) = said(r"with r the smallest (\w+) number such that C\(r, r/2\) ≥ N/M")
    start = {"even": 2, "odd": 1}[parity]
    for n in range(2, 300):
        assert code_length(n) == min(r for r in range(start, 40, 2) if comb(r, r // 2) >= n), n


def test_hardness_demo_thresholds():
    """The two cases' attention mass, L and U as the page writes them, and the threshold at their midpoint."""
    L, U = map(formula, said(r"has attention mass at least L = (exp\(β\(d − t\)/\(4d\)\)) on real keys; a row "
                             r"whose keys are all at distance ≥ \(1 \+ ε\)t has at most "
                             r"U = (n·exp\(β\(d − \(1 \+ ε\)t\)/\(4d\)\))"))
    inst = hardness.generate(6, 5, 2, np.random.default_rng(0), True)
    b = hardness.beta(inst)
    n, d = inst.n, inst.d
    assert d == 2 * inst.A0.shape[1]  # x ↦ [x, 1 − x]: the doubled dimension
    at = dict(beta=b, d=d, t=2 * inst.r, eps=1 / inst.r, n=n)
    Z = n * math.exp(b / 2)  # the n dummy keys' common weight

    def output(mass: sp.Expr) -> float:
        return value(mass, **at) / (value(mass, **at) + Z)

    assert math.isclose(hardness.decide(np.zeros(2 * n), inst, b).theta, (output(L) + output(U)) / 2)


# -- ANNA --------------------------------------------------------------------------------------------------------
def test_hidden_constants_of_thm_a_1():
    far, cap = map(int, said(r"z = ⌈log_\{1/p2\}\((\d+) N³\)⌉, ℓ = ⌈ln\(N²/δ\)/p1\^z⌉ and δ = min\(N\^\{3ρ − 1\}, "
                             r"1/(\d+)\)"))
    for N, p1, p2 in ((16, 0.9, 0.5), (256, 0.8, 0.3), (4096, 0.95, 0.6)):
        rho = math.log(1 / p1) / math.log(1 / p2)
        delta = min(N ** (3 * rho - 1), 1 / cap)
        z = math.ceil(math.log(far * N**3) / math.log(1 / p2))
        ell = math.ceil(math.log(N**2 / delta) / p1**z)
        pp = proof_parameters(N, p1, p2)
        assert (pp.z, pp.ell) == (z, ell) and math.isclose(pp.delta, delta), N


def test_rho_below_a_third():
    (third,) = said(r"attnsim takes ρ as the parameter and requires ρ < 1/(\d)")
    with pytest.raises(UsageError, match=rf"needs rho < 1/{third}") as e:
        run_check("anna.alg_1", {"N": 16, "c": 2.0, "seeds": 2}, None, 0)
    assert e.value.param == "c"


def test_thm_c_3_machines_carry_the_log():
    (bound,) = said(r"attnsim holds the measured machines against (N\^\{[^}]*\} log N)")
    assert sp.simplify(formula(bound) - formula(get_claim("anna.thm_4_2").resources["machines"].bound)) == 0


def test_the_experiments_settings():
    (lr,) = said(r"Adam at learning rate ([\d.]+), cross-entropy")
    assert match2.Match2Config().lr == float(lr)
    size, batch, per_bin, tests = said(r"draws the ([\d,]+) training sequences .*? every batch of (\d+) takes (\d+) "
                                       r"sequences from each bin, with replacement; the (\d+) test sequences")
    (bins,) = said(r"batches are balanced over (\w+) bins of the share of ones")
    cfg = match2.Match2Config()
    assert (cfg.train_size, cfg.batch, cfg.tests, BINS) == (int(size.replace(",", "")), int(batch), int(tests),
                                                            WORDS[bins])
    data = Match2Data.draw(np.random.default_rng(0), 64, 32, 37)
    _, y = data.batches(np.random.default_rng(1), cfg.batch)
    shares = np.minimum(BINS - 1, (BINS * y.mean(axis=-1)).astype(int))
    assert np.bincount(shares, minlength=BINS).tolist() == [int(per_bin)] * BINS
    (runs,) = said(r"Each of the (\d+) runs draws, per layer")
    (width,) = said(r"in m = (\d+) dimensions one cross-polytope hash")
    assert (cfg.runs, cfg.width) == (int(runs), int(width))


def test_induction_inputs_and_learning_rate():
    N, letters = map(int, said(r"attnsim takes N = (\d+) tokens: the hop token k and (\d+) letters"))
    cfg = induction.InductionConfig()
    x, _ = induction_batch(np.random.default_rng(0), 8, N=cfg.N, alphabet=cfg.alphabet)
    assert cfg.N == N and x.shape[1] - 1 == letters and (np.diff(x[:, 1:]) != 0).all()  # no two equal neighbours
    paper_lr, error, guess = said(r"trains with Adam at a constant lr ([\d.]+) for .*? \((\S+) token error after "
                                  r"1,500 steps, worse than the ([\d.]+) of guessing a letter\)")
    assert float(paper_lr) == match2.Match2Config().lr and 1 - 1 / cfg.alphabet == float(guess) < float(error)
    exponent, warmup = said(r"attnsim's default is lr 10⁻(\S) after a linear warm-up over the first (\d+) steps")
    assert (cfg.lr, cfg.warmup) == (10.0 ** -SUPERSCRIPT[exponent], int(warmup))
    recipe = induction.recipe(cfg)
    assert [recipe.rate(s) for s in (0, 149, 299, 300, 5000)] == [cfg.lr * min(1, (s + 1) / int(warmup))
                                                                   for s in (0, 149, 299, 300, 5000)]
    lr, w = said(r"The paper's recipe is `InductionConfig\(lr=([\d.]+), warmup=(\d+)\)`")
    paper = induction.InductionConfig(lr=float(lr), warmup=int(w))
    assert induction.recipe(paper).rate(0) == float(paper_lr)  # constant from the first step


def test_angular_hash_collision_chances():
    """Hyperplanes: 1 − θ/180; the cross-polytope in m = 64 by the Monte Carlo the checks use (fixed seed)."""
    dot, angle, cross, plane = said(r"\(q·k = (−[\d.]+), (\d+)°\) in the query's bucket with probability about "
                                    r"([\d.]+), one hyperplane with probability 1 − \d+/180 ≈ ([\d.]+)")
    partner, cross_p, plane_p = said(r"\(partners, at (\d+)°: ([\d.]+) and ([\d.]+)\)")
    assert round(math.degrees(math.acos(float(dot.replace("−", "-"))))) == int(angle)

    def distance(deg: float) -> float:
        return 2 * math.sin(math.radians(deg) / 2)

    for deg, figure in ((int(angle), plane), (int(partner), plane_p)):
        exact = float(HYPERPLANE_COLLISION.subs(u, distance(deg)))
        assert math.isclose(exact, 1 - deg / 180) and f"{exact:.2f}" == figure
    samples = 100_000

    def chance(deg: float) -> float:
        return cross_polytope_collisions(64, distance(deg), samples) / samples

    assert f"{chance(int(angle)):.1g}" == cross
    # 0.84 is the chance at the (unrounded) partner angle: it lies between those of 6.5° and 7.5°
    assert chance(int(partner) + 0.5) <= float(cross_p) <= chance(int(partner) - 0.5)


# -- TinT --------------------------------------------------------------------------------------------------------
def test_prefix_sets_and_sub_mlps():
    sets, named, subs = said(r"An auxiliary layer has (\d+) prefix sets \(([^;]*?), and fc/act/proj for each of (\d+) "
                             r"sub-MLPs of width D\)")
    layer = builder._sets_of_layer()
    assert len(layer) == int(sets) and builder.N_SUB == int(subs)
    assert layer[:len(named.split(", "))] == named.split(", ")
    (zero,) = said(r"and the (\w+) all-zero activation prefix sets of a layer included")
    assert sum(s.startswith("act") for s in layer) == WORDS[zero]


def test_widths_and_gates():
    S, D_sim = map(formula, said(r"K prefixes, S = (D/K) weight rows stacked per prefix \(§2\.4\), TinT width "
                                 r"D_sim = (\(S \+ 1\)·D)"))
    defs = get_claim("tint.size").definitions
    assert sp.simplify(S - formula(defs["S"])) == 0
    assert sp.simplify(D_sim.subs(sp.Symbol("S", positive=True), S) - formula(defs["H"])) == 0  # H: TinT's width
    P, gates = map(formula, said(r"With P = (T \+ K) positions, the gates \((2P \+ 2)\)"))
    assert sp.simplify(P - formula(defs["P"])) == 0 and sp.simplify(gates - formula(defs["GATE"])) == 0
    T, offset = map(int, said(r"OPT stores its T = (\d+) learned positions with an offset of (\d+) rows"))
    opt = PUBLISHED["opt-125m"][0]
    assert (opt.positions, opt.pos_rows - opt.positions) == (T, offset)


def test_module_names_and_tags():
    (count,) = said(r"\* \*\*Modules\.\*\* (\w+) operations, named as in the code")
    ops = [c for c in all_claims().values() if c.paper == "tint" and re.match(r"§2\.6 \(\d+\)", c.label)]
    assert len(ops) == WORDS[count.lower()]
    (tags,) = said(r"with one tag per module type \(([^)]*)\)")
    assert tags.split(", ") == list(tint_size.MODULES) + ["Prefix", "Grad", "Emb"]
    assert sorted(tags.split(", ")) == sorted(tint_size.TAGS)


def test_finite_difference_step_and_the_sink():
    (exponent,) = said(r"with ε = 10⁻(\S) as in the code")
    eps = 10.0 ** -SUPERSCRIPT[exponent]
    assert inspect.signature(Approx.tint).parameters["eps"].default == eps
    assert Approx.tint().act_fd == Approx.tint().ln_fd == eps
    (heads,) = said(r"with one sink key of score log\(1/ε\) instead of a further head; (\w+) softmax heads replace one "
                    r"linear head")
    assert WORDS[heads] == 2 and sink_score(type("A", (), {"kind": "float64"})(), 1e-3) == math.log(1e3)
