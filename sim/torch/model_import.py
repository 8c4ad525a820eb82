"""Import a PyTorch model as the large transformer of two_heads Def 2.2 (``TransformerSpec``/``Weights``).

Supported modules (self-attention; the module is switched to float64 and eval mode in place, and the
imported weights are numpy views of its parameters, not copies — a GPT-2-small-shaped model is about
0.7 GB in float64 — so change the module after importing it and the import changes with it):

* ``torch.nn.MultiheadAttention`` — one layer, style ``attention`` (output = out-projection of the
  heads; the residual slot is carried but unused);
* ``torch.nn.TransformerEncoderLayer`` — one layer, post-norm or ``norm_first=True``, ReLU or GELU;
* a Hugging Face ``GPT2Model`` (or ``GPT2LMHeadModel``, whose ``.transformer`` is used) — L pre-norm
  layers with tanh-GELU, a causal mask, the final ``ln_f`` in the last layer map. GPT-2 adds learned
  position embeddings to its input; they depend on the position, not only the token, so they are
  not a token-wise map: :meth:`ImportedModel.model_input` adds them to the input before φ.

The mapping (projected layout: q/k/v projections with biases in the token-wise maps, 1/sqrt(d_head)
folded into W^Q, the residual stream through ``TransformerSpec.residual``) is documented in
``attnsim.sim.torch.maps``. :meth:`ImportedModel.verify` runs the torch module and the attnsim
reference on the same input and refuses (``ImportMismatchError``) when they differ by more than
``IMPORT_RTOL`` (row-wise relative L2) — call it before simulating.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnsim.sim.errors import AttnsimError
from attnsim.sim.masks import Causal, Full, Mask
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights, reference
from attnsim.sim.numerics import get_numerics
from attnsim.sim.torch.maps import LayerNorm, LayerParams, Linear, TorchLayerMap, block_width, head_selectors

IMPORT_RTOL = 1e-10


class ImportMismatchError(AttnsimError):
    """The attnsim reference does not reproduce the torch module's output."""


def _np(t: Any) -> np.ndarray | None:
    """A float64 CPU parameter as a numpy view of its storage (no second copy of a large model)."""
    return None if t is None else t.detach().to("cpu").double().numpy()


def _linear_from_rows(W: Any, b: Any) -> Linear:
    """torch ``nn.Linear`` convention (y = x W^T + b) to x W + b."""
    return Linear(_np(W).T.copy(), _np(b))


def _layer_norm(ln: Any) -> LayerNorm:
    return LayerNorm(_np(ln.weight), _np(ln.bias), float(ln.eps))


