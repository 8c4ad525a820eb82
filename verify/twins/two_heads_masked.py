"""Broken twins of the masked Two Heads checkers (Claim B.6, Thm 3.5, Thm 5.1 and Thm 1.4)."""

from __future__ import annotations

from attnsim.verify.twins.breaks import formula_off, ledger_entry
from attnsim.verify.twins.two_heads_breaks import (
    block_shift,
    combine_unrecorded,
    double_term,
    drop_term,
    long_causal_blocks,
    oracle_mask_off,
    reference_mask_off,
    synthetic_first_weight,
)
from attnsim.verify.twins.two_heads_exact import add

# Claim B.6: causal in-block denominators, the synthetic token first.
add("two_heads.claim_b_6", "block_boundary", "every block after the first starts one token late", block_shift,
    kind="construction")
add("two_heads.claim_b_6", "synthetic_weight", "the leading synthetic token scores 2 instead of 1",
    synthetic_first_weight, kind="construction")
add("two_heads.claim_b_6", "causal_oracle_mask", "the oracle's causal mask shows the next row too", oracle_mask_off,
    kind="oracle")
add("two_heads.claim_b_6", "ledger_drops_call", "the ledger drops the first oracle call",
    lambda: ledger_entry("oracle", 0), kind="ledger")
add("two_heads.claim_b_6", "calls_formula_plus_one", "the exact count of calls is off by one",
    lambda: formula_off("calls"), kind="formula")

# Theorem 3.5: causal model from a causal oracle.
add("two_heads.thm_3_5", "causal_oracle_mask", "the oracle's causal mask shows the next row too", oracle_mask_off,
    kind="oracle")
add("two_heads.thm_3_5", "reference_mask", "the reference's causal mask lets token i see token i + 1",
    lambda: reference_mask_off("causal"), kind="reference")
add("two_heads.thm_3_5", "synthetic_weight", "the leading synthetic token scores 2 instead of 1",
    synthetic_first_weight, kind="construction")
add("two_heads.thm_3_5", "eq1_term_dropped", "the combination leaves out the last part's term A, B", drop_term,
    kind="construction")
add("two_heads.thm_3_5", "oracle_too_long", "the oracle lets over-long calls through and blocks are b + 1",
    long_causal_blocks, kind="oracle-limit")
add("two_heads.thm_3_5", "ledger_doubles_call", "the ledger records the first oracle call twice",
    lambda: ledger_entry("oracle", 2), kind="ledger")
add("two_heads.thm_3_5", "calls_formula_plus_one", "the exact count of calls is off by one",
    lambda: formula_off("calls"), kind="formula")

# Theorem 5.1 and Theorem 1.4 (one checker): sliding window and sinks.
for claim in ("two_heads.thm_5_1", "two_heads.thm_1_4"):
    add(claim, "window_mask", "the reference's window is one key wider than r", lambda: reference_mask_off("window"),
        {"sinks": 0}, kind="reference")
    add(claim, "sink_mask", "the reference keeps one sink token more than s", lambda: reference_mask_off("sink"),
        {"sinks": 1}, kind="reference")
    add(claim, "causal_oracle_mask", "the oracle's causal mask shows the next row too", oracle_mask_off, kind="oracle")
    add(claim, "eq1_term_doubled", "the combination counts the last part's term A, B twice", double_term,
        kind="construction")
    add(claim, "ledger_drops_call", "the ledger drops the first oracle call", lambda: ledger_entry("oracle", 0),
        kind="ledger")
    add(claim, "calls_formula_plus_one", "the exact count of calls is off by one", lambda: formula_off("calls"),
        kind="formula")
for claim in ("two_heads.thm_3_5", "two_heads.thm_5_1", "two_heads.thm_1_4"):
    add(claim, "combine_unrecorded", "the recombination outside the oracle is not written to the ledger",
        combine_unrecorded, kind="ledger")
