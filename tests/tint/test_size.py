"""tint.size / tint.under_2b: the builder's own parameter count against the paper_refs formulas."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.sim.tint.arith import get_arith
from attnsim.sim.tint.builder import build
from attnsim.sim.tint.configs import LISTED, TINY, TINY_TINT, published
from attnsim.theory import tint_size
from attnsim.verify.tint_size import size_table, size_values, tint_size_command


def _ledger_matches_formula(aux, cfg, ar) -> None:
    t = build(aux, cfg, ar, count_only=ar.kind == "count")
    want = tint_size.breakdown(size_values(aux, cfg))
    assert t.n_params == want.pop("total")
    assert t.ledger.by_tag("param") == want


@settings(max_examples=6, deadline=None)
@given(n_sim=st.integers(1, 2), steps=st.integers(1, 3), rf=st.booleans(), rb=st.booleans(),
       K_H=st.sampled_from([(2, 10), (2, 5), (1, 9), (1, 18)]))
def test_builder_count_equals_formula_on_small_configs(n_sim, steps, rf, rb, K_H) -> None:
    cfg = replace(TINY_TINT, K=K_H[0], H_sim=K_H[1], n_sim=n_sim, steps=steps, reuse_forward=rf, reuse_backward=rb)
    _ledger_matches_formula(TINY, cfg, get_arith("float64"))


@pytest.mark.parametrize("name", ["gpt2", "opt-125m"])
def test_builder_count_equals_formula_on_published_configs(name: str) -> None:
    _ledger_matches_formula(*published(name), get_arith("count"))


def test_hand_computed_value_for_gpt2_linear_forward() -> None:
    """LinFwd for GPT-2 = 5,892,402, worked out by hand from the code's module formulas (docs/reconstructions.md)."""
    aux, cfg = published("gpt2")
    assert tint_size.per_module(size_values(aux, cfg))["LinFwd"] == 5_892_402


def test_opt_125m_is_under_two_billion_with_default_settings() -> None:
    aux, cfg = published("opt-125m")
    total = tint_size.count("total", size_values(aux, cfg))
    assert total < tint_size.ceiling() == 2_000_000_000
    text = tint_size_command("opt-125m")
    assert f"{total:,}" in text and "under 2 billion" in text
    for module in tint_size.MODULES:
        assert f"| {module} |" in text


def test_size_grows_with_layers_times_steps_without_reuse() -> None:
    """Rebuttal: without reuse the size grows in proportion to back-propagated layers x SGD steps."""
    aux, cfg = published("opt-125m")
    v = size_values(aux, replace(cfg, reuse_forward=False, reuse_backward=False))
    base = tint_size.count("total", dict(v, n_sim=0, steps=1))
    growth = {(n, s): tint_size.count("total", dict(v, n_sim=n, steps=s)) - base for n in (1, 3, 6) for s in (1, 2, 4)}
    unit = growth[(1, 1)]
    for (n, s), g in growth.items():
        assert n * s * unit * 0.5 <= g <= n * s * unit  # between n*s*(Fwd) and n*s*(Fwd + Bwd)


def test_size_table_lists_every_published_model_in_markdown_and_latex() -> None:
    md, tex = size_table(LISTED), size_table(LISTED, fmt="tex")
    assert all(name in md and name in tex for name in LISTED)
    assert tex.startswith(r"\begin{tabular}")


def test_reuse_flags_enter_the_symbolic_total() -> None:
    reuse, no_reuse = tint_size.expression("total", True, True), tint_size.expression("total", False, False)
    assert "steps" not in str(reuse) and "steps" in str(no_reuse)
