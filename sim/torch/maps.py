"""Token-wise maps that carry an imported PyTorch layer's non-attention parts (two_heads Def 2.2).

The paper's large transformer (``attnsim.sim.model``) has per layer H heads, head h reading the
h-th column block X_h of the layer input through m × m matrices W^Q_h, W^K_h, W^V_h, and a
token-wise MLP ψ_ℓ; with ``residual=True`` ψ_ℓ reads X + heads. A library layer (query/key/value
projections with biases, 1/sqrt(d_head) scaling, out-projection, residual, layer norm, FFN) is
mapped onto that shape with the **projected layout**: with E = H·d_h, every head block has width
m = 5·d_h and holds

    block h of the layer input:   [ q_h | k_h | v_h | r_h | 0   ]
    block h of the heads' output: [ 0   | 0   | 0   | 0   | o_h ]

where q_h, k_h, v_h are the head's projected query/key/value *including their biases*, r_h is the
h-th slice of the residual stream x (E wide in all), and o_h is the head's attention output. The
head weights are selectors (the same for every head and layer)::

    W^Q = s · [I 0 0 0 0]^T  (s = the module's scale, 1/sqrt(d_h): folded into W^Q)
    W^K =     [0 I 0 0 0]^T
    W^V = maps v_h onto the o_h slot

so scores are s·<q_i, k_j> and X + heads = [q, k, v, r, o] per block. The layer MLP ψ_ℓ
(:class:`TorchLayerMap`) reads x = concat(r_h) and a = concat(o_h), applies the rest of the layer
(out-projection, residual, layer norms, FFN), and then either *encodes* the next layer's input
(its pre-norm and q/k/v projections with biases) or, after the last layer, returns the E-wide
output (with a final norm for GPT-2). The input map φ encodes layer 0 from the input x, which is
given zero-padded to the model width d = H·m (``reference`` requires inputs of width d).

Because the projections and biases run in the token-wise maps, no constant coordinate is needed
for biases (the alternative: head input [x | 1 | o_h], m = E + 1 + d_h — 833 instead of 320
for GPT-2 small, which decides whether the N = 8192 example runs in minutes).

These maps compute in float64 only (layer norm needs a square root, GELU an error function);
other numerics are refused with a clear error.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnsim.sim.errors import AttnsimError
from attnsim.sim.numerics import Array, Numerics
from attnsim.sim.token_maps import TokenMap

ACTIVATIONS = ("relu", "gelu", "gelu_tanh")
SLOTS = 5  # q, k, v, r, o


@dataclass(frozen=True, eq=False)
class Linear:
    """x ↦ x W + b (W: in × out; torch's ``nn.Linear`` stores W transposed)."""

    W: np.ndarray
    b: np.ndarray | None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """x W (+ b), by torch's own GEMM (``addmm``, the kernel the imported module calls)."""
        import torch

        xt, Wt = torch.from_numpy(np.ascontiguousarray(x)), torch.from_numpy(self.W)
        if self.b is None:
            return (xt @ Wt).numpy()
        return torch.addmm(torch.from_numpy(self.b), xt, Wt).numpy()


@dataclass(frozen=True, eq=False)
class LayerNorm:
    """A layer norm with optional affine parameters, in float64."""
    gamma: np.ndarray | None
    beta: np.ndarray | None
    eps: float

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Normalise each row, then scale and shift when the parameters are set."""
        mu = x.mean(axis=-1, keepdims=True)
        c = x - mu
        y = c / np.sqrt((c * c).mean(axis=-1, keepdims=True) + self.eps)
        if self.gamma is not None:
            y = y * self.gamma
        return y + self.beta if self.beta is not None else y


def activation(name: str, x: np.ndarray) -> np.ndarray:
    """The named activation (``relu``, ``gelu_tanh`` or ``gelu``) in float64.

    The GELUs run through torch's own kernels (present whenever a torch model is imported): the same
    functions the imported module applies, and an order of magnitude faster than numpy's ``tanh`` and
    ``**`` on a layer's N × 4E hidden activations.
    """
    if name == "relu":
        return np.maximum(x, 0.0)
    if name not in ("gelu_tanh", "gelu"):
        raise AttnsimError(f"activation: must be one of {ACTIVATIONS}, got {name!r}")
    import torch

    t = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))
    return torch.nn.functional.gelu(t, approximate="tanh" if name == "gelu_tanh" else "none").numpy()


@dataclass(frozen=True, eq=False)
class LayerParams:
    """One library layer, read off a torch module.

    ``style``: ``"attention"`` (a bare attention module: output = out-projection of the heads),
    ``"post_norm"`` (x ← LN1(x + attn(x)); x ← LN2(x + FFN(x))) or ``"pre_norm"``
    (x ← x + attn(LN1(x)); x ← x + FFN(LN2(x)); GPT-2 and ``norm_first=True``).
    """

    H: int
    scale: float
    q: Linear
    k: Linear
    v: Linear
    out: Linear
    style: str = "attention"
    ln1: LayerNorm | None = None
    ln2: LayerNorm | None = None
    ffn_in: Linear | None = None
    ffn_out: Linear | None = None
    act: str = "relu"

    @property
    def E(self) -> int:
        """The model width."""
        return int(self.q.W.shape[0])

    @property
    def dh(self) -> int:
        """The head width E/H."""
        return self.E // self.H

    def attention_input(self, x: np.ndarray) -> np.ndarray:
        """The attention's input: the first layer norm of a pre-norm layer, else x itself."""
        return self.ln1(x) if self.style == "pre_norm" and self.ln1 is not None else x

    def after_attention(self, x: np.ndarray, a: np.ndarray) -> np.ndarray:
        """The layer output from its input x and the concatenated heads a."""
        o = self.out(a)
        if self.style == "attention":
            return o
        if self.style == "post_norm":
            y = _norm(self.ln1, x + o)
            return _norm(self.ln2, y + self._ffn(y))
        y = x + o
        return y + self._ffn(_norm(self.ln2, y))

    def _ffn(self, x: np.ndarray) -> np.ndarray:
        if self.ffn_in is None or self.ffn_out is None:
            return np.zeros_like(x)
        return self.ffn_out(activation(self.act, self.ffn_in(x)))


def _norm(ln: LayerNorm | None, x: np.ndarray) -> np.ndarray:
    return ln(x) if ln is not None else x


def block_width(dh: int) -> int:
    """Width of one head's block in the layer map's output: SLOTS slots of width dh."""
    return SLOTS * dh


def encode(layer: LayerParams, x: np.ndarray) -> np.ndarray:
    """x (N × E) ↦ the layer input in the projected layout (N × H·5·d_h)."""
    N, H, dh = x.shape[0], layer.H, layer.dh
    u = layer.attention_input(x)
    parts = (layer.q(u), layer.k(u), layer.v(u), x)
    out = np.zeros((N, H, SLOTS, dh))
    for s, p in enumerate(parts):
        out[:, :, s, :] = p.reshape(N, H, dh)
    return out.reshape(N, H * SLOTS * dh)


def decode(X: np.ndarray, H: int, dh: int) -> tuple[np.ndarray, np.ndarray]:
    """X + heads in the projected layout ↦ (residual x, concatenated heads a), each N × E."""
    blocks = X.reshape(X.shape[0], H, SLOTS, dh)
    return blocks[:, :, 3, :].reshape(X.shape[0], H * dh), blocks[:, :, 4, :].reshape(X.shape[0], H * dh)


def head_selectors(dh: int, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W^Q, W^K, W^V (m × m, m = 5·d_h) of every head in the projected layout."""
    m = block_width(dh)
    eye = np.eye(dh)
    WQ, WK, WV = np.zeros((m, m)), np.zeros((m, m)), np.zeros((m, m))
    WQ[0:dh, 0:dh] = scale * eye
    WK[dh:2 * dh, 0:dh] = eye
    WV[2 * dh:3 * dh, 4 * dh:5 * dh] = eye
    return WQ, WK, WV


def _float64(nm: Numerics, x: Array) -> np.ndarray:
    if nm.name != "float64" or x.dtype != np.float64:
        raise AttnsimError(f"imported torch models run in float64 only (layer norm and GELU "
                           f"are not rational), got {nm.name}", param="numerics")
    return x


@dataclass(frozen=True, eq=False)
class TorchLayerMap(TokenMap):
    """φ (``prev`` is None: the input, zero-padded to width d) or ψ_ℓ of an imported model.

    ``prev``: the layer whose heads were just computed (its rest is applied); ``next``: the layer
    whose input is encoded next (None after the last layer); ``final``: a norm applied to the
    model output (GPT-2's ln_f).
    """

    prev: LayerParams | None
    next: LayerParams | None
    E: int
    final: LayerNorm | None = None
    name: str = "torch-layer"

    def __call__(self, nm: Numerics, X: Array) -> Array:
        """Finish the previous layer (if any) and lay out the next layer's head inputs."""
        X = _float64(nm, X)
        if self.prev is None:
            x = X[:, :self.E]
        else:
            res, heads = decode(X, self.prev.H, self.prev.dh)
            x = self.prev.after_attention(res, heads)
        if self.next is not None:
            return encode(self.next, x)
        return _norm(self.final, x)

    def out_dim(self, in_dim: int) -> int:
        """Output width: the model width after the last layer, else the next layer's head blocks."""
        return self.E if self.next is None else self.next.H * block_width(self.next.dh)
