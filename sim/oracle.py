"""The oracle: a small transformer that runs calls, refuses any call outside its spec, and counts.

two_heads §1.5: the oracle accepts sequences of length at most ``max_len``, has ``layers`` layers
of ``heads`` heads, embedding dimension at most ``dim``, and causal masking or not; the caller
supplies the input and *all* parameters (weights and token-wise maps) with each call.

An :class:`OracleCall` is executed as the small transformer of Def 2.2: the input MLP φ, then per
layer the heads (head h reads the h-th equal column block of the layer input), concatenation, and
the layer MLP ψ. ``OracleSpec.residual`` gives the oracle a residual stream: its layer MLPs then
also read the layer input (``psi(nm, heads, layer_input)``). The paper's model has none; Lemma 3.3
needs one (docs/reconstructions.md, "A residual stream for the packed oracle"), and constructions
that use it say so.

:meth:`Oracle.run` executes a *batch* of independent calls — one round of adaptivity — and writes
every call to the :class:`~attnsim.sim.ledger.Ledger` (kind ``"oracle"``, the call's tag, the round,
shape (length, width), flops).

Length conventions (docs/reconstructions.md, "Oracle length"): ``paper`` — blocks of M real tokens plus one
synthetic token, so ``max_len = M + 1``; ``strict`` — ``max_len = M`` and blocks of M − 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Callable, Iterable

import numpy as np

from attnsim.sim.errors import AttnsimError, OracleSpecError
from attnsim.sim.ledger import Ledger
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.rope import RoPE

LENGTH_CONVENTIONS = ("paper", "strict")


@dataclass(frozen=True)
class OracleSpec:
    """What an oracle accepts: length, heads, layers, width, masking, residual stream, length convention."""
    max_len: int
    heads: int = 1
    layers: int = 1
    dim: int = 1
    causal: bool = False
    residual: bool = False
    length_convention: str = "paper"
    rope: RoPE | None = None

    def __post_init__(self) -> None:
        for name, v in (("max_len", self.max_len), ("heads", self.heads), ("layers", self.layers), ("dim", self.dim)):
            if v < 1:
                raise AttnsimError(f"oracle {name} must be >= 1, got {v}")
        if self.length_convention not in LENGTH_CONVENTIONS:
            raise AttnsimError(f"--length: must be one of {LENGTH_CONVENTIONS}, got {self.length_convention!r}")

    @staticmethod
    def block_size(M: int, convention: str) -> int:
        """Real tokens per block when a synthetic token must fit: M (paper) or M - 1 (strict)."""
        if convention not in LENGTH_CONVENTIONS:
            raise AttnsimError(f"--length: must be one of {LENGTH_CONVENTIONS}, got {convention!r}")
        return M if convention == "paper" else M - 1

    @staticmethod
    def max_len_for(M: int, convention: str) -> int:
        """The oracle length for blocks of M under a length convention (``paper``: M + 1)."""
        return M + 1 if convention == "paper" else M

    def describe(self) -> str:
        """A one-line description of the spec, for error messages and records."""
        return (f"oracle(max_len={self.max_len}, heads={self.heads}, layers={self.layers}, dim={self.dim}, "
                f"causal={self.causal}, residual={self.residual}, length={self.length_convention})")


LayerMLP = Callable[..., Array]  # psi(nm, heads_out) or, with a residual stream, psi(nm, heads_out, layer_in)


@dataclass(frozen=True, eq=False)
class OracleHead:
    """W^Q (w × k), W^K (w × k), W^V (w × v) as arrays of the call's numerics.

    ``rope_dims`` > 0 rotates the first ``rope_dims`` query/key coordinates by the row position
    (an oracle with rotary embeddings, ``OracleSpec.rope``).
    """

    WQ: Array
    WK: Array
    WV: Array
    rope_dims: int = 0


@dataclass(frozen=True, eq=False)
class OracleLayer:
    """One layer of a call: its heads' weights and the layer MLP ψ (None for the identity)."""
    heads: tuple[OracleHead, ...]
    psi: LayerMLP | None = None


@dataclass(frozen=True, eq=False)
class OracleCall:
    """One call: input X (length × width), its layers, an optional input map φ, and a ledger tag."""

    tag: str
    X: Array
    layers: tuple[OracleLayer, ...]
    phi: Callable[[Numerics, Array], Array] | None = None


