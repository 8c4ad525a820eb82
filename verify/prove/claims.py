"""Which obligations prove which Two Heads claim, in every variant (scheme, length convention, sinks).

Per claim: its head plan's obligations (:func:`~attnsim.verify.prove.obligations.head_obligations`)
and the model-level ones — ``blocks`` (the plan's number of blocks or chunks is the formula's),
``count.induction`` (Theorem 3.5's per-row enumeration sums to the formula), ``counts[resource]``
(calls, jobs, rounds equal ``paper_refs``' exact formulas for all N, M, H, L, H', L'),
and ``packing`` (Lemma 3.3: every job has its own slot inside the oracle's heads and layers, and the
slots' columns in the packed call's stream are disjoint and inside the slot's head block). Rounds are
not an integer plan: the driver makes one oracle round per layer (``multi_layer.simulate_layers``),
and the ledger counts them at every instance.
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
        sz = Sizes(sz.N, sz.M, sz.r, sz.s, strict, fused, sinks, P.job_length(Z3, sz.N, sz.M - strict))
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
    plan_values = {"calls": L * per_layer, "abstract_calls": L * per_layer, "jobs": L * H * head}
    if claim in ("two_heads.lemma_3_1", "two_heads.claim_b_6"):
        plan_values = {"calls": head}
    resources = get_claim(claim).resources
    for res, value in plan_values.items():
        if res in resources and resources[res].exact:
            out.append(Obligation(claim, f"counts[{res}]", variant, lambda res=res, value=value: (
                sizes_h, value == formula(claim, res, env_of(sz), keep=("n", "chunks")),
                {"n": nv, "chunks": cv, "H": H, "L": L, "Hp": Hp, "Lp": Lp}), params))
    return out


def packing_obligations(claim: str, variant: str, params: dict[str, Any]) -> list[Obligation]:
    """Lemma 3.3: job k's slot (call, head, layer) lies inside the oracle and no two jobs share one."""
    k, k2, J, Hp, Lp = V["job"], V["job2"], V["n"], V["Hp"], V["Lp"]
    names = {"jobs": J, "Hp": Hp, "Lp": Lp, "job": k, "job2": k2}
    hyps = [J >= 1, Hp >= 1, Lp >= 1, k >= 0, k < J, k2 >= 0, k2 < J]
    a, b = P.pack_slot(Z3, k, Hp * Lp, Lp), P.pack_slot(Z3, k2, Hp * Lp, Lp)
    inside = z3.And(a[0] >= 0, a[0] < P.pack_count(Z3, J, Hp * Lp), a[1] >= 0, a[1] < Hp, a[2] >= 0, a[2] < Lp)
    apart = z3.Implies(k != k2, z3.Or(*[x != y for x, y in zip(a, b)]))
    out = [Obligation(claim, "packing", variant, lambda: (hyps, z3.And(inside, apart), names), params, "packing"),
           Obligation(claim, "slot index", variant, lambda: _slot_index(k, Hp, Lp), params, "slot index"),
           Obligation(claim, "slot columns", variant, lambda: _slot_columns(Hp, Lp), params, "slot columns")]
    if claim == "two_heads.lemma_3_3":
        env = {"jobs": J, "Hp": Hp, "Lp": Lp}
        for res in ("calls", "abstract_calls"):
            out.append(Obligation(claim, f"counts[{res}]", variant, lambda res=res: (
                [J >= 1, Hp >= 1, Lp >= 1], P.pack_count(Z3, J, Hp * Lp) == formula(claim, res, env), names), params))
    return out


def _slot_index(k: Any, Hp: Any, Lp: Any) -> Any:
    """Job k's slot number inside its call (``plan.slot_index`` of its head and layer) is k mod H'L': the
    job the layer MLP and the head weights look up is the job packed there."""
    per = Hp * Lp
    _, h, layer = P.pack_slot(Z3, k, per, Lp)
    return ([Hp >= 1, Lp >= 1, k >= 0], P.slot_index(h, layer, Lp) == k % per, {"Hp": Hp, "Lp": Lp, "job": k})


def _slot_columns(Hp: Any, Lp: Any) -> Any:
    """Lemma 3.3 in the residual stream: slot (h, ℓ)'s input (width w) and output (width o) columns lie in
    oracle head h's block, the blocks split the call's width equally (as the oracle splits it among its
    heads), and two different slots never share a column."""
    w, o, h, layer, h2, layer2 = V["w"], V["o"], V["x0"], V["layer"], V["x1"], V["job2"]
    hyps = [Hp >= 1, Lp >= 1, w >= 1, o >= 1, h >= 0, h < Hp, layer >= 0, layer < Lp, h2 >= 0, h2 < Hp,
            layer2 >= 0, layer2 < Lp]

    def ranges(hh: Any, ll: Any) -> list[tuple[Any, Any]]:
        first_in, first_out = P.slot_columns(hh, ll, Lp, w, o)
        return [(first_in, first_in + w), (first_out, first_out + o)]

    mine, theirs = ranges(h, layer), ranges(h2, layer2)
    lo, hi = P.head_block(h, Lp, w, o)
    first = P.head_block(0, Lp, w, o)
    size = first[1] - first[0]
    inside = z3.And(*[z3.And(a >= lo, b <= hi) for a, b in mine])
    split = z3.And(first[0] == 0, lo == h * size, hi == lo + size, P.head_block(Hp - 1, Lp, w, o)[1] == Hp * size)
    other = z3.Or(h != h2, layer != layer2)
    disjoint = z3.And(mine[0][1] <= mine[1][0],
                      z3.Implies(other, z3.And(*[z3.Or(b <= c, d <= a) for a, b in mine for c, d in theirs])))
    names = {"Hp": Hp, "Lp": Lp, "w": w, "o": o, "head": h, "layer": layer, "head2": h2, "layer2": layer2}
    return hyps, z3.And(inside, split, disjoint), names


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
    if claim != "two_heads.lemma_3_1":
        out.append(Obligation(claim, "head columns", "any", _head_columns, dict(extra or {}), "head columns"))
    return out


def _head_columns() -> Any:
    """The large model's heads (Def 2.2): head h's columns ``plan.model_head_columns`` are [h·m, (h + 1)·m),
    so the H heads tile the d = H·m columns of a layer input in order, each exactly once."""
    h, m, H = V["x0"], V["w"], V["H"]
    lo, hi = P.model_head_columns(h, m)
    nxt = P.model_head_columns(h + 1, m)
    goal = z3.And(P.model_head_columns(0, m)[0] == 0, hi - lo == m, z3.Implies(h + 1 < H, nxt[0] == hi),
                  P.model_head_columns(H - 1, m)[1] == H * m)
    return [H >= 1, m >= 1, h >= 0, h < H], goal, {"H": H, "m": m, "head": h}


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
