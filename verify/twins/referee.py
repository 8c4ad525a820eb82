"""Twins of the referee and the theory, caught by the probes (:mod:`attnsim.verify.probes`).

Each breaks one place of the code the way a slip would — a limit compared with ``>=`` instead of ``>`` (a
call at the limit refused) or against the limit + 1 (a call one past it let through), an executor that skips
a check, exact equality loosened to a tolerance, the ledger's compaction losing an amount, a containment
routine answering "limit 0" — by rewriting that one expression of the function's own source, so the twin
breaks the code as it is and stops working (is reported not caught) when the expression moves.
"""

from __future__ import annotations

import inspect
import math
import textwrap
from contextlib import contextmanager
from typing import Any, Callable, Iterator
from unittest import mock

import sympy as sp

from attnsim.sim import oracle as oracle_module
from attnsim.sim.engine import batch, runner
from attnsim.sim.ledger import Ledger
from attnsim.theory import symbolic
from attnsim.verify import agreement
from attnsim.verify.agreement import Agreement
from attnsim.verify.probes import probe_twin
from attnsim.verify.probes.oracle_limits import EXECUTORS, LIMITS, executors, probe_name
from attnsim.verify.probes.referee import EXACT_NUMERICS
from attnsim.verify.probes.theory import PAIRS
from attnsim.verify.twins.breaks import replaced


def mutated(fn: Callable[..., Any], old: str, new: str) -> Callable[..., Any]:
    """``fn`` recompiled from its source with the one occurrence of ``old`` replaced by ``new`` (in its own
    module's globals); refused when ``old`` does not occur exactly once."""
    fn = inspect.unwrap(fn)  # a cached function's own source (its decorator line recreates the cache)
    source = textwrap.dedent(inspect.getsource(fn))
    if source.count(old) != 1:
        raise ValueError(f"{fn.__qualname__}: {old!r} occurs {source.count(old)} times, not once")
    namespace = dict(fn.__globals__)
    exec(compile(source.replace(old, new), inspect.getsourcefile(fn) or "<mutant>", "exec"), namespace)
    return namespace[fn.__name__]


@contextmanager
def refusal_mutated(old: str, new: str) -> Iterator[None]:
    """Every executor asks a :func:`~attnsim.sim.oracle.refusal` with ``old`` rewritten as ``new``."""
    with replaced(oracle_module.refusal, mutated(oracle_module.refusal, old, new)):
        yield


SITES = {
    "length": ("length > spec.max_len", "length > spec.max_len + 1", "length >= spec.max_len"),
    "layers": ("layers > spec.layers", "layers > spec.layers + 1", "layers >= spec.layers"),
    "input_width": ("width > spec.dim", "width > spec.dim + 1", "width >= spec.dim"),
    "heads": ("len(heads) != spec.heads", "len(heads) not in (spec.heads, spec.heads + 1)",
              "len(heads) != spec.heads - 1"),
    "head_width": ("head.WV.shape[1]) > spec.dim", "head.WV.shape[1]) > spec.dim + 1",
                   "head.WV.shape[1]) >= spec.dim"),
    "output_width": ("output > spec.dim", "output > spec.dim + 1", "output >= spec.dim"),
}
"""Per limit: the comparison in ``refusal``, it against the limit + 1, and it with ``>=`` (or its like)."""

_HERE = executors()


def _on_executors(limit: str, only: tuple[str, ...] = ()) -> list[str]:
    whole = next(lim for lim in LIMITS if lim.name == limit).whole_calls_only
    return [probe_name(limit, e) for e in _HERE if (not whole or EXECUTORS[e][1]) and (not only or e in only)]


for _limit, (_old, _past, _at) in SITES.items():
    _words = _limit.replace("_", " ")
    probe_twin(f"oracle.{_limit}_plus_one", "referee", f"the oracle's {_words} limit is checked against the limit + 1 "
               f"(`{_past}`): a call one past it runs", _on_executors(_limit))(
        lambda o=_old, n=_past: refusal_mutated(o, n))
    probe_twin(f"oracle.{_limit}_at_limit_refused", "referee", f"the oracle's {_words} limit is checked with `{_at}`: "
               "a call exactly at it is refused", _on_executors(_limit))(lambda o=_old, n=_at: refusal_mutated(o, n))


