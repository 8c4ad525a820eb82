"""One set of oracle refusal checks: every executor refuses each kind of bad call with the same error.

The executors are the numpy ``Oracle``, the engine's batch admission, the batched runner (float64 on
the engine, a fixed-width format stacked in its numerics) and, when PyTorch is installed, the torch
oracle. A refused call is never written to the ledger.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np
import pytest

from attnsim.sim.engine.batch import CallBatch, Gathered, admit
from attnsim.sim.engine.runner import run_batched
from attnsim.sim.errors import OracleSpecError
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleCall, OracleHead, OracleLayer, OracleSpec, head_flops, refusal
from attnsim.sim.rope import RoPE
from attnsim.sim.two_heads.jobs import HeadJob

SPEC = OracleSpec(max_len=4, heads=1, layers=1, dim=4)


@dataclass(frozen=True)
class Bad:
    """A single-head call: input n × width, weight shapes, how many times the decode repeats the head's
    output, rotary dimensions, and the oracle spec it is checked against."""

    n: int = 3
    width: int = 2
    wq: tuple[int, int] = (2, 2)
    wk: tuple[int, int] = (2, 2)
    wv: tuple[int, int] = (2, 2)
    repeat: int = 1
    rope_dims: int = 0
    spec: OracleSpec = SPEC


BAD = {
    "too long": (Bad(n=5), "sequence length 5 exceeds max_len 4"),
    "input too wide": (Bad(width=6, wq=(6, 2), wk=(6, 2), wv=(6, 2)), "layer 0 input width 6 exceeds dim 4"),
    "heads": (Bad(spec=replace(SPEC, heads=2)), "layer 0 has 1 heads, the oracle has 2"),
    "weight rows": (Bad(wk=(3, 2)), "layer 0 head 0: weights must have 2 rows (its column block)"),
    "query and key widths": (Bad(wk=(2, 3)), "layer 0 head 0: W^Q and W^K widths differ"),
    "head too wide": (Bad(wq=(2, 5), wk=(2, 5)), "layer 0 head 0: head width exceeds dim 4"),
    "output too wide": (Bad(repeat=3), "output width 6 exceeds dim 4"),
    "rotary without rope": (Bad(rope_dims=2), "layer 0 head 0 asks for rotary embeddings the oracle lacks"),
}


def _arrays(b: Bad, nm: Any) -> tuple[Any, Any, Any, Any]:
    rng = np.random.default_rng(0)
    return tuple(nm.array(np.round(rng.standard_normal(shape) * 4) / 4)  # type: ignore[return-value]
                 for shape in ((b.n, b.width), b.wq, b.wk, b.wv))


def _decode(b: Bad) -> Callable[..., Any] | None:
    if b.repeat == 1:
        return None
    return lambda nm, H: np.concatenate([H] * b.repeat, axis=-1)


def _call(b: Bad, nm: Any) -> OracleCall:
    Z, WQ, WK, WV = _arrays(b, nm)
    return OracleCall("probe", Z, (OracleLayer((OracleHead(WQ, WK, WV, b.rope_dims),), _decode(b)),))


def _oracle(spec: OracleSpec, numerics: str = "float64") -> Oracle:
    return Oracle(spec, get_numerics(numerics))


def _torch_oracle(spec: OracleSpec) -> Oracle:
    pytest.importorskip("torch")
    from attnsim.sim.torch.oracle import TorchOracle

    return TorchOracle(spec, get_numerics("float64"))


def _run_call(oracle: Oracle, b: Bad) -> None:
    oracle.run([_call(b, oracle.nm)])


def _run_jobs(oracle: Oracle, b: Bad) -> None:
    Z, WQ, WK, WV = _arrays(b, oracle.nm)
    run_batched(oracle, [HeadJob("probe", Z, WQ, WK, WV, _decode(b), b.rope_dims)] * 3)


def _admit_batch(oracle: Oracle, b: Bad) -> None:
    if b.rope_dims:
        pytest.skip("an engine batch has no rotary embeddings to ask for")
    Z, WQ, WK, WV = _arrays(b, oracle.nm)
    inputs = Gathered(("Z",), (b.width,), (np.tile(np.arange(b.n), (3, 1)),))
    admit(oracle, CallBatch("probe", inputs, WQ, WK, WV, out_width=b.repeat * b.wv[1]))


#: each executor: how to make its oracle, how to hand it the call (or three copies of it as jobs)
PATHS: dict[str, tuple[Callable[[OracleSpec], Oracle], Callable[[Oracle, Bad], None]]] = {
    "oracle": (_oracle, _run_call),
    "torch oracle": (_torch_oracle, _run_call),
    "engine batch": (_oracle, _admit_batch),
    "runner float64": (_oracle, _run_jobs),
    "runner fixed": (lambda spec: _oracle(spec, "fixed:q12.12"), _run_jobs),
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("kind", BAD)
def test_every_path_refuses_every_bad_call_alike(kind: str, path: str) -> None:
    bad, why = BAD[kind]
    make, run = PATHS[path]
    oracle = make(bad.spec)
    with pytest.raises(OracleSpecError) as e:
        run(oracle, bad)
    assert str(e.value) == f"oracle refused call 'probe': {why} ({bad.spec.describe()})"
    assert oracle.ledger.total() == 0


@pytest.mark.parametrize("path", PATHS)
def test_a_good_call_passes_every_path_and_is_counted(path: str) -> None:
    make, run = PATHS[path]
    oracle = make(SPEC)
    run(oracle, Bad())
    calls = 1 if run is _run_call else 3
    assert oracle.ledger.total("oracle") == calls
    assert oracle.ledger.flops("oracle") == calls * head_flops(3, 2, 2, 2)


@pytest.mark.parametrize("path", ["oracle", "torch oracle"])
def test_calls_refused_only_by_a_full_oracle(path: str) -> None:
    """Layer count, head split and rotary dimensions exist only for calls, not for single-head jobs."""
    one, W = OracleHead(*[np.ones((2, 2))] * 3), np.ones((1, 1))
    two_layers = OracleCall("probe", np.ones((3, 2)), (OracleLayer((one,)),) * 2)
    odd_split = OracleCall("probe", np.ones((3, 3)), (OracleLayer((OracleHead(W, W, W), OracleHead(W, W, W))),))
    cases = [(SPEC, two_layers, "2 layers exceed the oracle's 1"),
             (replace(SPEC, heads=2), odd_split, "layer 0 input width 3 is not divisible by 2 heads")]
    for spec, call, why in cases:
        oracle = PATHS[path][0](spec)
        with pytest.raises(OracleSpecError) as e:
            oracle.run([call])
        assert str(e.value) == f"oracle refused call 'probe': {why} ({spec.describe()})"
        assert oracle.ledger.total("oracle") == 0


def test_refusal_checks_only_what_it_is_given() -> None:
    assert refusal(SPEC) is None
    assert refusal(SPEC, length=4, layers=1, width=4, output=4) is None
    assert refusal(SPEC, output=5) == "output width 5 exceeds dim 4"
    rotary = OracleHead(*[np.ones((2, 2))] * 3, rope_dims=2)
    assert refusal(replace(SPEC, rope=RoPE()), width=2, heads=(rotary,)) is None
    assert refusal(SPEC, width=2, heads=(rotary,)) == "layer 0 head 0 asks for rotary embeddings the oracle lacks"
