"""Error of a trained surrogate with its softmax, and with Algorithm 1 in every layer over a grid of (ell, z).

The error is the share of wrong token predictions over all tokens of the test sequences (App. G counts all
tokens). For each run a fresh set of tables is drawn per layer (:class:`~.anna_layer.SharedDraw`, seeded by
(seed, run, layer)); every layer uses the same z, as the paper reports one z per cell.
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np
import torch
from rich.console import Console

from attnsim.verify.experiments.anna_layer import SharedDraw, anna_attention_prefixes
from attnsim.verify.experiments.surrogate import Surrogate
from attnsim.verify.progress import progress


def token_error(logits: torch.Tensor, targets: np.ndarray) -> float:
    """Share of tokens whose arg-max class differs from the target."""
    return float((logits.argmax(dim=-1).numpy() != targets).mean())


def softmax_error(model: Surrogate, tokens: np.ndarray, targets: np.ndarray) -> float:
    """The surrogate's own error (its softmax attention): the baseline Algorithm 1 is read against."""
    with torch.no_grad():
        return token_error(model(torch.as_tensor(tokens)), targets)


class _AnnaRun:
    """One run: per layer one draw of tables; :meth:`attend` runs Algorithm 1 at the layer's current (ell, z),
    computing every ell of the layer's grid at once (:func:`~.anna_layer.anna_attention_prefixes`) and keeping
    them while the layer's input and z stay the same."""

    def __init__(self, model: Surrogate, seed: int, run: int, ells: Sequence[Sequence[int]], z_max: int,
                 family: str = "cross-polytope") -> None:
        """Draw every layer's tables of ``family`` for this run (``ells[layer]``: the table counts tried in that
        layer)."""
        m = model.shape.width
        self.ells = [tuple(e) for e in ells]
        self.draws = [SharedDraw.draw(np.random.default_rng([seed, run, layer]), m, max(e), z_max, family)
                      for layer, e in enumerate(self.ells)]
        self.setting: list[tuple[int, int]] = []
        self._primed: list[tuple | None] = [None] * len(ells)
        self._arrays: list[tuple[np.ndarray, ...]] = [()] * len(ells)
        self._memo: list[tuple[tuple, dict[int, torch.Tensor]] | None] = [None] * len(ells)

    def attend(self, layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """Algorithm 1 in place of the softmax of ``layer`` (outputs of a setting already seen are reused)."""
        ell, z = self.setting[layer]
        key = (tuple(self.setting[:layer]), z)  # the layer's input, and the hashes per table
        memo = self._memo[layer]
        if memo is None or memo[0] != key:
            B, N, m = q.shape
            source = (tuple(self.setting[:layer]), z if layer else None)  # input, hashes needed
            if self._primed[layer] != source:  # else hashed already: the codes are found by the arrays' identity
                self._arrays[layer] = tuple(t.detach().to(torch.float64).reshape(B * N, m).numpy() for t in (q, k))
                self.draws[layer].prime(*self._arrays[layer], z=z if layer else None)
                self._primed[layer] = source
            vn = v.detach().to(torch.float64).reshape(B * N, -1).numpy()
            outs = anna_attention_prefixes(self.draws[layer], *self._arrays[layer], vn, N, self.ells[layer], z)
            memo = (key, {e: torch.as_tensor(o.reshape(B, N, -1), dtype=q.dtype) for e, o in outs.items()})
            self._memo[layer] = memo
        return memo[1][ell]


def anna_grid(model: Surrogate, tokens: np.ndarray, targets: np.ndarray, ells: Sequence[Sequence[int]],
              zs: Sequence[int], runs: int, seed: int, console: Console | None = None,
              label: str = "Algorithm 1 grid", family: str = "cross-polytope") -> np.ndarray:
    """Errors with Algorithm 1 (tables of the angular ``family``) in every layer: an array runs x len(zs) x
    len(ells[0]) x len(ells[1]) x ..., ``ells[layer]`` being the table counts tried in that layer."""
    shape = (runs, len(zs), *(len(e) for e in ells))
    errors = np.zeros(shape)
    x = torch.as_tensor(tokens)
    cells = list(itertools.product(*(range(len(e)) for e in ells)))
    with progress(console, label, runs * len(zs) * len(cells)) as bar, torch.no_grad():
        for run in range(runs):
            state = _AnnaRun(model, seed, run, ells, max(zs), family)
            for zi, z in enumerate(zs):
                for cell in cells:
                    state.setting = [(ells[layer][i], z) for layer, i in enumerate(cell)]
                    errors[(run, zi, *cell)] = token_error(model(x, state.attend), targets)
                    bar.advance()
    return errors