@dataclass
class Oracle:
    """Executes calls in a numerics, enforcing ``spec`` and recording each call in ``ledger``."""

    spec: OracleSpec
    nm: Numerics
    ledger: Ledger = field(default_factory=Ledger)
    round: int = 0

    def run(self, calls: Iterable[OracleCall]) -> list[Array]:
        """One round of adaptivity: independent calls, executed and recorded in order.

        ``calls`` may be a generator: it is consumed once, one call at a time, so a long round need
        not hold all its inputs at once. No output is returned before the round ends, so the calls
        of a round cannot depend on each other.
        """
        it = iter(calls)
        first = next(it, None)
        if first is None:
            return []
        self.round += 1
        return [self._execute(call) for call in chain([first], it)]

    # -- execution -----------------------------------------------------------------------------
    def _refuse(self, call: OracleCall, what: str) -> OracleSpecError:
        return OracleSpecError(f"oracle refused call '{call.tag}': {what} ({self.spec.describe()})")

    def _execute(self, call: OracleCall) -> Array:
        spec, nm = self.spec, self.nm
        X = call.phi(nm, call.X) if call.phi is not None else call.X
        self._check_call(call, X)
        n, width = X.shape
        allowed = np.tril(np.ones((n, n), dtype=bool)) if spec.causal else None
        flops = 0
        for li, layer in enumerate(call.layers):
            outs, flops_l = self._heads(call, li, layer, X, allowed)
            flops += flops_l
            H = np.concatenate(outs, axis=1)
            if layer.psi is None:
                X = H
            elif spec.residual:
                X = layer.psi(nm, H, X)
            else:
                X = layer.psi(nm, H)
        self._check_width(call, X.shape[1], "output")
        self.ledger.record("oracle", call.tag, round=self.round, shape=(n, width), flops=flops)
        return X

    def _check_call(self, call: OracleCall, X: Array) -> None:
        """Refuse a call longer than ``max_len`` or with more layers than the oracle has."""
        if X.shape[0] > self.spec.max_len:
            raise self._refuse(call, f"sequence length {X.shape[0]} exceeds max_len {self.spec.max_len}")
        if len(call.layers) > self.spec.layers:
            raise self._refuse(call, f"{len(call.layers)} layers exceed the oracle's {self.spec.layers}")

    def _check_width(self, call: OracleCall, width: int, where: str) -> None:
        if width > self.spec.dim:
            raise self._refuse(call, f"{where} width {width} exceeds dim {self.spec.dim}")

    def _check_layer(self, call: OracleCall, li: int, layer: OracleLayer, shape: tuple[int, ...]) -> int:
        """Refuse a layer outside the spec (heads, widths, rotary embeddings); return its flops."""
        spec = self.spec
        n, width = shape
        self._check_width(call, width, f"layer {li} input")
        if len(layer.heads) != spec.heads:
            raise self._refuse(call, f"layer {li} has {len(layer.heads)} heads, the oracle has {spec.heads}")
        if width % spec.heads:
            raise self._refuse(call, f"layer {li} input width {width} is not divisible by {spec.heads} heads")
        w = width // spec.heads
        flops = 0
        for h, head in enumerate(layer.heads):
            if head.WQ.shape[0] != w or head.WK.shape[0] != w or head.WV.shape[0] != w:
                raise self._refuse(call, f"layer {li} head {h}: weights must have {w} rows (its column block)")
            if head.WQ.shape[1] != head.WK.shape[1]:
                raise self._refuse(call, f"layer {li} head {h}: W^Q and W^K widths differ")
            if max(head.WQ.shape[1], head.WV.shape[1]) > spec.dim:
                raise self._refuse(call, f"layer {li} head {h}: head width exceeds dim {spec.dim}")
            if head.rope_dims and spec.rope is None:
                raise self._refuse(call, f"layer {li} head {h} asks for rotary embeddings the oracle lacks")
            kq, kv = head.WQ.shape[1], head.WV.shape[1]
            flops += 2 * n * w * (2 * kq + kv) + 2 * n * n * (kq + kv)
        return flops

    def _heads(self, call: OracleCall, li: int, layer: OracleLayer, X: Array,
               allowed: np.ndarray | None) -> tuple[list[Array], int]:
        spec, nm = self.spec, self.nm
        flops = self._check_layer(call, li, layer, X.shape)
        n, width = X.shape
        w = width // spec.heads
        outs = []
        for h, head in enumerate(layer.heads):
            Xh = X[:, h * w:(h + 1) * w]
            q, k, v = nm.matmul(Xh, head.WQ), nm.matmul(Xh, head.WK), nm.matmul(Xh, head.WV)
            if head.rope_dims:
                assert spec.rope is not None  # refused in _check_layer
                q = spec.rope.apply(nm, q, list(range(n)), head.rope_dims)
                k = spec.rope.apply(nm, k, list(range(n)), head.rope_dims)
            outs.append(nm.attention(q, k, v, allowed))
        return outs, flops
