"""The figures docs/anna_lemma_c_2.md gives for the designs it does not build ("What the design would cost at the
sizes we run", "Ranking a level's sample on one machine"), recomputed from the sort's plan: the keys each level
samples, what padding the plan to a bucket of λ times its share would cost at N = 4096, and the keys one machine
could rank."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import poisson

from attnsim.paper_refs import get as get_claim
from attnsim.sim.anna.mpc_splitter_sort import Level, SortShape, sort_rounds
from attnsim.theory.formulas import as_number, evaluate
from attnsim.verify.claims.anna_sort import GAP_MEMORY

DOC = (Path(__file__).parents[2] / "docs" / "anna_lemma_c_2.md").read_text()
DEFS = get_claim("anna.lemma_c_2").definitions


def _shape(N: int) -> tuple[SortShape, int]:
    """The sort's sizes at the default memory s = 4 N^(3/4), eps = 1/4, and the machines it runs on."""
    p = {"N": N, "eps": 0.25, "eps1": 0.75, "s_scale": 4.0}
    s, w, P = (int(as_number(evaluate(x, DEFS, p))) for x in ("s", "w", "P"))
    return SortShape(s, int(DEFS["kw"]), w), P


def _levels(shape: SortShape, K: int, E: int) -> list[Level]:
    """The plan's levels from the whole range down its largest bucket."""
    out = []
    while K > 1 and not shape.direct(K):
        lvl = Level(shape, K, E)
        out.append(lvl)
        K, E = max(len(lvl.bucket_range(0, b)) for b in range(lvl.buckets)), max(1, E // lvl.buckets)
    return out


def _rows_until_blank(header: str) -> list[list[str]]:
    lines = DOC[DOC.index(header):].splitlines()[2:]
    rows = []
    for row in lines:
        if not row.startswith("|"):
            break
        rows.append([c.strip() for c in row.strip("|").split("|")])
    return rows


def test_the_keys_each_level_samples_are_the_plans():
    rows = _rows_until_blank("| N | s (words) | machines | keys sampled by each level |")
    assert len(rows) == 4
    for N, s, machines, sampled, buckets in rows:
        shape, P = _shape(int(N))
        levels = _levels(shape, P, int(N))
        assert (shape.s, P) == (int(s), int(machines))
        assert [lvl.sample_target for lvl in levels] == [int(x) for x in sampled.split(", ")]
        counts = [lvl.buckets for lvl in levels]
        said = [int(x) for x in re.findall(r"\d+", buckets)]
        assert counts[0] == said[0] and all(c == said[-1] for c in counts[1:])  # "7, then 2": 7 at the first


def _split_too_large(T: float, lam: float) -> float:
    """The chance that the median of a Poisson(T) sample puts more than lam/2 of the range in one bucket: keys below
    the split fall in the low part (mean T lam/2) and above it in the rest."""
    xs = np.arange(0, 400)
    low, high = poisson.pmf(xs, T * lam / 2), poisson.pmf(xs[:200], T * (1 - lam / 2))
    total = sum(low[i] * high[j] for i in xs for j in range(200) if i < (i + j) // 2)
    return 2 * total


def _padded(shape: SortShape, K: int, E: int, lam: float) -> tuple[int, int]:
    """Levels and rounds of the plan that pads every bucket to lam times its share (no rebalance rounds)."""
    levels = rounds = 0
    while K > 1 and not shape.direct(K):
        lvl = Level(shape, K, E)
        B = lvl.buckets
        per = -(-E // (K - B)) if K > B else E
        levels, rounds = levels + 1, rounds + lvl.rounds
        E = math.ceil(lam * E / B)
        K = -(-E // per)
    return levels, rounds + (shape.direct_rounds if K > 1 else 0)


@pytest.mark.parametrize("lam, text", [(1.5, "3/2"), (1.75, "7/4")])
def test_the_padded_designs_cost_at_4096_is_as_the_doc_says(lam, text):
    rows = {r[0]: r[1:] for r in _rows_until_blank("| λ | union bound on the chance")}
    chance, levels, rounds = rows[text]
    shape, P = _shape(4096)
    plan = _levels(shape, P, 4096)
    splits = np.cumprod([1] + [lvl.buckets for lvl in plan[:-1]])
    union = sum(n * _split_too_large(lvl.sample_target, lam) for n, lvl in zip(splits, plan))
    assert round(union, 2) == float(chance)
    assert _padded(shape, P, 4096, lam) == (int(levels), int(rounds))
    assert f"The sort's plan takes {len(plan)} levels and {sort_rounds(shape, P, 4096)} rounds" in DOC


def test_the_one_machine_ranking_table_is_the_plans():
    """The table of "Ranking a level's sample on one machine": each row's memory, machines and first level from the
    plan, and the keys a quarter of s holds."""
    rows = _rows_until_blank("| run | N | ε' − ε | s (words) | machines |")
    assert len(rows) == 3
    for _, N, gap, s, machines, now, one, buckets in rows:
        num, den = (int(x) for x in gap.split("/"))
        eps = 0.25 if num / den == 0.5 else 1 / 16  # the default point, or the gap sweep's eps
        p = {"N": int(N), "eps": eps, "eps1": eps + num / den, "s_scale": 4.0 if eps == 0.25 else GAP_MEMORY}
        mem, w, P = (int(as_number(evaluate(x, DEFS, p))) for x in ("s", "w", "P"))
        shape = SortShape(mem, int(DEFS["kw"]), w)
        assert (mem, P) == (int(s), int(machines))
        assert Level(shape, P, int(N)).sample_target == int(now)
        held = mem // (4 * (shape.key_words + 2))
        assert held == int(one) and max(2, held // shape.oversample) == int(buckets)
