"""Which obligations prove which Two Heads claim, in every variant (scheme, length convention, sinks).

Per claim: its head plan's obligations (:func:`~attnsim.verify.prove.obligations.head_obligations`)
and the model-level ones — ``blocks`` (the plan's number of blocks or chunks is the formula's),
``count.induction`` (Theorem 3.5's per-row enumeration sums to the formula), ``counts[resource]``
(calls, jobs, rounds equal ``paper_refs``' exact formulas for all N, M, H, L, H', L'),
``packing`` (Lemma 3.3: every job has its own slot inside the oracle's heads and layers) and
``rounds`` (a layer's calls read only the previous round's outputs).
"""

from __future__ import annotations

from typing import Any, Callable

import z3

from attnsim.paper_refs import get as get_claim
from attnsim.sim.two_heads import plan as P
from attnsim.theory.formulas import expand_definitions, parse
from attnsim.verify.prove.heads import Sizes, b6_plan, causal_plan, pair_plan, window_plan
from attnsim.verify.prove.obligations import Obligation, V, env_of, formula, head_obligations
from attnsim.verify.prove.z3kit import Z3, from_sympy

MIN_M = 2  # the checkers' smallest M; b = M − strict ≥ 1 is a hypothesis too
PACKED = ("two_heads.thm_3_4", "two_heads.thm_3_5", "two_heads.thm_5_1", "two_heads.thm_1_1", "two_heads.thm_1_4")
CLAIMS = ("two_heads.lemma_3_1", "two_heads.cor_3_2", "two_heads.lemma_3_3", "two_heads.thm_3_4",
          "two_heads.thm_3_5", "two_heads.claim_b_6", "two_heads.thm_5_1", "two_heads.thm_1_1", "two_heads.thm_1_4")


def _sizes(strict: int, fused: bool, sinks: bool = False, uniform: bool = False) -> Sizes:
    sz = Sizes(V["N"], V["M"], V["r"], V["s"], strict, fused, sinks)
    if uniform:
        sz = Sizes(sz.N, sz.M, sz.r, sz.s, strict, fused, sinks, Z3.min(sz.N, sz.M - strict) + 1)
    return sz


def _definition(claim: str, name: str, sz: Sizes) -> Any:
    c = get_claim(claim)
    return from_sympy(expand_definitions(parse(name), c.definitions), env_of(sz))


def _model_obligations(claim: str, kind: str, sz: Sizes, variant: str, params: dict[str, Any]) -> list[Obligation]:
    """blocks / count.induction / counts / rounds for a head plan of ``kind`` (pair, causal, b6, window)."""
    out: list[Obligation] = []
    base = sz.hyps(kind == "window", MIN_M)
    names = {"N": V["N"], "M": V["M"]} | ({"r": V["r"], "s": V["s"]} if kind == "window" else {})
    nv, cv = V["n"], V["chunks"]
    H, L, Hp, Lp = V["H"], V["L"], V["Hp"], V["Lp"]
    if kind == "window":
        out.append(Obligation(claim, "blocks", variant, lambda: (
            base, P.num_chunks(Z3, sz.N, sz.b, sz.r, sz.s) == _definition(claim, "chunks", sz), names), params))
    else:
        out.append(Obligation(claim, "blocks", variant, lambda: (
            base, P.num_blocks(Z3, sz.N, sz.b) == _definition(claim, "n", sz), names), params))
    fused = sz.fused
    if kind == "causal":
        # the per-head job count of Theorem 3.5 (Theorem 1.1 states only the calls)
        source = claim if "jobs" in get_claim(claim).resources else "two_heads.thm_3_5"

        def jf(n: Any) -> Any:
            return z3.substitute(formula(source, "jobs", env_of(sz), keep=("n",)), (H, z3.IntVal(1)), (L, z3.IntVal(1)),
                                 (nv, n))
        out.append(Obligation(claim, "count.induction", variant, lambda: (
            [nv >= 0], z3.And(jf(z3.IntVal(0)) == 0, jf(nv + 1) - jf(nv) == P.causal_row_count(nv, fused)),
            {"n": nv}), params))
        head = jf(nv)
    else:
        head = {"pair": P.pair_count(nv, fused), "b6": nv, "window": P.window_count(cv, fused)}[kind]
    sizes_h = [nv >= 1, cv >= 0, H >= 1, L >= 1, Hp >= 1, Lp >= 1]
    per_layer = P.pack_count(Z3, H * head, Hp * Lp) if claim in PACKED else H * head
    plan_values = {"calls": L * per_layer, "abstract_calls": L * per_layer, "jobs": L * H * head,
                   "rounds": P.layer_round(L - 1) + 1}
    if claim in ("two_heads.lemma_3_1", "two_heads.claim_b_6"):
        plan_values = {"calls": head, "rounds": z3.IntVal(1)}
    resources = get_claim(claim).resources
    for res, value in plan_values.items():
        if res in resources and resources[res].exact:
            out.append(Obligation(claim, f"counts[{res}]", variant, lambda res=res, value=value: (
                sizes_h, value == formula(claim, res, env_of(sz), keep=("n", "chunks")),
                {"n": nv, "chunks": cv, "H": H, "L": L, "Hp": Hp, "Lp": Lp}), params))
    layer = V["layer"]
    out.append(Obligation(claim, "rounds", variant, lambda: (
        [L >= 1, layer >= 1, layer < L], z3.And(P.layer_round(layer - 1) < P.layer_round(layer), P.layer_round(0) >= 0),
        {"L": L, "layer": layer}), params))
    return out


