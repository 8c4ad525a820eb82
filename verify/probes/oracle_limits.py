"""Probes of the oracle's limits on every executor (two_heads §1.5: length, layers, width, heads).

For each limit of an :class:`~attnsim.sim.oracle.OracleSpec` — the sequence length, the number of layers,
a layer's input width, the number of heads, a head's width (W^Q, W^K or W^V) and the output width — a
call exactly at the limit must be accepted and a call one unit past it refused, and refused *for that
limit* (the refusal names it). Every executor that runs oracle calls is probed: ``Oracle`` (numpy), the
engine's batched runner (:func:`~attnsim.sim.engine.runner.run_batched`) and its batch referee
(:func:`~attnsim.sim.engine.batch.admit`), and the torch oracle when torch is installed. The engine runs
one head of one layer per call, so its calls cannot express more layers or heads: those two limits are
probed on the executors that take whole calls.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from attnsim.sim.errors import OracleSpecError
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleCall, OracleHead, OracleLayer, OracleSpec
from attnsim.verify.probes import probe


@dataclass(frozen=True)
class Shape:
    """The shape of one probe call: rows, input width, heads per layer, layers, each head's query/key width
    ``k`` and value width ``v``, and the width the last layer MLP writes (``out``)."""

    length: int
    width: int
    heads: int = 1
    layers: int = 1
    k: int = 1
    v: int = 1
    out: int = 1


@dataclass(frozen=True)
class Limit:
    """One limit: the spec it is probed under, the call at the limit, the calls one unit past it, and the
    words a refusal for this limit contains."""

    name: str
    spec: OracleSpec
    at: Shape
    past: tuple[Shape, ...]
    says: str
    whole_calls_only: bool = False  # the engine's single-head single-layer calls cannot express it


_SPEC = OracleSpec(max_len=4, heads=1, layers=1, dim=4)
_AT = Shape(length=4, width=4)
LIMITS = (
    Limit("length", _SPEC, _AT, (replace(_AT, length=5),), "max_len"),
    Limit("layers", replace(_SPEC, layers=2), replace(_AT, layers=2), (replace(_AT, layers=3),), "layers exceed",
          whole_calls_only=True),
    Limit("input_width", _SPEC, _AT, (replace(_AT, width=5),), "input width"),
    Limit("heads", replace(_SPEC, heads=2), replace(_AT, heads=2), (replace(_AT, heads=3),), "heads, the oracle has",
          whole_calls_only=True),
    Limit("head_width", _SPEC, replace(_AT, k=4, v=4), (replace(_AT, k=5), replace(_AT, v=5)), "head width"),
    Limit("output_width", _SPEC, replace(_AT, out=4), (replace(_AT, out=5),), "output width"),
)


def _weights(rows: int, cols: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-2, 3, size=(rows, cols)).astype(np.float64) / 4


def _to_width(width: int) -> Callable[..., np.ndarray]:
    """A token-wise layer MLP writing ``width`` columns (each a copy of the first head column)."""
    return lambda nm, H, *rest: np.repeat(H[:, :1], width, axis=1)


def _call(s: Shape, spec: OracleSpec) -> OracleCall:
    w = s.width // spec.heads  # the column block each head reads (Def 2.2)
    layers = []
    for li in range(s.layers):
        heads = tuple(OracleHead(_weights(w, s.k, 1 + h), _weights(w, s.k, 2 + h), _weights(w, s.v, 3 + h))
                      for h in range(s.heads))
        layers.append(OracleLayer(heads, _to_width(s.out if li == s.layers - 1 else s.width)))
    X = _weights(s.length, s.width, 0) + 1
    return OracleCall("probe", X, tuple(layers))


def run_oracle(spec: OracleSpec, s: Shape) -> None:
    """One call on the numpy ``Oracle``."""
    Oracle(spec, get_numerics("float64")).run([_call(s, spec)])


def run_torch(spec: OracleSpec, s: Shape) -> None:
    """One call on the torch oracle."""
    from attnsim.sim.torch.oracle import TorchOracle

    TorchOracle(spec, get_numerics("float64")).run([_call(s, spec)])


def _job(s: Shape, spec: OracleSpec) -> Any:
    from attnsim.sim.two_heads.jobs import HeadJob

    head = _call(s, spec).layers[0].heads[0]
    decode = _to_width(s.out)
    return HeadJob("probe", _weights(s.length, s.width, 0) + 1, head.WQ, head.WK, head.WV, decode)


def run_engine(spec: OracleSpec, s: Shape) -> None:
    """One job on the engine's batched runner (float64: executed as a batch)."""
    from attnsim.sim.engine.runner import run_batched

    run_batched(Oracle(spec, get_numerics("float64")), [_job(s, spec)])


def run_admit(spec: OracleSpec, s: Shape) -> None:
    """A batch of two calls put to the engine's batch referee."""
    from attnsim.sim.engine.batch import CallBatch, Gathered, admit

    job = _job(s, spec)
    rows = np.arange(2 * s.length).reshape(2, s.length)
    admit(Oracle(spec, get_numerics("float64")),
          CallBatch("probe", Gathered(("Z",), (s.width,), (rows,)), job.WQ, job.WK, job.WV, out_width=s.out))


EXECUTORS: dict[str, tuple[Callable[[OracleSpec, Shape], None], bool]] = {
    "Oracle": (run_oracle, True),
    "engine.run_batched": (run_engine, False),
    "engine.admit": (run_admit, False),
    "TorchOracle": (run_torch, True),
}
"""Executor name: (run one call, whether it takes whole calls: several heads and layers)."""


def _outcome(run: Callable[[OracleSpec, Shape], None], spec: OracleSpec, s: Shape) -> tuple[bool, str]:
    """(refused, what happened) for one call."""
    try:
        run(spec, s)
    except OracleSpecError as exc:
        return True, str(exc)
    except Exception as exc:  # noqa: BLE001 - a call that is neither run nor refused is reported as such
        return False, f"neither run nor refused: {type(exc).__name__}: {exc}"
    return False, "accepted"


def limit_probe(executor: str, limit: Limit) -> Callable[[], str | None]:
    """The probe of ``limit`` on ``executor``: None when the call at the limit runs and every call one unit
    past it is refused naming the limit."""
    run, _ = EXECUTORS[executor]

    def ask() -> str | None:
        refused, what = _outcome(run, limit.spec, limit.at)
        if refused or what != "accepted":
            return f"a call exactly at the {limit.name} limit was not accepted ({what})"
        for s in limit.past:
            refused, what = _outcome(run, limit.spec, s)
            if not refused:
                return f"a call one past the {limit.name} limit was not refused ({what}; {s})"
            if limit.says not in what:
                return f"a call one past the {limit.name} limit was refused for another reason: {what}"
        return None

    return ask


def executors() -> list[str]:
    """The executors present here (the torch oracle only where torch is installed)."""
    have_torch = importlib.util.find_spec("torch") is not None
    return [e for e in EXECUTORS if e != "TorchOracle" or have_torch]


def probe_name(limit: str, executor: str) -> str:
    """The name of the probe of ``limit`` on ``executor``."""
    return f"oracle_limit.{limit}.{executor}"


for _executor in executors():
    for _limit in LIMITS:
        if _limit.whole_calls_only and not EXECUTORS[_executor][1]:
            continue
        probe(probe_name(_limit.name, _executor), "referee",
              f"{_executor}: a call at the oracle's {_limit.name.replace('_', ' ')} limit runs, one unit past it is "
              "refused")(limit_probe(_executor, _limit))
