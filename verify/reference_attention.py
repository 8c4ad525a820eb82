"""An independent float64 softmax attention: the truth Thm 4.1's sampling estimator is held against.

Thm 4.1 / C.1 (§4) promises that the sampled estimate of every row lies within eps of the exact
head softmax(q kᵀ) v. The estimator (``attnsim.sim.two_heads.average``) has its own block softmax;
the truth here shares no code with it: rows in chunks, keys grouped by distinct row with
:func:`numpy.unique` (the halves inputs have two distinct keys, so N = 32768 stays cheap), the
maximum subtracted per row before ``exp``. Only numpy is common to both sides.
"""

from __future__ import annotations

import numpy as np

REFERENCE = "attnsim.verify.reference_attention.softmax_attention"
"""The name a record gives this reference (``Measurement.reference``)."""

_CHUNK = 512


def softmax_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(softmax(q kᵀ) v, log Σ_j exp(<q_i, k_j>)) in float64; q, k are N × d, v is N × dv."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    keys, group = np.unique(k, axis=0, return_inverse=True)
    group = group.reshape(-1)
    count = np.zeros(len(keys))
    np.add.at(count, group, 1.0)
    vsum = np.zeros((len(keys), v.shape[1]))
    np.add.at(vsum, group, v)
    out = np.empty((q.shape[0], v.shape[1]))
    logden = np.empty(q.shape[0])
    for s in range(0, q.shape[0], _CHUNK):
        scores = np.einsum("id,gd->ig", q[s:s + _CHUNK], keys)
        top = scores.max(axis=1)
        w = np.exp(scores - top[:, None])
        den = w @ count
        out[s:s + _CHUNK] = (w @ vsum) / den[:, None]
        logden[s:s + _CHUNK] = np.log(den) + top
    return out, logden


def relative_row_errors(y: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Relative L2 error of each row of ``y`` against ``truth`` (absolute where the true row is 0)."""
    norm = np.sqrt((truth * truth).sum(axis=1))
    diff = np.sqrt(((y - truth) ** 2).sum(axis=1))
    return np.where(norm > 0, diff / np.where(norm > 0, norm, 1.0), diff)
