"""A shared table of named TinT cases, used by the checkers and by the tests (tracr style)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from attnsim.sim.tint.configs import TINY, TINY_TINT, AuxConfig, TinTConfig, TinTConfigError


@dataclass(frozen=True)
class Case:
    """A named TinT case: auxiliary and TinT configs, token ids, training prefix and seed."""
    name: str
    aux: AuxConfig
    tint: TinTConfig
    ids: tuple[int, ...]
    n_train: int
    seed: int = 0

    @property
    def tokens(self) -> np.ndarray:
        """The token ids as an array."""
        return np.array(self.ids)


_IDS = (1, 5, 3, 7, 2, 9)
_D12 = AuxConfig("d12", D=12, heads=3, layers=1, vocab=16, positions=8, activation="relu")
# Realistic widths (float64 against torch): 16 tokens, 10 of them trained on, a vocabulary wider than D,
# GPT-2's inner learning rate 1e-3 (README). gpt2-d96 stacks S = 3 rows per prefix, as TinT's GPT-2 does.
_IDS16 = tuple((7 * i + 3) % 96 for i in range(16))


def _wide(name: str, D: int, layers: int, activation: str) -> AuxConfig:
    return AuxConfig(name, D=D, heads=4, layers=layers, vocab=96, positions=32, activation=activation)


CASES: dict[str, Case] = {c.name: c for c in (
    Case("tiny-relu", TINY, TINY_TINT, _IDS, 4),
    Case("tiny-gelu", replace(TINY, activation="gelu_new"), TINY_TINT, _IDS, 4),
    Case("tiny-relu-all-train", TINY, TINY_TINT, _IDS, len(_IDS)),
    Case("tiny-top1-2steps", TINY, replace(TINY_TINT, n_sim=1, steps=2), _IDS, 4),
    Case("tiny-2steps-noreuse", TINY, replace(TINY_TINT, n_sim=1, steps=2, reuse_forward=False,
                                              reuse_backward=False), _IDS, 4),
    Case("d12-S3", _D12, TinTConfig(K=4, H_sim=12, inner_lr=0.25), _IDS, 4),
    Case("d12-S4", _D12, TinTConfig(K=3, H_sim=15, inner_lr=0.25), _IDS, 4),
    Case("d12-S6", _D12, TinTConfig(K=2, H_sim=21, inner_lr=0.25), _IDS, 4),
    Case("gpt2-d64", _wide("gpt2-d64", 64, 2, "gelu_new"), TinTConfig(K=16, H_sim=10, inner_lr=1e-3), _IDS16, 10),
    Case("opt-d64", _wide("opt-d64", 64, 2, "relu"), TinTConfig(K=16, H_sim=10, n_sim=1, inner_lr=1e-3), _IDS16, 10),
    Case("gpt2-d96", _wide("gpt2-d96", 96, 1, "gelu_new"), TinTConfig(K=32, H_sim=16, inner_lr=1e-3), _IDS16, 10),
    Case("gpt2-d128", _wide("gpt2-d128", 128, 1, "gelu_new"), TinTConfig(K=32, H_sim=20, inner_lr=1e-3), _IDS16,
         10),
)}


def case(name: str) -> Case:
    """The case called ``name``; an error lists the known ones."""
    if name not in CASES:
        raise TinTConfigError(f"unknown TinT case {name!r}; known: {', '.join(CASES)}", param="case")
    return CASES[name]
