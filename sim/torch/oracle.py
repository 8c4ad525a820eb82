"""An oracle whose small transformer is ``torch.nn.functional.scaled_dot_product_attention``.

:class:`TorchOracle` is an :class:`~attnsim.sim.oracle.Oracle` (two_heads §1.5: same
:class:`OracleSpec`, same refusals with :class:`OracleSpecError`, same ledger entries — kind
``"oracle"``, the call's tag, the round, shape (length, width), flops) that executes the attention
of each call with the library kernel users already trust instead of attnsim's numpy primitives.

Execution: the calls of one round are grouped by shape and by the identity of their weight arrays
(constructions reuse one set of weights for all block pairs of a head); each group of up to
``max_batch`` calls (and ``batch_elements`` input numbers) becomes one (B, n, ·) tensor holding only
the input columns its heads read, and each head runs as one SDPA call on (B, 1, n, ·) tensors
(``scale=1`` — the paper's attention has no 1/sqrt(d) factor; ``is_causal`` when the oracle is
causal; the 4-d form takes torch's fused CPU kernel). What a head reads and computes is decided from
its weights alone by :class:`HeadPlan` and leaves out only exact zeros: score columns W^Q and W^K do
not share, value columns W^V never fills, input columns no weight reads; selector weights (an
imported model's projected layout, ``maps.head_selectors``) become a gather and a scale. Measured on
CPU, one batched SDPA call beat stacking the queries of calls that share keys into one longer call.
The layer MLPs ψ and the input map φ supplied with each call are token-wise functions of that call
and run per call in numpy. The same code runs on a GPU (``device="cuda"``) when one is present.

``dtype``: ``float64`` (default) or ``float32`` (inputs rounded to float32, results returned as
float64 arrays). The numerics must be ``float64``: the torch oracle is a floating-point engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Iterable

import numpy as np

from attnsim.sim.errors import AttnsimError
from attnsim.sim.numerics import Array
from attnsim.sim.oracle import Oracle, OracleCall, OracleLayer, Sink, live_columns

DTYPES = ("float64", "float32")


@dataclass
class TorchOracle(Oracle):
    """Oracle executing calls through torch SDPA (float64/float32, CPU or GPU), batched per round."""

    dtype: str = "float64"
    device: str = "cpu"
    max_batch: int = 256
    batch_elements: int = 1 << 22
    _torch: Any = field(default=None, init=False, repr=False)
    _plans: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        try:
            import torch
        except ImportError:  # pragma: no cover - exercised only without the extra
            raise AttnsimError("the torch oracle needs PyTorch: pip install -e '.[torch]'") from None
        if self.dtype not in DTYPES:
            raise AttnsimError(f"must be one of {DTYPES}, got {self.dtype!r}", param="dtype")
        if self.nm.name != "float64":
            raise AttnsimError(f"the torch oracle runs in float64 numerics only, got {self.nm.name}", param="numerics")
        if self.max_batch < 1:
            raise AttnsimError(f"must be >= 1, got {self.max_batch}", param="max-batch")
        if self.device.startswith("cuda") and not torch.cuda.is_available():
            raise AttnsimError(f"{self.device} requested but no GPU is available", param="device")
        self._torch = torch

    def run(self, calls: Iterable[OracleCall]) -> list[Array]:
        """One round: validate each call as it arrives, execute same-shaped groups as batches.

        ``calls`` may be a generator (consumed once): a group is executed as soon as it holds a
        full batch, so a long round keeps at most one batch of inputs per group. The ledger entries
        are written when the round ends, in call order; a refused call aborts the round before
        anything of it is recorded.
        """
        outputs: dict[int, Array] = {}
        n = self.run_into(calls, outputs.__setitem__)
        return [outputs[i] for i in range(n)]

    def run_into(self, calls: Iterable[OracleCall], sink: Sink) -> int:
        """:meth:`run`, each output handed to ``sink(index, output)`` when its batch is done.

        Outputs arrive batch by batch (not in call order); nothing of a round's outputs is kept
        here, so a round holds only the batches in flight (see :meth:`Oracle.run_into`).
        """
        it = iter(calls)
        first = next(it, None)
        if first is None:
            return 0
        self.round += 1
        self._plans.clear()  # a round's plans hold its weight arrays; later rounds bring their own
        entries: list[tuple[str, tuple[int, ...]]] = []  # (tag, input shape): the inputs themselves are not kept
        flops: list[int] = []
        pending: dict[tuple[Any, ...], list[tuple[int, OracleCall, Array]]] = {}
        for i, call in enumerate(chain([first], it)):
            X = call.phi(self.nm, call.X) if call.phi is not None else call.X
            self._validate(call, X)
            entries.append((call.tag, X.shape))
            flops.append(0)
            key = self._group_key(call, X)
            group = pending.setdefault(key, [])
            group.append((i, call, X))
            n, width = X.shape
            if len(group) >= max(1, min(self.max_batch, self.batch_elements // max(1, n * width))):
                self._run_group(pending.pop(key), flops, sink)
        for group in pending.values():
            self._run_group(group, flops, sink)
        self._plans.clear()
        for f, (tag, shape) in zip(flops, entries):
            self.ledger.record("oracle", tag, round=self.round, shape=shape, flops=f)
        return len(entries)

    def _run_group(self, group: list[tuple[int, OracleCall, Array]], flops: list[int], sink: Sink) -> None:
        calls = [c for _, c, _ in group]
        for (i, _, _), call, (out, f) in zip(group, calls, self._execute_group(calls, [x for _, _, x in group])):
            self._check_output(call, out.shape[1])
            flops[i] = f
            sink(i, out)

    # -- spec enforcement: the numpy oracle's checks (Oracle._check_call, Oracle._check_layer) ----------
    def _validate(self, call: OracleCall, X: Array) -> None:
        """Length, layer count and the first layer, checked for every call before it runs."""
        self._check_call(call, X)
        if call.layers:
            self._check_layer(call, 0, call.layers[0], X.shape)

    @staticmethod
    def _group_key(call: OracleCall, X: Array) -> tuple[Any, ...]:
        return (X.shape, tuple(tuple((id(h.WQ), id(h.WK), id(h.WV), h.rope_dims) for h in layer.heads)
                               for layer in call.layers))

    # -- execution ----------------------------------------------------------------------------
    def _tensor(self, a: np.ndarray) -> Any:
        torch = self._torch
        return torch.from_numpy(np.ascontiguousarray(a)).to(self.device, getattr(torch, self.dtype))

    def _execute_group(self, calls: list[OracleCall], inputs: list[Array]) -> list[tuple[Array, int]]:
        """Outputs and flops of calls with equal input shapes and shared weights, as one batch."""
        torch = self._torch
        F = torch.nn.functional
        X = [np.asarray(x, dtype=np.float64) for x in inputs]
        flops = [0] * len(calls)
        for li, layer in enumerate(calls[0].layers):
            if len({x.shape for x in X}) != 1:  # ψ gave calls different widths: finish them one by one
                rest = [self._execute_group([_from_layer(c, li)], [x])[0] for c, x in zip(calls, X)]
                return [(out, f + g) for (out, g), f in zip(rest, flops)]
            for b, c in enumerate(calls):
                flops[b] += self._check_layer(c, li, layer, X[b].shape)
            w = X[0].shape[1] // self.spec.heads
            plans = [self._plan(head) for head in layer.heads]
            Xt = self._gather(X, [h * w + p.reads for h, p in enumerate(plans)])
            widths = [head.WV.shape[1] for head in layer.heads]
            Hs = np.zeros((len(X), X[0].shape[0], sum(widths)))
            start = col = 0
            for head, plan, width in zip(layer.heads, plans, widths):
                Xh = Xt[:, :, start:start + len(plan.reads)]
                start += len(plan.reads)
                q, k, v = plan.project(Xh, self._tensor)
                if head.rope_dims:
                    q, k = self._rotate(q, head.rope_dims), self._rotate(k, head.rope_dims)
                # (B, 1, n, ·): the 4-d form takes torch's fused CPU kernel (the 3-d one, its slower
                # reference path)
                o = F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None], is_causal=self.spec.causal,
                                                   scale=1.0)[:, 0].to("cpu", torch.float64).numpy()
                cols = col + (plan.value_cols if plan.value_cols is not None else np.arange(width))
                Hs[:, :, cols] = o  # the columns W^V leaves at 0 stay exactly 0, a weighted mean of zeros
                col += width
            X = [self._layer_mlp(c.layers[li], Hs[b], X[b]) for b, c in enumerate(calls)]
        return list(zip(X, flops))

    def _plan(self, head: Any) -> HeadPlan:
        """The head's :class:`HeadPlan`, computed once per set of weight arrays in a round (constructions
        share one set among all block pairs of a head)."""
        key = (id(head.WQ), id(head.WK), id(head.WV), head.rope_dims)
        hit = self._plans.get(key)
        if hit is None or hit[0] is not head.WQ or hit[1] is not head.WK or hit[2] is not head.WV:
            hit = (head.WQ, head.WK, head.WV, HeadPlan.of(head))
            self._plans[key] = hit
        return hit[3]

    def _gather(self, X: list[np.ndarray], cols: list[np.ndarray]) -> Any:
        """The batch as one (B, n, Σ|cols|) tensor holding only the input columns the heads read."""
        idx = np.concatenate(cols)
        B, (n, width) = len(X), X[0].shape
        if len(idx) == width and np.array_equal(idx, np.arange(width)):
            return self._tensor(np.stack(X))
        out = np.empty((B, n, len(idx)))
        for b, x in enumerate(X):
            np.take(x, idx, axis=1, out=out[b])
        return self._tensor(out)

    def _rotate(self, t: Any, dims: int) -> Any:
        """Rotary embeddings of the oracle (``OracleSpec.rope``) per call, by row position."""
        a = t.to("cpu", self._torch.float64).numpy()
        rope = self.spec.rope
        assert rope is not None  # refused in _check_layer
        rows = list(range(a.shape[1]))
        return self._tensor(np.stack([rope.apply(self.nm, a[b], rows, dims) for b in range(a.shape[0])]))

    def _layer_mlp(self, layer: OracleLayer, H: np.ndarray, X: np.ndarray) -> Array:
        if layer.psi is None:
            return H
        return layer.psi(self.nm, H, X) if self.spec.residual else layer.psi(self.nm, H)


@dataclass(frozen=True, eq=False)
class Projection:
    """x ↦ x W for one of a head's weights, reading only the input columns W uses.

    ``reads``: the input columns gathered for it. ``weights``: W on those rows — or None when every
    column of W has exactly one non-zero entry (a selector, as in an imported model's projected
    layout): then the gathered columns are the product, times ``factor`` where it is not 1, bit for
    bit what the GEMM gives (it adds exact zeros).
    """

    reads: np.ndarray
    weights: np.ndarray | None
    factor: np.ndarray | None

    @classmethod
    def of(cls, W: np.ndarray) -> Projection:
        """The projection by W (input width × output width)."""
        nonzero = W != 0
        if W.size and np.all(nonzero.sum(axis=0) == 1):
            source = np.argmax(nonzero, axis=0)
            return cls(source, None, W[source, np.arange(W.shape[1])])
        rows = np.flatnonzero(nonzero.any(axis=1))
        if 2 * len(rows) > W.shape[0]:
            rows = np.arange(W.shape[0])
        return cls(rows, W[rows], None)

    def apply(self, Xp: Any, tensor: Any) -> Any:
        """The product for a (B, n, |reads|) slice of the gathered batch (scaled in place: the batch is
        the oracle's own copy of the inputs)."""
        if self.weights is not None:
            B, n, width = Xp.shape
            return (Xp.reshape(B * n, width) @ tensor(self.weights)).reshape(B, n, -1)
        scaled = np.flatnonzero(self.factor != 1)
        if len(scaled):
            Xp[..., scaled] *= tensor(self.factor[scaled])
        return Xp


@dataclass(frozen=True, eq=False)
class HeadPlan:
    """What one head's attention reads and how, from its weights alone (exact: only terms that are 0 go).

    * score columns: those where both W^Q and W^K have a non-zero entry — the others add exactly 0
      to every score <q_i, k_j>, so attention runs on these alone (an imported head's W^Q, W^K fill
      d_h + 1 of their m + 1 columns in Theorem 3.5's calls);
    * ``value_cols``: the non-zero columns of W^V when at most half are (else None): attention
      multiplies only those, and the zero columns are put back (their output is exactly 0, a weighted
      mean of zeros);
    * one :class:`Projection` each for the kept columns of W^Q, W^K, W^V, so a call input
      [x_key, x_query, 1, ind] is multiplied block by block (each weight reads about half of it)
      instead of as one dense product.
    """

    parts: tuple[Projection, Projection, Projection]
    value_cols: np.ndarray | None

    @classmethod
    def of(cls, head: Any) -> HeadPlan:
        """The plan of a head with weights ``head.WQ``, ``head.WK``, ``head.WV``."""
        WQ, WK, WV = (np.asarray(W, dtype=np.float64) for W in (head.WQ, head.WK, head.WV))
        score, used_v = live_columns(WQ, WK, WV)
        if head.rope_dims:  # rotary embeddings mix query/key columns in pairs: keep them all
            score = np.arange(WQ.shape[1])
        value_cols = used_v if 2 * len(used_v) <= WV.shape[1] else None
        Wv = WV[:, value_cols] if value_cols is not None else WV
        return cls((Projection.of(WQ[:, score]), Projection.of(WK[:, score]), Projection.of(Wv)), value_cols)

    @property
    def reads(self) -> np.ndarray:
        """The input columns to gather: those of the query, key and value projections, in that order."""
        return np.concatenate([p.reads for p in self.parts])

    def project(self, Xh: Any, tensor: Any) -> tuple[Any, ...]:
        """(q, k, v) of a (B, n, |reads|) slice of the gathered batch."""
        out, start = [], 0
        for p in self.parts:
            out.append(p.apply(Xh[..., start:start + len(p.reads)], tensor))
            start += len(p.reads)
        return tuple(out)


def _from_layer(call: OracleCall, li: int) -> OracleCall:
    """The rest of ``call`` from layer ``li`` on (its input already computed)."""
    return OracleCall(call.tag, call.X, call.layers[li:])
