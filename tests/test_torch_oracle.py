"""The torch oracle (SDPA): same outputs, refusals and ledger as the numpy oracle; the issue-10 agreement."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the torch extra is not installed (pip install -e '.[torch]')")

from attnsim.sim.errors import AttnsimError, OracleSpecError, PreconditionError  # noqa: E402
from attnsim.sim.model import HeadWeights, LayerWeights, TransformerSpec, Weights  # noqa: E402
from attnsim.sim.numerics import get_numerics  # noqa: E402
from attnsim.sim.oracle import Oracle, OracleCall, OracleHead, OracleLayer, OracleSpec  # noqa: E402
from attnsim.sim.torch.backend import TorchBackend  # noqa: E402
from attnsim.sim.torch.model_import import from_encoder_layer, relative_error  # noqa: E402
from attnsim.sim.torch.oracle import TorchOracle  # noqa: E402
from attnsim.sim.two_heads import worst_case  # noqa: E402

NM = get_numerics("float64", 0)


def _bits(y: np.ndarray, ref: np.ndarray) -> float:
    err = relative_error(y, ref)
    return float("inf") if err == 0 else float(-np.log2(err))


def _encoder(seed: int, N: int = 40, E: int = 16, H: int = 4):
    torch.manual_seed(seed)
    layer = torch.nn.TransformerEncoderLayer(E, H, dim_feedforward=32, activation="gelu")
    im = from_encoder_layer(layer, N)
    x = np.random.default_rng(seed).standard_normal((N, E))
    im.verify(x)  # the import must reproduce torch before any simulation runs
    return im, x


@pytest.mark.parametrize("seed, M", [(0, 8), (1, 16), (2, 7)])
def test_encoder_layer_simulation_on_torch_oracle_40_bits(seed, M):
    """Thm 3.4 (H heads, one head per call, fused) of an imported encoder layer on SDPA ≥ 40 bits."""
    im, x = _encoder(seed)
    oracle = TorchOracle(OracleSpec(max_len=M + 1, dim=2 * im.spec.m + 2), NM)
    Y = worst_case.simulate(im.spec, im.weights, im.model_input(x), oracle, b=M, scheme="fused")
    assert _bits(Y, im.torch_forward(x)) >= 40
    n = -(-im.spec.N // M)
    assert oracle.ledger.total("oracle") == n * n * im.spec.H and oracle.ledger.rounds() == 1


@pytest.mark.parametrize("scheme", ["paper", "fused"])
def test_same_outputs_and_ledger_as_numpy_oracle(scheme):
    im, x = _encoder(3, N=30)
    outs, ledgers = [], []
    for cls in (Oracle, TorchOracle):
        oracle = cls(OracleSpec(max_len=9, dim=2 * im.spec.m + 2), NM)
        outs.append(worst_case.simulate(im.spec, im.weights, im.model_input(x), oracle, b=8, scheme=scheme))
        ledgers.append(oracle.ledger.entries)
    assert ledgers[0] == ledgers[1]
    assert _bits(outs[1], outs[0]) >= 45


def test_float32_kernel_agrees_to_float32_precision():
    im, x = _encoder(4)
    oracle = TorchOracle(OracleSpec(max_len=9, dim=2 * im.spec.m + 2), NM, dtype="float32")
    Y = worst_case.simulate(im.spec, im.weights, im.model_input(x), oracle, b=8, scheme="fused")
    assert 10 <= _bits(Y, im.torch_forward(x)) < 40


def _call(n: int, w: int, k: int = 2, heads: int = 1, tag: str = "t") -> OracleCall:
    rng = np.random.default_rng(n * 7 + w)
    head = OracleHead(rng.standard_normal((w // heads, k)), rng.standard_normal((w // heads, k)),
                      rng.standard_normal((w // heads, k)))
    return OracleCall(tag, rng.standard_normal((n, w)), (OracleLayer(tuple(head for _ in range(heads))),))


def _layers(head: OracleHead) -> tuple[OracleLayer, ...]:
    return (OracleLayer((head,)),)


BAD_CALLS = {
    "too long": _call(9, 4),
    "too wide": _call(4, 12),
    "wrong head count": _call(4, 4, heads=2),
    "head too wide": _call(4, 4, k=11),
    "too many layers": OracleCall("t", np.ones((3, 4)), _call(3, 4).layers * 2),
    "weights rows": OracleCall("t", np.ones((3, 4)), _layers(OracleHead(np.ones((3, 2)), np.ones((3, 2)),
                                                                         np.ones((3, 2))))),
    "qk widths": OracleCall("t", np.ones((3, 4)), _layers(OracleHead(np.ones((4, 2)), np.ones((4, 3)),
                                                                      np.ones((4, 2))))),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_refuses_exactly_what_the_numpy_oracle_refuses(name):
    spec = OracleSpec(max_len=8, dim=10)
    messages = []
    for cls in (Oracle, TorchOracle):
        oracle = cls(spec, NM)
        with pytest.raises(OracleSpecError) as exc:
            oracle.run([_call(4, 4), BAD_CALLS[name]])
        messages.append(str(exc.value))
        assert oracle.ledger.total("oracle") <= 1
    assert messages[0] == messages[1]


def test_causal_oracle_and_batching_match_numpy():
    spec = OracleSpec(max_len=8, dim=10, causal=True)
    calls = [_call(n, 4, tag=f"c{n}") for n in (3, 5, 5, 8)]
    shared = calls[1].layers
    calls.append(OracleCall("shared", np.random.default_rng(9).standard_normal((5, 4)), shared))
    ref = Oracle(spec, NM).run(calls)
    got = TorchOracle(spec, NM, max_batch=2).run(calls)
    for a, b in zip(got, ref):
        assert _bits(a, b) >= 48


def test_bad_configuration_is_refused():
    with pytest.raises(AttnsimError, match="^numerics: "):
        TorchOracle(OracleSpec(max_len=4), get_numerics("exact", 0))
    with pytest.raises(AttnsimError, match="^dtype: "):
        TorchOracle(OracleSpec(max_len=4), NM, dtype="float16")
    with pytest.raises(AttnsimError, match="^max-batch: "):
        TorchOracle(OracleSpec(max_len=4), NM, max_batch=0)
    if not torch.cuda.is_available():
        with pytest.raises(AttnsimError, match="^device: "):
            TorchOracle(OracleSpec(max_len=4), NM, device="cuda")


def test_preconditions_still_apply():
    spec = TransformerSpec(N=8, d=2)
    w = Weights((LayerWeights((HeadWeights(np.eye(2), np.eye(2), np.eye(2)),)),))
    with pytest.raises(PreconditionError, match="dim"):
        worst_case.simulate(spec, w, np.ones((8, 2)), TorchOracle(OracleSpec(max_len=5, dim=3), NM), b=4)


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("causal", [False, True])
def test_engine_backend_matches_numpy_attention(shared, causal):
    rng = np.random.default_rng(11)
    q = rng.standard_normal((3, 6, 4))
    k = rng.standard_normal((6, 4) if shared else (3, 6, 4))
    v = rng.standard_normal((6, 5) if shared else (3, 6, 5))
    got = TorchBackend().attention(q, k, v, causal)
    kk, vv = np.broadcast_to(k, (3, 6, 4)), np.broadcast_to(v, (3, 6, 5))
    allowed = np.tril(np.ones((6, 6), bool)) if causal else None
    ref = np.stack([NM.attention(q[b], kk[b], vv[b], allowed) for b in range(3)])
    assert np.max(np.abs(got - ref)) < 1e-13


def test_rotary_heads_match_numpy_and_are_refused_without_rope():
    from attnsim.sim.rope import RoPE

    rng = np.random.default_rng(12)
    head = OracleHead(*(rng.standard_normal((4, 4)) for _ in range(3)), rope_dims=2)
    calls = [OracleCall(f"r{i}", rng.standard_normal((5, 4)), (OracleLayer((head,)),)) for i in range(3)]
    spec = OracleSpec(max_len=8, dim=10, rope=RoPE())
    for a, b in zip(TorchOracle(spec, NM).run(calls), Oracle(spec, NM).run(calls)):
        assert _bits(a, b) >= 48
    messages = []
    for cls in (Oracle, TorchOracle):
        with pytest.raises(OracleSpecError, match="rotary") as exc:
            cls(OracleSpec(max_len=8, dim=10), NM).run(calls)
        messages.append(str(exc.value))
    assert messages[0] == messages[1]


def test_engine_with_torch_backend_matches_the_torch_oracle():
    """When the batched engine is installed, its "torch" backend gives the same simulation."""
    engine = pytest.importorskip("attnsim.sim.engine.simulate", reason="the batched engine is not here")
    from attnsim.sim.engine.schedulers import Serial
    from attnsim.sim.torch.backend import register

    assert register()
    im, x = _encoder(6, N=32)
    ospec = OracleSpec(max_len=9, dim=2 * im.spec.m + 2)
    oracle = Oracle(ospec, NM)
    Y = engine.simulate(im.spec, im.weights, im.model_input(x), oracle, b=8, scheme="fused",
                        scheduler=Serial("torch"))
    ref_oracle = TorchOracle(ospec, NM)
    ref = worst_case.simulate(im.spec, im.weights, im.model_input(x), ref_oracle, b=8, scheme="fused")
    assert _bits(Y, ref) >= 45 and _bits(Y, im.torch_forward(x)) >= 40
    assert oracle.ledger.total("oracle") == ref_oracle.ledger.total("oracle")


def _selectors(m: int, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Projected-layout heads: each weight column reads one input column (W^Q scaled)."""
    WQ, WK, WV = np.zeros((m, m)), np.zeros((m, m)), np.zeros((m, m))
    k = m // 4
    WQ[:k, :k] = scale * np.eye(k)
    WK[k:2 * k, :k] = np.eye(k)
    WV[2 * k:3 * k, 3 * k:] = np.eye(k)
    return WQ, WK, WV


