"""Bad configurations raise TinTConfigError naming the parameter."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from attnsim.sim.tint.arith import ArithError, get_arith
from attnsim.sim.tint.builder import build
from attnsim.sim.tint.configs import TINY, TINY_TINT, TinTConfigError, published, validate
from attnsim.verify.tint_size import tint_size_command

F64 = get_arith("float64")


@pytest.mark.parametrize("aux,cfg,param", [
    (TINY, replace(TINY_TINT, K=3), "^K: "),                          # D = 8 not divisible by K = 3
    (replace(TINY, heads=3), TINY_TINT, "^heads: "),                  # 3 heads do not divide D = 8
    (replace(TINY, prenorm=False), TINY_TINT, "^prenorm: "),          # post-LN
    (TINY, replace(TINY_TINT, K=4), "^K: "),                          # S = 2 < 3
    (TINY, replace(TINY_TINT, H_sim=7), "^H_sim: "),                  # does not divide the width 40
    (TINY, replace(TINY_TINT, H_sim=40), "^H_sim: "),                 # TinT head dim 1 < aux head dim 4
    (TINY, replace(TINY_TINT, n_sim=3), "^n_sim: "),
    (TINY, replace(TINY_TINT, steps=0), "^steps: "),
    (replace(TINY, activation="swiglu"), TINY_TINT, "^activation: "),
])
def test_bad_configs_raise_a_clear_error(aux, cfg, param: str) -> None:
    with pytest.raises(TinTConfigError, match=param):
        build(aux, cfg, F64)


def test_post_ln_opt_350m_is_refused_by_the_size_command() -> None:
    with pytest.raises(TinTConfigError, match="^prenorm: opt-350m is post-LN"):
        tint_size_command("opt-350m")


def test_unknown_aux_and_numerics_are_refused() -> None:
    with pytest.raises(TinTConfigError, match="^aux: "):
        published("llama")
    with pytest.raises(ArithError, match="^numerics: "):
        get_arith("bf16")
    assert isinstance(TinTConfigError("x"), ValueError)


def test_every_published_config_except_opt_350m_is_valid() -> None:
    for name in ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "opt-125m", "opt-1.3b", "opt-2.7b"):
        assert validate(*published(name)) == []


def test_bad_sequences_are_refused() -> None:
    from attnsim.sim.tint import aux_model as am
    from attnsim.sim.tint.pipeline import run

    t = build(TINY, TINY_TINT, F64)
    w = am.init_weights(TINY, F64, 0)
    with pytest.raises(TinTConfigError, match="^ids: "):
        run(t, w, np.arange(TINY.positions + 1) % TINY.vocab, 4)
    with pytest.raises(TinTConfigError, match="^n_train: "):
        run(t, w, np.arange(5), 1)
    with pytest.raises(TinTConfigError, match="^count_only: "):
        run(build(TINY, TINY_TINT, get_arith("count"), count_only=True), w, np.arange(5), 3)