probe_twin("engine.admit_length_minus_one", "referee", "the engine's batch referee measures a call one row short",
           _on_executors("length", ("engine.admit",)))(
    lambda: replaced(batch.admit, mutated(batch.admit, "length=n,", "length=n - 1,")))
probe_twin("engine.runner_skips_output", "referee", "the engine's batched runner never checks the output width",
           _on_executors("output_width", ("engine.run_batched",)))(
    lambda: mock.patch.object(runner, "_check_output", lambda oracle, job, y: y))
if "TorchOracle" in _HERE:
    def _torch_skips_output() -> Any:
        from attnsim.sim.torch.oracle import TorchOracle

        return mock.patch.object(TorchOracle, "_check_output", lambda *a, **k: None)

    probe_twin("torch.skips_output", "referee", "the torch oracle never checks the output width",
               _on_executors("output_width", ("TorchOracle",)))(_torch_skips_output)


@contextmanager
def tolerant_comparator(tolerance: float = 1e-9) -> Iterator[None]:
    """Exact numerics compare within ``tolerance`` instead of with ``==``."""
    original = agreement.compare

    def compare(y: Any, ref: Any, nm: Any, truth: Any, min_bits: float | None) -> Agreement:
        ag = original(y, ref, nm, truth, min_bits)
        if ag.agree or not nm.exact or y.shape != ref.shape:
            return ag
        gap = max((abs(float(nm.to_fraction_or_float(a)) - float(nm.to_fraction_or_float(b)))
                   for a, b in zip(y.ravel(), ref.ravel())), default=0.0)
        return Agreement(True, math.inf, None, None) if gap <= tolerance else ag

    with replaced(original, compare):
        yield


probe_twin("comparator.tolerance_1e-9", "referee", "exact equality is loosened to a tolerance of 1e-9",
           [f"comparator.{nm}" for nm in EXACT_NUMERICS])(tolerant_comparator)
probe_twin("ledger.compaction_drops_amount", "referee", "a compacting ledger keeps the last entry's amount, not the "
           "sum", ["ledger.compaction"])(
    lambda: mock.patch.object(Ledger, "record", mutated(Ledger.record, "amount=last.amount + entry.amount",
                                                        "amount=entry.amount")))
probe_twin("ledger.compaction_drops_flops", "referee", "a compacting ledger keeps the first entry's flops, not the "
           "sum", ["ledger.compaction"])(
    lambda: mock.patch.object(Ledger, "record", mutated(Ledger.record, "flops=last.flops + entry.flops",
                                                        "flops=last.flops")))


@contextmanager
def theory_broken(patch: Any) -> Iterator[None]:
    """The theory with ``patch`` applied, derived afresh inside (the derivations cached before are set aside)."""
    symbolic._analyse.cache_clear()
    try:
        with symbolic.derived_here(), patch:
            yield
    finally:
        symbolic._analyse.cache_clear()


_THEORY = [n for n in (f"theory.{p[0]}_vs_O({p[1]})".replace(" ", "") for p in PAIRS)]
probe_twin("theory.limit_always_zero", "theory", "the containment routine answers \"limit 0\" for every count and "
           "bound", _THEORY)(
    lambda: theory_broken(mock.patch.object(symbolic, "_limit_or_upper", lambda *a, **k: (sp.Integer(0), False))))
probe_twin("theory.tight_and_loose_swapped", "theory", "the containment routine calls a limit of 0 tight and a "
           "positive limit not tight", _THEORY)(
    lambda: theory_broken(mock.patch.object(symbolic, "_analyse", mutated(
        symbolic._analyse, "(LOOSE if lead == 0 else TIGHT)", "(TIGHT if lead == 0 else LOOSE)"))))
