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
from typing import Callable, Iterable, Sequence

import numpy as np

from attnsim.sim.errors import AttnsimError, OracleSpecError
from attnsim.sim.ledger import Ledger
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.rope import RoPE

Sink = Callable[[int, Array], None]
"""Receives each output of a round with its call's index (see :meth:`Oracle.run_into`)."""

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
            raise AttnsimError(f"must be one of {LENGTH_CONVENTIONS}, got {self.length_convention!r}", param="length")

    @staticmethod
    def block_size(M: int, convention: str) -> int:
        """Real tokens per block when a synthetic token must fit: M (paper) or M - 1 (strict)."""
        if convention not in LENGTH_CONVENTIONS:
            raise AttnsimError(f"must be one of {LENGTH_CONVENTIONS}, got {convention!r}", param="length")
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
        outputs: list[Array] = []
        self.run_into(calls, lambda i, out: outputs.append(out))
        return outputs

    def run_into(self, calls: Iterable[OracleCall], sink: Sink) -> int:
        """One round like :meth:`run`, each output handed to ``sink(index, output)`` as it exists.

        The sink is the construction's combination step (processing), which folds outputs into
        running sums so a round never holds all its outputs. The calls are built before or
        independently of the sink's state, so no call of a round depends on another's output.
        Returns the number of calls.
        """
        it = iter(calls)
        first = next(it, None)
        if first is None:
            return 0
        self.round += 1
        n = 0
        for n, call in enumerate(chain([first], it), start=1):
            sink(n - 1, self._execute(call))
        return n

    # -- execution -----------------------------------------------------------------------------
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
        self._check_output(call, X.shape[1])
        self.ledger.record("oracle", call.tag, round=self.round, shape=(n, width), flops=flops)
        return X

    def _check_call(self, call: OracleCall, X: Array) -> None:
        """Refuse a call longer than ``max_len`` or with more layers than the oracle has."""
        self._raise_if(call, refusal(self.spec, length=X.shape[0], layers=len(call.layers)))

    def _check_output(self, call: OracleCall, width: int) -> None:
        self._raise_if(call, refusal(self.spec, output=width))

    def _check_layer(self, call: OracleCall, li: int, layer: OracleLayer, shape: tuple[int, ...]) -> int:
        """Refuse a layer outside the spec (heads, widths, rotary embeddings); return its flops."""
        n, width = shape
        self._raise_if(call, refusal(self.spec, layer=li, width=width, heads=layer.heads))
        w = width // self.spec.heads
        return sum(head_flops(n, w, head.WQ.shape[1], head.WV.shape[1]) for head in layer.heads)

    def _raise_if(self, call: OracleCall, why: str | None) -> None:
        if why is not None:
            raise refused(self.spec, call.tag, why)

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


def live_columns(WQ: Array, WK: Array, WV: Array) -> tuple[np.ndarray, np.ndarray]:
    """The columns a head's output can depend on: score columns where both W^Q and W^K have a non-zero
    entry (the others add exactly 0 to every <q_i, k_j>; at least one column is kept, so that scores that
    are all 0 still have a width), and the value columns W^V can make non-zero (the others output 0)."""
    WQ, WK, WV = (np.asarray(W) != 0 for W in (WQ, WK, WV))
    score = np.flatnonzero(WQ.any(axis=0) & WK.any(axis=0))
    return (score if len(score) else np.arange(min(1, WQ.shape[1]))), np.flatnonzero(WV.any(axis=0))


def head_flops(n: int, width: int, kq: int, kv: int) -> int:
    """Flops of one attention head on an n × ``width`` input: the three projections (query and key
    ``kq`` wide, value ``kv`` wide), the n × n scores and the weighted sum of the values."""
    return 2 * n * width * (2 * kq + kv) + 2 * n * n * (kq + kv)


def refused(spec: OracleSpec, tag: str, why: str) -> OracleSpecError:
    """The error for call ``tag`` refused for reason ``why`` (a :func:`refusal`)."""
    return OracleSpecError(f"oracle refused call '{tag}': {why} ({spec.describe()})")


def refusal(spec: OracleSpec, *, length: int | None = None, layers: int | None = None, layer: int = 0,
            width: int | None = None, heads: Sequence[OracleHead] | None = None,
            output: int | None = None) -> str | None:
    """Why an oracle with ``spec`` refuses a call, or None: the one set of refusal checks.

    Checks what is given, in the order a call meets them: its ``length`` and number of ``layers``;
    the input ``width`` of layer ``layer`` and that layer's ``heads`` (count, weight shapes, head
    width, rotary embeddings); the ``output`` width. Every executor (``Oracle``, the engine's
    batches, the torch oracle, the batched runner) asks this function, so all refuse alike.
    """
    if length is not None and length > spec.max_len:
        return f"sequence length {length} exceeds max_len {spec.max_len}"
    if layers is not None and layers > spec.layers:
        return f"{layers} layers exceed the oracle's {spec.layers}"
    li = layer
    if width is not None and width > spec.dim:
        return f"layer {li} input width {width} exceeds dim {spec.dim}"
    if heads is not None:
        if len(heads) != spec.heads:
            return f"layer {li} has {len(heads)} heads, the oracle has {spec.heads}"
        assert width is not None, "a layer's heads are checked against its input width"
        if width % spec.heads:
            return f"layer {li} input width {width} is not divisible by {spec.heads} heads"
        w = width // spec.heads
        for h, head in enumerate(heads):
            if head.WQ.shape[0] != w or head.WK.shape[0] != w or head.WV.shape[0] != w:
                return f"layer {li} head {h}: weights must have {w} rows (its column block)"
            if head.WQ.shape[1] != head.WK.shape[1]:
                return f"layer {li} head {h}: W^Q and W^K widths differ"
            if max(head.WQ.shape[1], head.WV.shape[1]) > spec.dim:
                return f"layer {li} head {h}: head width exceeds dim {spec.dim}"
            if head.rope_dims and spec.rope is None:
                return f"layer {li} head {h} asks for rotary embeddings the oracle lacks"
    if output is not None and output > spec.dim:
        return f"output width {output} exceeds dim {spec.dim}"
    return None
