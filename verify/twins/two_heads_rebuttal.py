"""Broken twins of the Two Heads rebuttal checkers (rotary embeddings, skip connections and layer norm)."""

from __future__ import annotations

from typing import Any

from attnsim.sim.two_heads import blocks, worst_case
from attnsim.verify.twins.breaks import formula_off, ledger_entry, wrapped
from attnsim.verify.twins.two_heads_breaks import block_shift, double_term, drop_term, synthetic_weight
from attnsim.verify.twins.two_heads_exact import add


def rotation_off() -> Any:
    """A key block's rotation relative to its query block is off by one position: R(k0 − q0 + 1)."""
    return wrapped(blocks.fold_rotation, lambda f, nm, WK, rope, delta: f(nm, WK, rope, delta + 1))


def maps_skipped() -> Any:
    """The construction skips the token-wise maps it must apply between calls (layer norm, layer MLP)."""
    return wrapped(worst_case.apply_token_map, lambda f, nm, oracle, fmap, X, b, tag: X)


add("two_heads.rebuttal_rope", "rotation_off_by_one", "a key block's relative rotation is off by one position",
    rotation_off, kind="construction")
add("two_heads.rebuttal_rope", "block_boundary", "every block after the first starts one token late", block_shift,
    kind="construction")
add("two_heads.rebuttal_rope", "eq1_term_dropped", "eq. (1) leaves out the last key block's term", drop_term,
    kind="construction")
add("two_heads.rebuttal_rope", "calls_formula_plus_one", "the exact count of calls is off by one",
    lambda: formula_off("calls"), kind="formula")

add("two_heads.rebuttal_norm", "norm_skipped", "the construction skips the layer norm and MLP between calls",
    maps_skipped, kind="construction")
add("two_heads.rebuttal_norm", "eq1_term_doubled", "eq. (1) counts the last key block's term twice", double_term,
    kind="construction")
add("two_heads.rebuttal_norm", "synthetic_weight", "the synthetic token scores 2 instead of 1", synthetic_weight,
    {"N": 13, "M": 4}, kind="construction")
add("two_heads.rebuttal_norm", "ledger_drops_call", "the ledger drops the first oracle call",
    lambda: ledger_entry("oracle", 0), kind="ledger")
