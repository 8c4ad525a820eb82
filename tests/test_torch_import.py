"""Imported PyTorch models: the attnsim reference reproduces torch's forward, one test per kind."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the torch extra is not installed (pip install -e '.[torch]')")

from attnsim.sim.errors import AttnsimError  # noqa: E402
from attnsim.sim.masks import Causal, SlidingWindow  # noqa: E402
from attnsim.sim.model import HeadWeights, LayerWeights, Weights  # noqa: E402
from attnsim.sim.numerics import get_numerics  # noqa: E402
from attnsim.sim.torch.model_import import (  # noqa: E402
    IMPORT_RTOL,
    ImportedModel,
    ImportMismatchError,
    from_encoder_layer,
    from_multihead_attention,
    import_module,
    relative_error,
)

N, E, H = 24, 16, 4


def _x(seed: int = 0, n: int = N, e: int = E) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, e))


@pytest.mark.parametrize("mask", [None, Causal(), SlidingWindow(5)], ids=["full", "causal", "window"])
@pytest.mark.parametrize("bias", [True, False])
def test_multihead_attention_reproduced(mask, bias):
    torch.manual_seed(1)
    im = from_multihead_attention(torch.nn.MultiheadAttention(E, H, bias=bias), N, mask)
    assert im.verify(_x()) <= IMPORT_RTOL


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_reproduced(norm_first, activation):
    torch.manual_seed(2)
    layer = torch.nn.TransformerEncoderLayer(E, H, dim_feedforward=40, norm_first=norm_first,
                                             activation=activation)
    im = from_encoder_layer(layer, N)
    assert im.spec.residual and im.spec.m == 5 * (E // H)
    assert im.verify(_x(3)) <= IMPORT_RTOL
    assert from_encoder_layer(layer, N, Causal()).verify(_x(4)) <= IMPORT_RTOL


def test_gpt2_reproduced():
    transformers = pytest.importorskip("transformers", reason="the torch extra's transformers is not installed")
    torch.manual_seed(3)
    cfg = transformers.GPT2Config(n_embd=E, n_head=H, n_layer=3, n_positions=32, vocab_size=8,
                                  bos_token_id=0, eos_token_id=0)
    im = import_module(transformers.GPT2Model(cfg), N)
    assert im.kind == "gpt2" and im.spec.L == 3 and isinstance(im.spec.mask, Causal)
    assert im.verify(_x(5)) <= IMPORT_RTOL


def test_head_weights_carry_the_scale():
    torch.manual_seed(4)
    im = from_multihead_attention(torch.nn.MultiheadAttention(E, H), N)
    dh = E // H
    WQ = im.weights.layers[0].heads[0].WQ
    assert np.allclose(WQ[:dh, :dh], np.eye(dh) / np.sqrt(dh)) and np.count_nonzero(WQ) == dh


def test_broken_mapping_is_caught():
    """Dropping the 1/sqrt(d_head) scale from W^Q (a wrong import) must fail verification."""
    torch.manual_seed(5)
    im = from_multihead_attention(torch.nn.MultiheadAttention(E, H), N)
    layer = im.weights.layers[0]
    heads = tuple(HeadWeights(h.WQ * np.sqrt(E // H), h.WK, h.WV) for h in layer.heads)
    broken = ImportedModel(im.kind, im.spec, Weights((LayerWeights(heads, layer.psi),), im.weights.phi),
                           im.E, im.module)
    with pytest.raises(ImportMismatchError, match="tolerance"):
        broken.verify(_x())


def test_unsupported_modules_and_bad_input():
    with pytest.raises(AttnsimError, match="add_bias_kv"):
        from_multihead_attention(torch.nn.MultiheadAttention(E, H, add_bias_kv=True), N)
    with pytest.raises(AttnsimError, match="kdim"):
        from_multihead_attention(torch.nn.MultiheadAttention(E, H, kdim=8, vdim=8), N)
    with pytest.raises(AttnsimError, match="module"):
        import_module(torch.nn.Linear(E, E), N)
    im = from_multihead_attention(torch.nn.MultiheadAttention(E, H), N)
    with pytest.raises(AttnsimError, match="input"):
        im.model_input(_x(n=N + 1))
    bad = _x()
    bad[0, 0] = np.nan
    with pytest.raises(AttnsimError, match="non-finite"):
        im.model_input(bad)
    with pytest.raises(AttnsimError, match="float64 only"):
        im.weights.phi(get_numerics("mp:64", 0), get_numerics("mp:64", 0).zeros((N, im.spec.d)))


def test_relative_error_rows():
    ref = np.array([[1.0, 0.0], [0.0, 0.0]])
    assert relative_error(ref, ref) == 0.0
    assert relative_error(ref + [[0.5, 0], [0, 0.25]], ref) == 0.5
    assert relative_error(ref[:1], ref) == float("inf")