def _mha_params(mha: Any) -> dict[str, Any]:
    import torch

    if not isinstance(mha, torch.nn.MultiheadAttention):
        raise AttnsimError(f"module: expected torch.nn.MultiheadAttention, got {type(mha).__name__}")
    if not mha._qkv_same_embed_dim:
        raise AttnsimError("module: kdim/vdim different from embed_dim are not supported (self-attention only)")
    if mha.bias_k is not None or mha.add_zero_attn:
        raise AttnsimError("module: add_bias_kv / add_zero_attn add extra keys; not supported")
    E, H = mha.embed_dim, mha.num_heads
    W, b = mha.in_proj_weight, mha.in_proj_bias
    bs = (None, None, None) if b is None else (b[:E], b[E:2 * E], b[2 * E:])
    return dict(H=H, scale=float((E // H) ** -0.5),
                q=_linear_from_rows(W[:E], bs[0]), k=_linear_from_rows(W[E:2 * E], bs[1]),
                v=_linear_from_rows(W[2 * E:], bs[2]),
                out=_linear_from_rows(mha.out_proj.weight, mha.out_proj.bias))


def _activation_name(act: Any) -> str:
    import torch

    name = act if isinstance(act, str) else getattr(act, "__name__", type(act).__name__)
    name = name.lower()
    if isinstance(act, torch.nn.GELU):
        return "gelu_tanh" if act.approximate == "tanh" else "gelu"
    if name in ("relu", "gelu"):
        return name
    raise AttnsimError(f"module: activation {act!r} is not supported (relu, gelu)")


@dataclass(frozen=True, eq=False)
class ImportedModel:
    """A torch module as (spec, weights) of the reference model, with its own forward for comparison."""

    kind: str
    spec: TransformerSpec
    weights: Weights
    E: int
    module: Any
    position: np.ndarray | None = None  # GPT-2 position embeddings (n_positions × E)

    def model_input(self, x: np.ndarray) -> np.ndarray:
        """The torch input x (N × E) as the reference model's input: + positions, zero-padded to width d."""
        if x.shape != (self.spec.N, self.E):
            raise AttnsimError(f"input: x has shape {x.shape}, expected (N, E) = ({self.spec.N}, {self.E})")
        if not np.isfinite(x).all():
            raise AttnsimError("input: x has a non-finite value")
        X = np.zeros((self.spec.N, self.spec.d))
        X[:, :self.E] = x if self.position is None else x + self.position[:self.spec.N]
        return X

    def torch_forward(self, x: np.ndarray) -> np.ndarray:
        """The torch module's own output on x (float64, no grad)."""
        import torch

        xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64))
        with torch.no_grad():
            if self.kind == "mha":
                mask = _torch_mask(self.spec.mask, self.spec.N)
                return self.module(xt, xt, xt, need_weights=False, attn_mask=mask)[0].numpy()
            if self.kind == "encoder":
                return self.module(xt, src_mask=_torch_mask(self.spec.mask, self.spec.N)).numpy()
            return self.module(inputs_embeds=xt[None]).last_hidden_state[0].numpy()

    def reference_forward(self, x: np.ndarray) -> np.ndarray:
        """attnsim's reference model on input ``x`` in float64."""
        nm = get_numerics("float64", 0)
        return reference(self.spec, self.weights, self.model_input(x), nm)

    def verify(self, x: np.ndarray, rtol: float = IMPORT_RTOL) -> float:
        """Row-wise relative L2 error of the reference against torch; raises when above ``rtol``."""
        err = relative_error(self.reference_forward(x), self.torch_forward(x))
        if not err <= rtol:
            raise ImportMismatchError(f"import of {self.kind}: reference differs from torch by {err:.3g} "
                                      f"(row-wise relative), above the tolerance {rtol:g}")
        return err


def relative_error(y: np.ndarray, ref: np.ndarray) -> float:
    """max_i ||y_i − ref_i|| / ||ref_i|| (absolute where ref_i = 0); inf on shape mismatch."""
    if y.shape != ref.shape:
        return float("inf")
    num = np.linalg.norm(y - ref, axis=-1)
    den = np.linalg.norm(ref, axis=-1)
    return float(np.max(np.where(den > 0, num / np.where(den > 0, den, 1.0), num))) if y.size else 0.0


def _torch_mask(mask: Mask, N: int) -> Any:
    """attnsim mask (True = may attend) to torch's boolean attn_mask (True = may NOT attend)."""
    import torch

    return None if isinstance(mask, Full) else torch.from_numpy(~mask.materialize(N))


def _build(kind: str, layers: list[LayerParams], N: int, mask: Mask, module: Any,
           final: LayerNorm | None = None, position: np.ndarray | None = None) -> ImportedModel:
    H, dh = layers[0].H, layers[0].dh
    for p in layers:
        if (p.H, p.dh) != (H, dh):
            raise AttnsimError("module: every layer must have the same number of heads and head width")
    spec = TransformerSpec(N=N, d=H * block_width(dh), H=H, L=len(layers), mask=mask, residual=True)
    lw = []
    for i, p in enumerate(layers):
        WQ, WK, WV = head_selectors(dh, p.scale)
        head = HeadWeights(WQ, WK, WV)
        nxt = layers[i + 1] if i + 1 < len(layers) else None
        lw.append(LayerWeights(tuple(head for _ in range(H)),
                               TorchLayerMap(p, nxt, p.E, final if nxt is None else None)))
    weights = Weights(tuple(lw), TorchLayerMap(None, layers[0], layers[0].E))
    return ImportedModel(kind, spec, weights, layers[0].E, module, position)


