"""torch SDPA as a backend of the batched float64 engine (``attnsim.sim.engine``).

The engine hands a backend the attention of a batch of same-shaped single-head calls: queries
(B, n, k), keys/values per call (B, n, ·) or shared by the batch (n, ·). :class:`TorchBackend`
runs them through ``torch.nn.functional.scaled_dot_product_attention`` (``scale=1``: the paper's
attention has no 1/sqrt(d) factor). With shared keys and no causal mask, the B·n query rows form one
SDPA call against the n keys — the shape of direct attention. :func:`register` adds it to the
engine's backends as ``"torch"`` when the engine is installed.
"""

from __future__ import annotations

import numpy as np

from attnsim.sim.errors import AttnsimError


class TorchBackend:
    """The batched engine's attention computed by torch's scaled dot-product attention."""
    name = "torch"

    def __init__(self, dtype: str = "float64", device: str = "cpu") -> None:
        """A backend in torch ``dtype`` on ``device``; an error says how to install torch."""
        try:
            import torch
        except ImportError:  # pragma: no cover - exercised only without the extra
            raise AttnsimError("the torch backend needs PyTorch: pip install -e '.[torch]'") from None
        if dtype not in ("float64", "float32"):
            raise AttnsimError(f"must be float64 or float32, got {dtype!r}", param="dtype")
        self._torch, self._dtype, self._device = torch, getattr(torch, dtype), device

    def _t(self, a: np.ndarray):
        return self._torch.from_numpy(np.ascontiguousarray(a)).to(self._device, self._dtype)

    def attention(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False,
                  out: np.ndarray | None = None) -> np.ndarray:
        """Softmax attention of a batch through ``scaled_dot_product_attention`` (scale 1), copied
        into ``out`` when it is given."""
        res = self._attention(q, k, v, causal)
        if out is None:
            return res
        np.copyto(out, res)
        return out

    def _attention(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
        F = self._torch.nn.functional
        B, n, kq = q.shape
        # 4-d (batch, 1 head, n, ·) tensors: torch's fused CPU kernel (3-d ones take its slower reference path)
        if k.ndim == 2 and v.ndim == 2 and not causal:
            out = F.scaled_dot_product_attention(self._t(q.reshape(1, 1, B * n, kq)), self._t(k)[None, None],
                                                 self._t(v)[None, None], scale=1.0)
            return out.reshape(B, n, -1).to("cpu", self._torch.float64).numpy()
        kt, vt = self._t(k), self._t(v)
        if kt.dim() == 2:
            kt = kt.expand(B, *kt.shape).contiguous()
        if vt.dim() == 2:
            vt = vt.expand(B, *vt.shape).contiguous()
        out = F.scaled_dot_product_attention(self._t(q)[:, None], kt[:, None], vt[:, None], is_causal=causal,
                                             scale=1.0)
        return out[:, 0].to("cpu", self._torch.float64).numpy()


def register() -> bool:
    """Make ``"torch"`` an engine backend (``Serial("torch")``); False when the engine is absent."""
    try:
        from attnsim.sim.engine import backend
    except ImportError:
        return False
    backend.BACKENDS.setdefault("torch", TorchBackend)
    return True
