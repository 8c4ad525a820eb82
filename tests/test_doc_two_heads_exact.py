"""The figures of docs/two_heads_exact.md, recomputed: what one head costs in calls (the table), the packed call's
width, the page's examples, the window refusal and the sizes of the tests it names.

Two Heads §3 and §5 count oracle calls: Cor 3.2 and Lemma 3.1 take 2n² calls per head, Lemma 3.3 packs H'L' jobs
into one call, Thm 3.5 splits the causal blocks, Claim B.6 takes one call per block and Thm 5.1 one pair of
prefix calls per chunk. Each formula the page writes is read off it and held to the ledger's count.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from doc_page import Page
from test_two_heads_exact_counts import GRID

from attnsim.verify.check import run_check
from attnsim.verify.registry import UsageError

ROOT = Path(__file__).resolve().parents[1]
_PAGE = Page("two_heads_exact.md")
PAGE = _PAGE.text
TEXT = _PAGE.flat
said = _PAGE.said
WORDS = {"four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}


def cost_table() -> dict[str, str]:
    """claim → the page's "what one head costs" cell."""
    return {cells[0].strip("`"): cells[2] for cells in _PAGE.table("| claim | module |")}


def block(p: dict) -> int:
    """b: M under the paper's length convention, M − 1 under the strict one (the page's rule)."""
    return p["M"] - (p.get("length") == "strict")


def fused(p: dict) -> int:
    return int(p.get("scheme") == "fused")


def per_layer_calls(p: dict, jobs_per_head: int) -> int:
    """Every head's jobs of one layer, packed H'L' to a call."""
    return p.get("L", 1) * math.ceil(p["H"] * jobs_per_head / (p["Hp"] * p["Lp"]))


def n_blocks(p: dict) -> int:
    return math.ceil(p["N"] / block(p))


# The table's cells, each with the count it says, as a function of the run's parameters.
CELLS = {
    "two_heads.cor_3_2": ("2n² single-head calls (fused: n²)",
                          lambda p: (2 - fused(p)) * n_blocks(p) ** 2 * p["H"] * p["L"]),
    "two_heads.lemma_3_3": ("⌈jobs/(H'L')⌉ calls", lambda p: math.ceil(p["jobs"] / (p["Hp"] * p["Lp"]))),
    "two_heads.thm_3_4": ("Σ_ℓ ⌈(2 − fused)·H·n²/(H'L')⌉",
                          lambda p: per_layer_calls(p, (2 - fused(p)) * n_blocks(p) ** 2)),
    "two_heads.claim_b_6": ("n (one per block)", n_blocks),
    "two_heads.thm_3_5": ("4·n(n−1)/2 + 2n = 2n² per head (fused: n²), packed",
                          lambda p: per_layer_calls(p, (2 - fused(p)) * n_blocks(p) ** 2)),
    "two_heads.thm_5_1": ("(2 − fused)(1 + 2·⌈(N − s − r)/(b − s − r)⌉) per head, packed",
                          lambda p: per_layer_calls(p, (2 - fused(p)) * (1 + 2 * math.ceil(
                              (p["N"] - p["sinks"] - p["window"]) / (block(p) - p["sinks"] - p["window"]))))),
}

SHAPES = {
    "two_heads.cor_3_2": [dict(N=10, M=4, d=2, H=2, L=2), dict(N=10, M=4, d=2, H=1, L=2, scheme="fused"),
                          dict(N=9, M=4, d=2, H=2, L=1, length="strict")],
    "two_heads.lemma_3_3": [dict(Hp=3, Lp=2, jobs=7, causal=True), dict(Hp=2, Lp=2, jobs=9, causal=False)],
    "two_heads.thm_3_4": [dict(N=48, M=8, d=8, H=4, L=3, Hp=2, Lp=2), dict(N=13, M=4, d=4, H=2, L=2, Hp=3, Lp=1,
                                                                           scheme="fused", length="strict")],
    "two_heads.claim_b_6": [dict(N=11, M=4, d=2), dict(N=11, M=4, d=2, length="strict")],
    "two_heads.thm_3_5": [dict(N=16, M=4, d=4, H=2, L=2, Hp=2, Lp=2), dict(N=13, M=4, d=4, H=2, L=2, Hp=3, Lp=1,
                                                                           scheme="fused", length="strict")],
    "two_heads.thm_5_1": [dict(N=40, M=8, d=4, H=2, L=2, window=3, sinks=2),
                          dict(N=23, M=6, d=2, H=1, L=2, Hp=2, Lp=2, window=2, sinks=1, scheme="fused",
                               length="strict")],
}