def from_multihead_attention(mha: Any, N: int, mask: Mask | None = None) -> ImportedModel:
    """``torch.nn.MultiheadAttention`` used as self-attention on an unbatched (N × E) input."""
    mha = mha.double().eval()
    return _build("mha", [LayerParams(**_mha_params(mha), style="attention")], N, mask or Full(), mha)


def from_encoder_layer(layer: Any, N: int, mask: Mask | None = None) -> ImportedModel:
    """``torch.nn.TransformerEncoderLayer`` on an unbatched (N × E) input."""
    import torch

    if not isinstance(layer, torch.nn.TransformerEncoderLayer):
        raise AttnsimError(f"module: expected torch.nn.TransformerEncoderLayer, got {type(layer).__name__}")
    layer = layer.double().eval()
    p = LayerParams(**_mha_params(layer.self_attn), style="pre_norm" if layer.norm_first else "post_norm",
                    ln1=_layer_norm(layer.norm1), ln2=_layer_norm(layer.norm2),
                    ffn_in=_linear_from_rows(layer.linear1.weight, layer.linear1.bias),
                    ffn_out=_linear_from_rows(layer.linear2.weight, layer.linear2.bias),
                    act=_activation_name(layer.activation))
    return _build("encoder", [p], N, mask or Full(), layer)


def _gpt2_scale(attn: Any, dh: int) -> float:
    """The attention's score factor: ``scaling`` in recent transformers, else rebuilt from the config flags."""
    if hasattr(attn, "scaling"):
        return float(attn.scaling)
    s = dh ** -0.5 if attn.scale_attn_weights else 1.0
    return s / float(attn.layer_idx + 1) if attn.scale_attn_by_inverse_layer_idx else s


def from_gpt2(model: Any, N: int) -> ImportedModel:
    """A Hugging Face GPT-2 (``GPT2Model`` or ``GPT2LMHeadModel``): causal, pre-norm, tanh-GELU."""
    gpt = getattr(model, "transformer", model)
    cfg = getattr(gpt, "config", None)
    if cfg is None or getattr(cfg, "model_type", None) != "gpt2":
        raise AttnsimError(f"module: expected a Hugging Face GPT-2 model, got {type(model).__name__}")
    if N > cfg.n_positions:
        raise AttnsimError(f"{N} exceeds the model's n_positions = {cfg.n_positions}", param="N")
    if cfg.activation_function not in ("gelu_new", "gelu_pytorch_tanh", "relu"):
        raise AttnsimError(f"module: activation {cfg.activation_function!r} is not supported")
    gpt = gpt.double().eval()
    act = "relu" if cfg.activation_function == "relu" else "gelu_tanh"
    E, H = cfg.n_embd, cfg.n_head
    layers = []
    for block in gpt.h:
        a = block.attn
        W, b = _np(a.c_attn.weight), _np(a.c_attn.bias)  # Conv1D: x W + b already
        layers.append(LayerParams(
            H=H, scale=_gpt2_scale(a, E // H), q=Linear(W[:, :E], b[:E]),
            k=Linear(W[:, E:2 * E], b[E:2 * E]), v=Linear(W[:, 2 * E:], b[2 * E:]),
            out=Linear(_np(a.c_proj.weight), _np(a.c_proj.bias)), style="pre_norm",
            ln1=_layer_norm(block.ln_1), ln2=_layer_norm(block.ln_2),
            ffn_in=Linear(_np(block.mlp.c_fc.weight), _np(block.mlp.c_fc.bias)),
            ffn_out=Linear(_np(block.mlp.c_proj.weight), _np(block.mlp.c_proj.bias)), act=act))
    return _build("gpt2", layers, N, Causal(), gpt, final=_layer_norm(gpt.ln_f), position=_np(gpt.wpe.weight))


def import_module(module: Any, N: int, mask: Mask | None = None) -> ImportedModel:
    """Dispatch on the module's type (see the module docstring for what is supported)."""
    import torch

    if isinstance(module, torch.nn.MultiheadAttention):
        return from_multihead_attention(module, N, mask)
    if isinstance(module, torch.nn.TransformerEncoderLayer):
        return from_encoder_layer(module, N, mask)
    if mask is not None and not isinstance(mask, Causal):
        raise AttnsimError("GPT-2 is causal; no other mask can be given", param="mask")
    return from_gpt2(module, N)