def _unmatched(m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W^Q fills columns W^K leaves at zero (they add nothing to the scores), W^V a third of its columns."""
    WQ, WK, WV = rng.standard_normal((m, m)), rng.standard_normal((m, m)), np.zeros((m, m))
    WK[:, m // 2:] = 0
    WV[:, :m // 3] = rng.standard_normal((m, m // 3))
    return WQ, WK, WV


HEAD_PLAN_CASES = {  # name -> head weights; each runs one of the plan's paths
    "dense (one GEMM)": lambda m, rng: tuple(rng.standard_normal((m, m)) for _ in range(3)),
    "selectors (a gather and a scale)": lambda m, rng: _selectors(m, 0.125),
    "unmatched query/key columns (pruned)": _unmatched,
}


@pytest.mark.parametrize("name", sorted(HEAD_PLAN_CASES))
@pytest.mark.parametrize("causal", [False, True])
def test_head_plans_match_the_numpy_oracle(name, causal):
    """What the torch oracle leaves out of a head (zero score terms, zero value columns, unread input
    columns, products with selectors) changes nothing: 2-head calls agree with the numpy oracle ≥ 45 bits."""
    rng = np.random.default_rng(7)
    m, n, heads = 12, 9, 2
    layer = OracleLayer(tuple(OracleHead(*HEAD_PLAN_CASES[name](m, rng)) for _ in range(heads)))
    calls = [OracleCall(f"c{i}", rng.standard_normal((n, heads * m)) * 0.5, (layer,)) for i in range(5)]
    spec = OracleSpec(max_len=n, dim=heads * m, heads=heads, causal=causal)
    ref = Oracle(spec, NM).run(calls)
    got = TorchOracle(spec, NM).run(calls)
    for r, g in zip(ref, got):
        assert g.shape == r.shape
        assert _bits(g, r) >= 45
