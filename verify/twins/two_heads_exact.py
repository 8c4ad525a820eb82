"""Broken twins of the exact unmasked Two Heads checkers (Lemma 3.1, Cor 3.2, Lemma 3.3, Thm 3.4, Thm 1.1)."""

from __future__ import annotations

from typing import Any

from attnsim.sim.two_heads import packing
from attnsim.verify.twins import twin
from attnsim.verify.twins.breaks import formula_off, ledger_entry, loose_agreement, together, wrapped
from attnsim.verify.twins.two_heads_breaks import (
    block_shift,
    combine_unrecorded,
    double_term,
    drop_term,
    long_blocks,
    longer_blocks,
    oracle_mask_off,
    pad_off,
    stable_complement_everywhere,
    stable_decode_subtracts,
    stable_pad_off,
    synthetic_weight,
)


def slots_reversed() -> Any:
    """The packed call's per-job outputs are handed back in reverse order."""
    return wrapped(packing.run_packed, lambda f, oracle, jobs: f(oracle, jobs)[::-1])


def add(claim: str, name: str, what: str, breaks: Any, params: dict[str, Any] | None = None, *, kind: str) -> None:
    """Register ``breaks`` (a zero-argument factory of a context manager) as a ``kind`` twin of ``claim``."""
    twin(claim, name, what, kind=kind, params=params)(breaks)


_LOOSE = "the agreement test accepts any output within relative error 1, and eq. (1) drops a term"

# Lemma 3.1: one head, one layer.
add("two_heads.lemma_3_1", "block_boundary", "every block after the first starts one token late", block_shift,
    kind="construction")
add("two_heads.lemma_3_1", "padding_off_by_one", "Step 1's decode counts one padding row too many", pad_off,
    {"N": 13, "M": 4, "d": 3}, kind="construction")
add("two_heads.lemma_3_1", "eq1_term_dropped", "eq. (1) leaves out the last key block's term", drop_term,
    kind="construction")
add("two_heads.lemma_3_1", "synthetic_weight", "the synthetic token scores 2 instead of 1", synthetic_weight,
    {"N": 13, "M": 4, "d": 3}, kind="construction")
add("two_heads.lemma_3_1", "oracle_too_long", "the oracle lets calls of length b + 2 through and blocks are b + 1",
    long_blocks, kind="oracle-limit")
add("two_heads.lemma_3_1", "blocks_past_the_oracle", "blocks of b + 1 tokens against the oracle's own limit of "
    "b + 1 (with the synthetic token, calls of b + 2): the oracle must refuse them", longer_blocks, kind="referee")
add("two_heads.lemma_3_1", "ledger_drops_call", "the ledger drops the first oracle call",
    lambda: ledger_entry("oracle", 0), kind="ledger")
for claim in ("two_heads.lemma_3_1", "two_heads.cor_3_2", "two_heads.thm_3_4", "two_heads.thm_1_1"):
    add(claim, "combine_unrecorded", "eq. (1)'s recombination outside the oracle is not written to the ledger",
        combine_unrecorded, kind="ledger")
add("two_heads.lemma_3_1", "calls_formula_plus_one", "the exact count of calls is off by one",
    lambda: formula_off("calls"), kind="formula")
add("two_heads.lemma_3_1", "agreement_too_loose", _LOOSE, lambda: together(loose_agreement(0.0), drop_term()),
    kind="agreement")
_STABLE = {"N": 13, "M": 4, "d": 3, "decode": "stable"}
add("two_heads.lemma_3_1", "stable_padding_off_by_one", "the stable decode counts one padding row too many",
    stable_pad_off, _STABLE, kind="construction")
add("two_heads.lemma_3_1", "stable_complement_everywhere", "the stable decode's complement column is 1 on real keys "
    "too (the indicator left out)", stable_complement_everywhere, _STABLE, kind="construction")
twin("two_heads.lemma_3_1", "stable_decode_subtracts", "the stable decode computes q = 1 - p instead of reading it "
     "(exact arithmetic cannot tell; float64 at d = 16 must)", kind="construction",
     params={"N": 64, "M": 8, "d": 16, "decode": "stable"}, numerics="float64")(stable_decode_subtracts)

# Corollary 3.2: H heads, L layers, one job per call.
add("two_heads.cor_3_2", "block_boundary", "every block after the first starts one token late", block_shift,
    kind="construction")
add("two_heads.cor_3_2", "eq1_term_doubled", "eq. (1) counts the last key block's term twice", double_term,
    kind="construction")
add("two_heads.cor_3_2", "ledger_doubles_call", "the ledger records the first oracle call twice",
    lambda: ledger_entry("oracle", 2), kind="ledger")
add("two_heads.cor_3_2", "rounds_formula_plus_one", "the exact count of rounds is off by one",
    lambda: formula_off("rounds"), kind="formula")

# Lemma 3.3: independent jobs packed H'L' per call.
add("two_heads.lemma_3_3", "slots_reversed", "the packed call's outputs come back in reverse job order",
    slots_reversed, kind="construction")
add("two_heads.lemma_3_3", "ledger_drops_call", "the ledger drops the first oracle call",
    lambda: ledger_entry("oracle", 0), kind="ledger")
add("two_heads.lemma_3_3", "jobs_formula_plus_one", "the exact count of jobs is off by one",
    lambda: formula_off("jobs"), kind="formula")

# Theorem 3.4 and Theorem 1.1: H'L' block-pair jobs per packed call.
for claim in ("two_heads.thm_3_4", "two_heads.thm_1_1"):
    add(claim, "block_boundary", "every block after the first starts one token late", block_shift, kind="construction")
    add(claim, "eq1_term_dropped", "eq. (1) leaves out the last key block's term", drop_term, kind="construction")
    # one layer: a wrong first layer's output would make the second layer's exact weights too large to hold
    add(claim, "synthetic_weight", "the synthetic token scores 2 instead of 1", synthetic_weight, {"L": 1},
        kind="construction")
    add(claim, "slots_reversed", "the packed call's outputs come back in reverse job order", slots_reversed,
        {"L": 1}, kind="construction")
    add(claim, "padding_off_by_one", "Step 1's decode counts one padding row too many", pad_off, {"L": 1},
        kind="construction")
    add(claim, "ledger_drops_call", "the ledger drops the first oracle call", lambda: ledger_entry("oracle", 0),
        kind="ledger")
    add(claim, "oracle_dim_formula_plus_one", "the exact oracle width is off by one", lambda: formula_off("oracle_dim"),
        kind="formula")
add("two_heads.thm_1_1", "causal_oracle_mask", "with --causal true, the oracle's causal mask shows the next row too",
    oracle_mask_off, {"causal": True}, kind="oracle")
