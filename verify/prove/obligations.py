"""The obligations of a head plan and of a whole model, as solver queries (``attnsim prove``).

For a head plan (:mod:`attnsim.verify.prove.heads`), for every N ≥ 1, every M at or above the
construction's minimum, every window r and sinks s in range, and every query i and key j:

* ``coverage[step]`` — the calls of one step (normaliser, ratio or fused) see the pair (i, j) in a
  real-key slot under their own mask with net multiplicity 1 if the large model's mask allows it
  and 0 if not (each call counted with its sign in the recombination: −1 for Theorem 5.1's shifted
  prefix). Checked on the witnesses, which ``complete[family]`` shows are the only calls that see
  the pair (and each sees it at most once);
* ``layout[family]`` — the key-side rows tile the call, every real key and used query is a token;
* ``units[family]`` — every used query sees exactly the decoder's number of pad/synthetic rows;
* ``limit[family]`` — the call's length is at most the oracle's length;
* ``index`` — the construction's enumeration of calls (call number → family and indices) is a
  bijection onto the families' domains;
* ``counts`` — the number of calls equals the exact formula of ``paper_refs``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import z3

from attnsim.paper_refs import get as get_claim
from attnsim.sim.two_heads import plan as P
from attnsim.theory.formulas import expand_definitions, parse
from attnsim.verify.prove import layouts as LY
from attnsim.verify.prove.heads import ROW, HeadPlan, Sizes
from attnsim.verify.prove.z3kit import Z3, from_sympy

Query = tuple[list[Any], Any, dict[str, Any]]  # hypotheses, goal, the named variables of a counterexample


@dataclass(frozen=True)
class Obligation:
    """One thing to prove: ``build()`` gives the query; ``params`` the check's fixed parameters for a replay."""

    claim: str
    name: str
    variant: str
    build: Callable[[], Query]
    params: dict[str, Any] = field(default_factory=dict)
    share: str | None = None  # the same query under another claim (a head plan they have in common)


V = {k: z3.Int(k) for k in ("N", "M", "r", "s", "query", "key", "c", "x0", "x1", "row", "H", "L", "Hp", "Lp",
                            "job", "job2", "layer", "n", "chunks", "w", "o")}


def formula(claim_id: str, resource: str, env: dict[str, Any], keep: tuple[str, ...] = ()) -> Any:
    """The exact formula of ``resource`` as a z3 term (the claim's definitions expanded except ``keep``)."""
    claim = get_claim(claim_id)
    expr = expand_definitions(parse(claim.resources[resource].exact), claim.definitions, keep=keep)
    return from_sympy(expr, env)


def env_of(sz: Sizes) -> dict[str, Any]:
    """Formula symbols → solver terms for the sizes ``sz``."""
    return {"N": sz.N, "M": sz.M, "r": sz.r, "s": sz.s, "strict": z3.IntVal(sz.strict),
            "fused": z3.IntVal(int(sz.fused)), **{k: V[k] for k in ("H", "L", "Hp", "Lp", "n", "chunks")}}


def head_obligations(claim: str, hp: HeadPlan, sz: Sizes, min_M: int, variant: str,
                     params: dict[str, Any]) -> list[Obligation]:
    """Coverage, layout, units, limit and index obligations of one head plan at sizes ``sz``."""
    base = sz.hyps(hp.window, min_M)
    names = {k: V[k] for k in ("N", "M")} | ({"r": V["r"], "s": V["s"]} if hp.window else {})
    i, j, row = V["query"], V["key"], V["row"]
    pair = {**names, "query": i, "key": j}
    fams = {f.name: f for f in hp.families}
    out: list[Obligation] = []

    def add(name: str, build: Callable[[], Query]) -> None:
        share = f"{hp.name}:{sz.length is not None}:{variant}:{name}"
        out.append(Obligation(claim, name, variant, build, params, share))

    for step in dict.fromkeys(f.step for f in hp.families):
        def coverage(step: str = step) -> Query:
            terms = [z3.If(fams[f].domain(sz, x), fams[f].layout(sz, x).sign * LY.seen(fams[f].layout(sz, x),
                                                                                   hp.causal, i, j), 0)
                     for f, x in hp.witnesses(sz, i, j) if fams[f].step == step]
            return (base + [i >= 0, i < sz.N, j >= 0, j < sz.N],
                    z3.Sum(*terms) == z3.If(hp.allowed(sz, i, j), 1, 0), pair)
        add(f"coverage[{step}]", coverage)

    for f in hp.families:
        x = (V["x0"], V["x1"])[:f.arity]
        idx = {f"x{n}": v for n, v in enumerate(x)}

        def complete(f: Any = f, x: tuple = x, idx: dict = idx) -> Query:
            seen = LY.seen(f.layout(sz, x), hp.causal, i, j)
            hits = [z3.And(f.domain(sz, w), *[a == b for a, b in zip(x, w)])
                    for g, w in hp.witnesses(sz, i, j) if g == f.name]
            return (base + [f.domain(sz, x)], z3.And(seen <= 1, z3.Implies(seen >= 1, z3.Or(*hits))),
                    {**pair, **idx})

        def layout(f: Any = f, x: tuple = x, idx: dict = idx) -> Query:
            lay = f.layout(sz, x)
            return base + [f.domain(sz, x)], z3.And(LY.tiles(lay), LY.in_range(lay, sz.N)), {**names, **idx}

        def units(f: Any = f, x: tuple = x, idx: dict = idx) -> Query:
            lay = f.layout(sz, x)
            return (base + [f.domain(sz, x), LY.query_row(lay, row)],
                    LY.nonreal_seen(lay, hp.causal, row) == lay.units, {**names, **idx, "row": row})

        def limit(f: Any = f, x: tuple = x, idx: dict = idx) -> Query:
            return base + [f.domain(sz, x)], f.layout(sz, x).rows <= sz.max_len, {**names, **idx}

        for name, build in (("complete", complete), ("layout", layout), ("units", units), ("limit", limit)):
            add(f"{name}[{f.name}]", build)

    add("index", lambda: _index(hp, sz, base, names))
    return out


def _index(hp: HeadPlan, sz: Sizes, base: list[Any], names: dict[str, Any]) -> Query:
    """The enumeration c ↦ (family, idx) maps [0, count) onto the domains, and rank inverts it."""
    c = V["c"]
    fams = {f.name: f for f in hp.families}
    cases = hp.decode(sz, c)
    forward = z3.And(z3.Or(*[cond for cond, _, _ in cases]),
                     *[z3.Implies(cond, z3.And(fams[f].domain(sz, x), fams[f].rank(sz, x) == c))
                       for cond, f, x in cases])
    hyps = base + ([ROW >= 0, ROW < P.num_blocks(Z3, sz.N, sz.b)] if hp.rowed else [])
    backward = []
    for f in hp.families:
        x = (V["x0"], V["x1"])[:f.arity]
        r = f.rank(sz, x)
        back = [z3.And(cond, *[a == b for a, b in zip(x, y)]) for cond, g, y in hp.decode(sz, r) if g == f.name]
        row_is = [ROW == x[0]] if hp.rowed else []
        backward.append(z3.Implies(z3.And(f.domain(sz, x), *row_is),
                                   z3.And(r >= 0, r < hp.count(sz), z3.Or(*back))))
    goal = z3.And(z3.Implies(z3.And(c >= 0, c < hp.count(sz)), forward), *backward)
    return hyps, goal, {**names, "c": c, "x0": V["x0"], "x1": V["x1"]}
