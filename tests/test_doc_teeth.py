"""The figures of docs/teeth.md, read off the page and recomputed: the rules a broken variant is judged by, the
closing lines of `attnsim teeth two_heads.lemma_3_3`, and the twins and constants its lessons name.

A check that cannot fail says nothing about a paper's claim (Two Heads' Lemma 3.3 here, ANNA's Lemma D.2 and
Two Heads' Thm 4.1 below): the page's figures are the teeth pass's own. The pass's time ("in 3 s") is this
machine's and is not held; the lessons told as history (the crashes, Thm 4.1's old default) are not either.
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

from doc_page import Page
from rich.console import Console

from attnsim.paper_refs import all_claims
from attnsim.theory.lower_bound import information_bound
from attnsim.verify.check import run_check
from attnsim.verify.claims.two_heads_lower_bound import LB_MIN_BITS
from attnsim.verify.cli.teeth import _print
from attnsim.verify.registry import get_checker
from attnsim.verify.teeth import MIN_TWINS, OUTCOMES, run_teeth
from attnsim.verify.twins import REFUSAL_KINDS, all_twins
from attnsim.verify.twins.growth import CONSTANT

_PAGE = Page("teeth.md")
PAGE = _PAGE.text
TEXT = _PAGE.flat
said = _PAGE.said
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}


def twins_of(claim: str) -> dict[str, object]:
    return {t.name: t for t in all_twins() if t.claim == claim}


def test_the_ways_a_run_ends():
    count, *ways = said(r"Each run ends one of (\w+) ways: \*\*(\w+)\*\* .*?\*\*(\w+)\*\* .*?\*\*(\w+)\*\* .*?"
                        r"\*\*(\w+)\*\*")
    assert tuple(ways) == OUTCOMES and WORDS[count] == len(OUTCOMES)
    (kind,) = said(r"it counts only for a twin declared a refusal twin \(kind `(\w+)`")
    assert REFUSAL_KINDS == {kind}


def test_what_teeth_need():
    (least,) = said(r"A claim has teeth when it has at least (\w+) twins, a construction twin among them")
    (fewer,) = said(r"A claim with a checker and fewer than (\w+) twins is a failing line")
    assert WORDS[least] == WORDS[fewer] == MIN_TWINS


def test_the_constant_factor():
    (shown,) = said(r"constant factor \(x(\d+)\) where the paper states no constant")
    (told,) = said(r"each is also run with the constant (\d+) in place of its growing factor")
    assert int(shown) == int(told) == CONSTANT


def test_the_closing_figures_of_lemma_3_3():
    """`attnsim teeth two_heads.lemma_3_3` prints the page's five closing lines (its time aside)."""
    block = re.search(r"`attnsim teeth two_heads\.lemma_3_3`:\s*```\n(.*?)```", PAGE, flags=re.S).group(1)
    results = run_teeth(["two_heads.lemma_3_3"])
    out = io.StringIO()
    _print(results, 3.0, Console(file=out, width=200, color_system=None))
    lines = out.getvalue().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("1 claims,"))
    got = lines[first:first + len(block.splitlines())]

    def timeless(text: str) -> str:
        return re.sub(r", in \d+ s$", ", in _ s", text.strip())

    assert [timeless(line) for line in got] == [timeless(line) for line in block.splitlines()]


def test_uniform_scalings_run_where_blocks_differ():
    """The padding and synthetic-weight twins of Lemma 3.1 run at a partial last block; the window construction
    has the oracle's causal mask twin instead of a synthetic-weight one."""
    N, M = map(int, said(r"\(a partial last block: N = (\d+), M = (\d+)\)"))
    lemma = twins_of("two_heads.lemma_3_1")
    for name in ("padding_off_by_one", "synthetic_weight"):
        assert (lemma[name].params["N"], lemma[name].params["M"]) == (N, M), name
    assert N % M != 0
    window = twins_of("two_heads.thm_5_1")
    assert "synthetic_weight" not in window and window["causal_oracle_mask"].kind == "oracle"


def test_the_lower_bound_reduction():
    (bits,) = said(r"agree with direct attention to (\d+) bits")
    assert LB_MIN_BITS == int(bits)
    (evidence,) = said(r"Its record is `(\w+)` evidence: the information bound calls ≥ ⌈N/\(M\+1\)⌉")
    assert get_checker("two_heads.lower_bound").evidence == evidence
    r = run_check("two_heads.lower_bound", dict(input="reduction", N=16, M=8, d=4, seeds=4), "float64", 0)
    assert r["evidence"] == evidence and r["counts"]["oracle_len"] == 8 + 1  # calls of M + 1 rows
    for N, M in ((16, 8), (64, 8), (100, 7)):
        assert information_bound(N, M + 1) == math.ceil(N / (M + 1))


def claims_labelled(label: str) -> list[str]:
    """The claims whose label starts with ``label`` (the page's "Thm" is the labels' "Theorem")."""
    label = label.replace("Thm ", "Theorem ")
    return [c.id for c in all_claims().values() if re.match(rf"{re.escape(label)}\b", c.label)]


def test_the_transcription_twins_named():
    (module,) = said(r"an exponent or a log factor dropped: `(verify/twins/\w+\.py)`")
    assert (Path(__file__).resolve().parents[1] / module).is_file()
    (machines,) = said(r"so that twin sits on (Lemma [A-Z]\.\d+)'s machines")
    (lemma,) = claims_labelled(machines)
    reversed_ = twins_of(lemma)["containment_reversed"]
    assert reversed_.breaks.__module__.endswith(Path(module).stem) and "machines" in reversed_.what
    (theorem,) = said(r"A minimum-M condition of (Thm \d\.\d) mistranscribed")
    (claim,) = [c for c in claims_labelled(theorem) if "min_M" in all_claims()[c].extra]
    assert twins_of(claim)["min_M_mistranscribed"].kind == "formula"
    (alg,) = said(r"Dropping a log factor from (Alg \d)'s bound")
    assert alg == "Alg 1" and "hash_evaluations_bound_mistranscribed" in twins_of("anna.alg_1")
