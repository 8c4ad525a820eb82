"""The auxiliary model's hand-derived gradients (tint.sgd_step's reference) against finite differences."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import numpy as np
import pytest

from attnsim.sim.tint import aux_model as am
from attnsim.sim.tint.arith import get_arith, max_abs_diff
from attnsim.sim.tint.cases import CASES

MP = "mp:120"


def _mp_loss(cfg, ar, w, ids, positions):
    logits = am.forward(cfg, ar, w, ids)[0]
    ctx = ar.ctx
    return sum(ctx.log(sum(ctx.exp(v) for v in logits[t])) - logits[t][ids[t + 1]] for t in np.flatnonzero(positions))


def _shift(w: am.Weights, direction: list[dict], t) -> am.Weights:
    return dict(w, layers=[{k: lw[k] + t * d[k] for k in lw} for lw, d in zip(w["layers"], direction)])


@pytest.mark.parametrize("name", ["tiny-relu", "tiny-gelu"])
def test_gradients_match_central_differences_in_mp(name: str) -> None:
    """<grad, v> against (L(w + h v) - L(w - h v)) / 2h for random directions v over every layer parameter."""
    c = CASES[name]
    ar = get_arith(MP)
    w = am.init_weights(c.aux, ar, c.seed)
    pos = am.train_positions(len(c.ids), c.n_train)
    g = am.gradients(c.aux, ar, w, c.tokens, pos, c.aux.layers)
    rng = np.random.default_rng(1)
    h = ar.ctx.mpf(2) ** -40
    for _ in range(2):
        v = [{k: ar.array(rng.standard_normal(lw[k].shape)) for k in lw} for lw in w["layers"]]
        fd = (
            _mp_loss(c.aux, ar, _shift(w, v, h), c.tokens, pos) - _mp_loss(c.aux, ar, _shift(w, v, -h), c.tokens, pos)
        ) / (2 * h)
        exact = sum((g["layers"][i][k] * v[i][k]).sum() for i in range(c.aux.layers) for k in am.LAYER_KEYS)
        assert abs(fd - exact) < 1e-15 * max(1, abs(exact))


def test_stop_gradient_freezes_queries_and_keys_and_differs_from_the_full_gradient() -> None:
    c = CASES["tiny-relu"]
    ar = get_arith("float64")
    w = am.init_weights(c.aux, ar, c.seed)
    pos = am.train_positions(len(c.ids), c.n_train)
    full = am.gradients(c.aux, ar, w, c.tokens, pos, 2)
    stop = am.gradients(c.aux, ar, w, c.tokens, pos, 2, am.Approx(stop_grad=True))
    assert not np.any(stop["layers"][1]["wq"]) and not np.any(stop["layers"][1]["bk"])
    assert max_abs_diff(stop["layers"][0]["wv"], full["layers"][0]["wv"]) > 1e-4  # biased (approximation E)
    np.testing.assert_allclose(stop["layers"][1]["wproj"], full["layers"][1]["wproj"])  # top MLP unaffected


def test_layer_norm_jacobian_is_symmetric() -> None:
    """Def 2.7: the LN backward J^T dy equals the directional derivative J dy (eps_ln included)."""
    ar = get_arith("float64")
    x = np.random.default_rng(0).standard_normal((1, 6))
    hat, sigma = am.normalize(ar, x)
    J = np.stack([am.ln_backward(ar, hat, sigma, x, np.ones(6), np.eye(6)[i][None], None)[0][0] for i in range(6)])
    np.testing.assert_allclose(J, J.T, atol=1e-12)


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="torch is not installed: autograd cross-check skipped"
)
def test_gradients_match_torch_autograd() -> None:  # pragma: no cover - runs only where torch is present
    import torch

    c = CASES["tiny-gelu"]
    cfg = replace(c.aux, layers=1)
    ar = get_arith("float64")
    w = am.init_weights(cfg, ar, c.seed)
    pos = am.train_positions(len(c.ids), c.n_train)
    g = am.gradients(cfg, ar, w, c.tokens, pos, 1)
    tw = {k: torch.tensor(v, requires_grad=True) for k, v in w["layers"][0].items()}
    ln = lambda x, gm, b: torch.nn.functional.layer_norm(x, (cfg.D,), gm, b, am.LN_EPS)  # noqa: E731
    h = torch.tensor(am.embed(cfg, w, c.tokens))
    a = ln(h, tw["ln1_g"], tw["ln1_b"])
    q, k, v = (a @ tw[m].T + tw[b] for m, b in (("wq", "bq"), ("wk", "bk"), ("wv", "bv")))
    n, da = len(c.ids), cfg.d_head
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
    heads = []
    for i in range(cfg.heads):
        s = slice(i * da, (i + 1) * da)
        scores = ((q[:, s] @ k[:, s].T) / da ** 0.5).masked_fill(~causal, float("-inf"))
        heads.append(torch.softmax(scores, -1) @ v[:, s])
    h1 = h + torch.cat(heads, 1) @ tw["wo"].T + tw["bo"]
    u = ln(h1, tw["ln2_g"], tw["ln2_b"]) @ tw["wfc"].T + tw["bfc"]
    out = h1 + torch.nn.functional.gelu(u, approximate="tanh") @ tw["wproj"].T + tw["bproj"]
    logits = ln(out, torch.tensor(w["lnf_g"]), torch.tensor(w["lnf_b"])) @ torch.tensor(w["wte"]).T
    targets = torch.tensor(c.tokens[1:])
    loss = torch.nn.functional.cross_entropy(logits[:-1], targets, reduction="none")[torch.tensor(pos[:-1])].sum()
    loss.backward()
    for key, t in tw.items():
        np.testing.assert_allclose(g["layers"][0][key], t.grad.numpy(), atol=1e-10, err_msg=key)
