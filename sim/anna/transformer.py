"""ANNA-transformers (the ANNA definition of §3, used in §4): arbitrary token-wise maps around ANNA/EMA heads.

A layer has heads; each head has token-wise query, key and value maps and a mechanism (EMA or
Algorithm 1 with fixed hash draws). The layer's ``mix`` maps each token's row and its head outputs
to the next row (the paper's sum of W_h-projected heads, generalised to an arbitrary token-wise map
as the element-wise assumption allows; residuals add no power;
docs/reconstructions.md, "Residual connections in ANNA-transformers"). ``readout`` is psi.

Token-wise maps take the whole N x d array for speed but must act row by row (a row may carry its
position, as the paper allows). Every head call is written to the ledger as an ``anna_head`` entry
with round = layer index and shape = (N, query/key dimension, value dimension), so the number of
layers, heads per layer and embedding dimension are read off the ledger, not declared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

import numpy as np

from attnsim.sim.anna.attention import Retrieval, anna_tables, ema
from attnsim.sim.anna.errors import as_matrix
from attnsim.sim.anna.lsh import HyperplaneLSH, PStableLSH, TableHash, draw_tables
from attnsim.sim.ledger import Ledger

TokenMap = Callable[[np.ndarray], np.ndarray]


class Mechanism(Protocol):
    """An attention mechanism of a head (ANNA by Algorithm 1, or EMA): retrieves values for each query."""

    def __call__(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, *, ledger: Ledger, tag: str) -> Retrieval:
        """Retrieve for every row of ``q`` from the keys ``k`` and values ``v``; the work goes to ``ledger``."""


@dataclass(frozen=True)
class EMA:
    """Exact-match attention (anna.def_ema)."""

    def __call__(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, *, ledger: Ledger, tag: str) -> Retrieval:
        """Exact-match attention of ``q`` against ``k``, averaging ``v`` over the matches."""
        return ema(q, k, v, ledger=ledger, tag=tag)


@dataclass(frozen=True)
class LSHAttention:
    """Algorithm 1 with hash draws fixed at construction (the seeds the MPC simulation shares)."""

    hashes: tuple[TableHash, ...]

    @classmethod
    def draw(cls, family: HyperplaneLSH | PStableLSH, ell: int, z: int, seed: int) -> "LSHAttention":
        """Algorithm 1 with ``ell`` tables of ``z`` hashes from ``family``, drawn from ``seed``."""
        return cls(tuple(draw_tables(family, ell, z, np.random.default_rng(seed))))

    def __call__(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, *, ledger: Ledger, tag: str) -> Retrieval:
        """Algorithm 1's retrieval of ``q`` against ``k`` with this attention's tables."""
        return anna_tables(q, k, v, self.hashes, ledger=ledger, tag=tag)


@dataclass(frozen=True)
class Head:
    """One head: query, key and value token maps and the attention mechanism (ANNA or EMA) between them."""
    query: TokenMap
    key: TokenMap
    value: TokenMap
    mechanism: Mechanism


@dataclass(frozen=True)
class Layer:
    """The heads of one layer and the token-wise map that mixes their outputs with the layer input."""
    heads: tuple[Head, ...]
    mix: Callable[[np.ndarray, list[np.ndarray]], np.ndarray]


@dataclass(frozen=True)
class AnnaTransformer:
    """An ANNA-transformer: an embedding, layers of ANNA/EMA heads, and a readout."""
    embed: TokenMap
    layers: tuple[Layer, ...]
    readout: TokenMap = field(default=lambda x: x)

    def __call__(self, tokens: object, *, ledger: Ledger, tag: str = "anna") -> np.ndarray:
        """Run the transformer on ``tokens``; every head's work is written to ``ledger``."""
        x = as_matrix(self.embed(np.asarray(tokens)), "embedding")
        for li, layer in enumerate(self.layers):
            outs = []
            for hi, head in enumerate(layer.heads):
                q, k, v = (as_matrix(f(x), name, rows=x.shape[0])
                           for f, name in ((head.query, "query"), (head.key, "key"), (head.value, "value")))
                ledger.record(
                    "anna_head", f"{tag}.layer{li}.head{hi}", round=li, shape=(x.shape[0], q.shape[1], v.shape[1])
                )
                outs.append(head.mechanism(q, k, v, ledger=ledger, tag=f"{tag}.layer{li}.head{hi}").output_exact())
            width_in = x.shape[1]
            x = as_matrix(layer.mix(x, outs), "layer output", rows=x.shape[0])
            ledger.record("anna_embedding", f"{tag}.layer{li}", round=li, shape=(x.shape[0], width_in, x.shape[1]))
        return self.readout(x)


def size_from_ledger(ledger: Ledger) -> dict[str, int]:
    """Layers, distinct heads (tags) per layer, the largest query/key and value dimensions and the widest
    embedding a layer reads or writes (``embedding``: 0 where no layer recorded its stream), read off the ledger."""
    entries = [e for e in ledger.entries if e.kind == "anna_head"]
    streams = [e for e in ledger.entries if e.kind == "anna_embedding"]
    per_layer: dict[int, set[str]] = {}
    for e in entries:
        per_layer.setdefault(e.round, set()).add(e.tag)
    return {
        "layers": len(per_layer),
        "heads": max((len(tags) for tags in per_layer.values()), default=0),
        "qk_dim": max((e.shape[1] for e in entries), default=0),
        "v_dim": max((e.shape[2] for e in entries), default=0),
        "embedding": max((max(e.shape[1:]) for e in streams), default=0),
    }

