"""Backends that execute the attention of a batch of same-shaped single-head calls.

A backend sees only tensors: queries ``q`` of shape (B, n, k) and keys/values either per call,
(B, n, k) / (B, n, v), or *shared* by every call of the batch, (n, k) / (n, v). It returns
softmax(q kᵀ) v per call, shape (B, n, v), with a stable softmax (the row maximum of each call is
subtracted before exp; the factor cancels, as ``Numerics.weights`` allows).

:class:`NumpyBackend` is the float64 engine: with shared keys the B·n query rows of the batch form
one GEMM against the keys and one GEMM against the values — the same arithmetic as direct attention,
in O(B·n·n) memory per batch. The torch wing's :class:`~attnsim.sim.torch.backend.TorchBackend` implements the same
protocol.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from attnsim.sim.engine.scratch import scratch


class BatchBackend(Protocol):
    """What the engine needs of a backend: a name and batched attention."""

    name: str

    def attention(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool,
                  out: np.ndarray | None = None) -> np.ndarray:
        """softmax(q kᵀ) v for each of the B calls (k, v shared when 2-D); causal masks j > i. Written
        into ``out`` (B, n, v) when it is given, and returned."""
        ...


def _softmax_rows_inplace(s: np.ndarray, allowed: np.ndarray | None) -> np.ndarray:
    """exp(s − rowmax) in place over the last axis; 0 where not allowed; returns the row sums."""
    if allowed is not None:
        np.copyto(s, -np.inf, where=~allowed)
    m = s.max(axis=-1, keepdims=True)
    if allowed is not None:
        m[~np.isfinite(m)] = 0.0
    s -= m
    np.exp(s, out=s)
    return s.sum(axis=-1, keepdims=True)


class NumpyBackend:
    """float64 numpy execution (see module docstring)."""

    name = "numpy"

    def attention(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False,
                  out: np.ndarray | None = None) -> np.ndarray:
        """Softmax attention of a batch (B, n, ·) of queries against shared or per-call keys (into ``out``)."""
        B, n, _ = q.shape
        out = np.empty((B, n, v.shape[-1])) if out is None else out
        allowed = np.tril(np.ones((n, k.shape[-2]), dtype=bool)) if causal else None
        if k.ndim == 2 and v.ndim == 2:
            s = np.matmul(q.reshape(B * n, -1), k.T, out=scratch("scores", (B * n, k.shape[0])))  # one GEMM
            den = _softmax_rows_inplace(s.reshape(B, n, -1), allowed).reshape(B * n, 1)
            num = np.matmul(s, v, out=scratch("values", (B * n, v.shape[1])))  # and one for the values
            _safe_div(num, den, out.reshape(B * n, -1))
            return out
        k3 = np.broadcast_to(k, (B,) + k.shape[-2:])
        v3 = np.broadcast_to(v, (B,) + v.shape[-2:])
        s = np.matmul(q, np.ascontiguousarray(np.swapaxes(k3, -1, -2)))
        den = _softmax_rows_inplace(s, allowed)
        _safe_div(np.matmul(s, v3), den, out)
        return out


def _safe_div(num: np.ndarray, den: np.ndarray, out: np.ndarray) -> None:
    """out = num / den with 0 where den == 0 (a fully masked row), as ``Numerics.safe_div``."""
    zero = den == 0
    if not zero.any():
        np.divide(num, den, out=out)
        return
    np.divide(num, np.where(zero, 1.0, den), out=out)
    out[np.broadcast_to(zero, out.shape)] = 0.0


BACKENDS: dict[str, type] = {"numpy": NumpyBackend}


def get_backend(name: str = "numpy") -> BatchBackend:
    """The registered backend called ``name``; an error names the known ones."""
    from attnsim.sim.errors import AttnsimError

    if name not in BACKENDS:
        raise AttnsimError(f"must be one of {sorted(BACKENDS)}, got {name!r}", param="backend")
    return BACKENDS[name]()
