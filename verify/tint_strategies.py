"""Public hypothesis strategies for TinT (Panigrahi et al.): small auxiliary models and their inputs.
Re-exported by :mod:`attnsim.verify.strategies`.

- :func:`aux_models` — an :class:`~attnsim.sim.tint.configs.AuxConfig` (pre-LN decoder, §2): width D a multiple
  of the head count, 1..``max_layers`` layers, a small vocabulary and context, either activation;
- :func:`aux_inputs` — a model, a weight seed (:func:`attnsim.sim.tint.aux_model.init_weights` draws the weights
  on a grid) and a token sequence with the number of training positions (§2.7's split of the context into
  the part the inner SGD step trains on and the part it is tested on; all-train and one-train included).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from attnsim.sim.tint.configs import ACTIVATIONS, AuxConfig


@st.composite
def aux_models(draw: st.DrawFn, max_D: int = 8, max_heads: int = 2, max_layers: int = 2, max_vocab: int = 16,
               max_positions: int = 8) -> AuxConfig:
    """A small auxiliary model (every field valid for :func:`attnsim.sim.tint.configs.validate`)."""
    heads = draw(st.integers(1, max_heads))
    D = heads * draw(st.integers(1, max(1, max_D // heads)))
    return AuxConfig("fuzzed", D=D, heads=heads, layers=draw(st.integers(1, max_layers)),
                     vocab=draw(st.integers(2, max_vocab)), positions=draw(st.integers(2, max_positions)),
                     activation=draw(st.sampled_from(ACTIVATIONS)))


@dataclass(frozen=True, eq=False)
class AuxInput:
    """A model, the seed of its weights, token ids (length n <= its positions) and how many train positions."""

    cfg: AuxConfig
    weight_seed: int
    ids: np.ndarray
    n_train: int


@st.composite
def aux_inputs(draw: st.DrawFn, models: st.SearchStrategy[AuxConfig] | None = None) -> AuxInput:
    """A model from ``models`` (default :func:`aux_models`) with a token sequence and its train split."""
    cfg = draw(models if models is not None else aux_models())
    n = draw(st.integers(2, cfg.positions))
    ids = draw(st.lists(st.integers(0, cfg.vocab - 1), min_size=n, max_size=n))
    n_train = draw(st.sampled_from((1, n - 1, n)) | st.integers(1, n))
    return AuxInput(cfg, draw(st.integers(0, 2 ** 32 - 1)), np.array(ids, dtype=np.int64), n_train)