def test_the_cost_table_says_what_is_counted_here():
    table = cost_table()
    assert {c: table[c] for c in CELLS} == {c: cell for c, (cell, _) in CELLS.items()}
    lines = PAGE[PAGE.index("| claim | module |"):].splitlines()[2:2 + len(table)]
    for path, name in re.findall(r"`(sim/\S+\.py)`(?: \(`(\w+)`\))?", "\n".join(lines)):
        source = (ROOT / path).read_text()
        assert not name or re.search(rf"\b{name}\b", source), (path, name)  # defined or used there
    said(r"Here b = M under the paper's length convention .*? and b = M − 1 under `--length strict`")


@pytest.mark.parametrize("claim", list(CELLS))
def test_each_claims_calls_are_its_cell(claim: str):
    _, calls = CELLS[claim]
    for shape in SHAPES[claim]:
        r = run_check(claim, shape)
        assert r["verdict"] == "pass", (shape, r["reasons"])
        assert r["counts"]["calls"] == calls(r["params"]), shape


def test_causal_split_adds_up():
    """4·n(n−1)/2 + 2n = 2n² (paper) and 2 calls per earlier pair plus 1 per own block = n² (fused)."""
    for n in range(1, 9):
        assert 4 * n * (n - 1) // 2 + 2 * n == 2 * n * n
        assert 2 * n * (n - 1) // 2 + n == n * n


def test_packed_call_width():
    w, o, width = said(r"Each input slot has width w = (2d/H \+ 2) and each output slot width o = (d/H) \(\+1 for the "
                       r"fused scheme\)\. The call is therefore (H'·L'·\(3d/H \+ 2 \+ fused\)) wide")
    assert (w, o, width) == ("2d/H + 2", "d/H", "H'·L'·(3d/H + 2 + fused)")
    for shape in (dict(N=12, M=4, d=8, H=4, L=1, Hp=2, Lp=2), dict(N=12, M=4, d=6, H=2, L=2, Hp=3, Lp=1),
                  dict(N=12, M=4, d=4, H=1, L=1, Hp=1, Lp=2, scheme="fused")):
        r = run_check("two_heads.thm_3_4", shape)
        p = r["params"]
        slot = (2 * p["d"] // p["H"] + 2) + (p["d"] // p["H"] + fused(p))
        assert r["counts"]["oracle_dim"] == p["Hp"] * p["Lp"] * slot == \
            p["Hp"] * p["Lp"] * (3 * p["d"] // p["H"] + 2 + fused(p)), shape
        # abstract_calls = Σ over rounds of ⌈jobs/(H'L')⌉, one round per layer
        per_round = r["counts"]["jobs"] // p["L"]
        assert r["counts"]["abstract_calls"] == p["L"] * math.ceil(per_round / (p["Hp"] * p["Lp"]))


def examples() -> list[list[str]]:
    body = PAGE[PAGE.index("## Examples"):].split("```")[1]
    return [line.split()[2:] for line in body.strip().splitlines()]


def as_params(words: list[str]) -> tuple[str, dict, str | None]:
    claim, rest = words[0], words[1:]
    params: dict = {}
    numerics = None
    for flag, value in zip(rest[::2], rest[1::2]):
        key = flag.removeprefix("--")
        if key == "numerics":
            numerics = value
        else:
            params[key] = {"true": True, "false": False}.get(value, int(value) if value.isdigit() else value)
    return claim, params, numerics


def test_the_examples_run_and_pass():
    cmds = examples()
    assert len(cmds) == 6
    for words in cmds:
        claim, params, numerics = as_params(words)
        r = run_check(claim, params, numerics)
        assert r["verdict"] == "pass" and r["error_bits"] in (math.inf, None), words


def test_window_too_large_is_refused_in_the_pages_words():
    (words,) = said(r"the checker stops\s+before any work with `error: --window: (window r=… plus sinks s=… leave no "
                    r"query per chunk: … \(M=…\))`")
    pattern = ".*?".join(re.escape(part) for part in words.split("…"))
    with pytest.raises(UsageError) as e:
        run_check("two_heads.thm_5_1", dict(N=40, M=8, d=4, window=6, sinks=2))
    assert e.value.param == "window" and re.match(pattern, e.value.message), str(e.value)


def test_the_tests_the_page_names():
    (points,) = said(r"`tests/test_two_heads_exact_counts\.py`: (\d+) grid points")
    assert len(GRID) == int(points)
    (broken,) = said(r"(\w+) broken constructions, all caught")
    meta = (ROOT / "tests" / "test_two_heads_exact_metamorphic.py").read_text()
    assert len(re.findall(r"^def test_\w+_is_caught\(", meta, flags=re.M)) == WORDS[broken]
