"""Why Algorithm 1 errs on Match2 where the paper reports 0 (App. G.1): the trained surrogate read with attentions
that isolate one cause each.

All on the figure's beta, the test set and the surrogate's own weights; only the attention changes:

* **softmax**: the surrogate as trained (its own errors bound what any replacement can reach);
* **uniform**: every key with the same weight (the beta -> 0 limit of the softmax): how far the trained
  attention is from no attention at all;
* **partners only**: the uniform average over the keys of the query's partners (x_i + x_j = 0 mod M), 0 when it
  has none: what an ideal nearest-neighbour retrieval of the task's answer would give (exact-match attention);
* **Algorithm 1, ell -> infinity**: weights proportional to P(||q_i - k_j||)^z, the expected collision counts
  per table (the limit Algorithm 1's c_ij / ell tends to), with the cross-polytope P of
  :func:`~.definition.collision_probability` or the hyperplane family's 1 - theta/pi (theta the angle between
  the unit vectors): the error no number of tables removes;
* **Algorithm 1** at (ell, z) cells of the grid, per token, on the tokens the softmax gets right, and per
  sequence (a sequence is wrong when any of its tokens is).

The geometry line gives the mean q_i . k_j over partner pairs and over the other pairs, and the softmax weight
the surrogate puts on its partners: a surrogate that solves Match2 by retrieval puts its weight there.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch

from attnsim.verify.experiments.definition import collision_probability
from attnsim.verify.experiments.evaluate import _AnnaRun
from attnsim.verify.experiments.surrogate import Attend, Surrogate, softmax_attend

CELLS = ((8, 1), (16, 1), (16, 4))
"""The Algorithm 1 cells diagnosed."""


def _partners(tokens: np.ndarray, modulus: int) -> torch.Tensor:
    x = torch.as_tensor(tokens + 1)
    return ((x[:, :, None] + x[:, None, :]) % modulus == 0).double()


def _weighted(weights: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> Attend:
    """Attention by row-normalised non-negative ``weights(q, k)``; a row of zeros outputs 0."""
    def attend(layer: int, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        w = weights(q.double(), k.double())
        total = w.sum(dim=-1, keepdim=True)
        return ((w / torch.where(total > 0, total, 1.0)) @ v.double()).to(v.dtype)
    return attend


def _errors(model: Surrogate, tokens: np.ndarray, targets: np.ndarray, attend: Attend) -> np.ndarray:
    with torch.no_grad():
        return model(torch.as_tensor(tokens), attend).argmax(dim=-1).numpy() != targets


def hyperplane_probability(u: np.ndarray) -> np.ndarray:
    """P(u) = 1 - theta / pi: the chance that a random hyperplane leaves two unit vectors at distance u (angle
    theta, cos theta = 1 - u^2 / 2) on the same side (Charikar 2002)."""
    return 1 - np.arccos(np.clip(1 - np.asarray(u) ** 2 / 2, -1, 1)) / np.pi


def diagnose(model: Surrogate, tokens: np.ndarray, targets: np.ndarray, modulus: int, runs: int, seed: int,
             cells: Sequence[tuple[int, int]] = CELLS,
             families: Sequence[str] = ("cross-polytope",)) -> dict[str, Any]:
    """Per attention: the token error, the error on the tokens the softmax gets right, the sequence error; the
    Algorithm 1 rows once per hash family of ``families``."""
    partners = _partners(tokens, modulus)
    probs = {"cross-polytope": collision_probability(model.shape.width), "hyperplane": hyperplane_probability}
    soft = _errors(model, tokens, targets, softmax_attend(model.shape.beta))
    right = ~soft

    def summary(wrong: np.ndarray) -> dict[str, float]:
        return {"token": float(wrong.mean()), "where_softmax_right": float(wrong[right].mean()),
                "sequence": float(wrong.any(axis=1).mean())}

    rows = {"softmax": summary(soft),
            "uniform": summary(_errors(model, tokens, targets, _weighted(lambda q, k: torch.ones(
                q.shape[0], q.shape[1], k.shape[1], dtype=torch.float64)))),
            "partners only": summary(_errors(model, tokens, targets, _weighted(lambda q, k: partners)))}
    for family in families:
        prob, tag = probs[family], "" if len(families) == 1 else f" [{family}]"
        for z in sorted({z for _, z in cells}):
            limit = _weighted(lambda q, k, z=z, prob=prob: torch.as_tensor(prob(torch.cdist(q, k).numpy())) ** z)
            rows[f"Algorithm 1{tag}, ℓ → ∞, z = {z}"] = summary(_errors(model, tokens, targets, limit))
        for ell, z in cells:
            wrong = []
            for run in range(runs):
                state = _AnnaRun(model, seed, run, [(ell,)], z, family)
                state.setting = [(ell, z)]
                wrong.append(_errors(model, tokens, targets, state.attend))
            w = np.stack(wrong)
            rows[f"Algorithm 1{tag}, ℓ = {ell}, z = {z}"] = {
                "token": float(w.mean()), "where_softmax_right": float(w[:, right].mean()),
                "sequence": float(w.any(axis=2).mean())}
    with torch.no_grad():
        q, k, _ = model.blocks[0].qkv(model.embed(torch.as_tensor(tokens)))
        dots = (q @ k.transpose(-1, -2)).double()
        soft_w = torch.softmax(model.shape.beta * dots, dim=-1)
    has = partners.sum(dim=-1) > 0
    geometry = {"dot_partners": float(dots[partners > 0].mean()), "dot_others": float(dots[partners == 0].mean()),
                "softmax_on_partners": float((soft_w * partners).sum(dim=-1)[has].mean()),
                "uniform_on_partners": float((partners.sum(dim=-1) / tokens.shape[1])[has].mean())}
    return {"rows": rows, "geometry": geometry, "runs": runs, "sequences": len(tokens)}


def diagnosis_lines(d: dict[str, Any], beta: float) -> list[str]:
    """The diagnosis as printed lines."""
    g = d["geometry"]
    lines = [f"Why Algorithm 1 errs (β = {beta:g} surrogate, {d['sequences']} test sequences, {d['runs']} runs): "
             "error per token / on tokens the softmax gets right / per sequence",
             *(f"  {name:48s} {r['token']:.3f} / {r['where_softmax_right']:.3f} / {r['sequence']:.3f}"
               for name, r in d["rows"].items()),
             f"  geometry: mean q·k {g['dot_partners']:+.3f} over partner pairs, {g['dot_others']:+.3f} over the "
             f"others; softmax weight on the partners {g['softmax_on_partners']:.3f} (uniform would give "
             f"{g['uniform_on_partners']:.3f})"]
    return lines


def match2_diagnosis(model: Surrogate, config: Any) -> list[str]:
    """The diagnosis of the trained figure-beta surrogate on the Match2 test set, as printed lines."""
    from attnsim.verify.experiments.tasks import Match2Data

    test = Match2Data.draw(np.random.default_rng([config.seed, 2]), config.tests, config.N, config.modulus)
    return diagnosis_lines(diagnose(model, test.x, test.y, config.modulus, config.runs, config.seed,
                                    families=config.families), config.figure_beta)