def packing_obligations(claim: str, variant: str, params: dict[str, Any]) -> list[Obligation]:
    """Lemma 3.3: job k's slot (call, head, layer) lies inside the oracle and no two jobs share one."""
    k, k2, J, Hp, Lp = V["job"], V["job2"], V["n"], V["Hp"], V["Lp"]
    names = {"jobs": J, "Hp": Hp, "Lp": Lp, "job": k, "job2": k2}
    hyps = [J >= 1, Hp >= 1, Lp >= 1, k >= 0, k < J, k2 >= 0, k2 < J]
    a, b = P.pack_slot(Z3, k, Hp * Lp, Lp), P.pack_slot(Z3, k2, Hp * Lp, Lp)
    inside = z3.And(a[0] >= 0, a[0] < P.pack_count(Z3, J, Hp * Lp), a[1] >= 0, a[1] < Hp, a[2] >= 0, a[2] < Lp)
    apart = z3.Implies(k != k2, z3.Or(*[x != y for x, y in zip(a, b)]))
    out = [Obligation(claim, "packing", variant, lambda: (hyps, z3.And(inside, apart), names), params)]
    if claim == "two_heads.lemma_3_3":
        env = {"jobs": J, "Hp": Hp, "Lp": Lp}
        for res in ("calls", "abstract_calls"):
            out.append(Obligation(claim, f"counts[{res}]", variant, lambda res=res: (
                [J >= 1, Hp >= 1, Lp >= 1], P.pack_count(Z3, J, Hp * Lp) == formula(claim, res, env), names), params))
    return out


def _variants(window: bool = False) -> list[tuple[int, bool, bool]]:
    sinks = (False, True) if window else (False,)
    return [(strict, fused, s) for strict in (0, 1) for fused in (False, True) for s in sinks]


def _head(claim: str, kind: str, uniform: bool = False, extra: dict[str, Any] | None = None) -> list[Obligation]:
    plans: dict[str, Callable[[bool], Callable[[Sizes], Any]]] = {
        "pair": pair_plan, "causal": causal_plan, "b6": b6_plan, "window": window_plan}
    out: list[Obligation] = []
    for strict, fused, sinks in _variants(kind == "window"):
        if kind == "b6" and fused:
            continue
        sz = _sizes(strict, fused, sinks, uniform)
        variant = f"scheme={'fused' if fused else 'paper'} length={'strict' if strict else 'paper'}" + (
            f" sinks={'yes' if sinks else 'no'}" if kind == "window" else "")
        params = {"scheme": "fused" if fused else "paper", "length": "strict" if strict else "paper", **(extra or {})}
        out += head_obligations(claim, plans[kind](fused)(sz), sz, MIN_M, variant, params)
        out += _model_obligations(claim, kind, sz, variant, params)
    if claim in PACKED or claim == "two_heads.lemma_3_3":
        out += packing_obligations(claim, "any", dict(extra or {}))
    return out


def obligations(claim: str) -> list[Obligation]:
    """Every obligation of ``claim`` (a claim of :data:`CLAIMS`)."""
    short = claim.split(".", 1)[1]
    if short == "lemma_3_3":
        return packing_obligations(claim, "any", {})
    if short == "thm_1_1":
        return _head(claim, "pair", uniform=True, extra={"causal": False}) + [
            o for o in _head(claim, "causal", extra={"causal": True}) if o.name != "packing"]
    kind = {"lemma_3_1": "pair", "cor_3_2": "pair", "thm_3_4": "pair", "thm_3_5": "causal", "claim_b_6": "b6",
            "thm_5_1": "window", "thm_1_4": "window"}[short]
    return _head(claim, kind, uniform=short == "thm_3_4")
