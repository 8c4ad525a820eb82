"""Checker for Cor B.9 (Thm B.2's bounds for ANNA-transformers): anna.cor_b_9.

A protocol of :mod:`attnsim.sim.anna.mpc_protocols` (bitonic sort, prefix sums, or k-hop) or the f-ary scan of
:mod:`attnsim.sim.anna.mpc_scan` (the default: its memory s = N/P + f is a handful of words, so the run lies in Thm
B.2's stated range s < N^(1/5), with s growing over the growth sweep) runs twice on
the referee MPC machine: once delivering directly, once inside the transformer of
:mod:`attnsim.sim.anna.mpc_direct` (one layer per round, s heads, Lemma B.4's code with alpha = s), whose
every head is Algorithm 1 at r = 0 (ANNA) or EMA. The transformer's N outputs must equal the protocol's
and the protocol's must equal an independent answer (numpy's sort or cumsum, the sequential k-hop
generator). Layers, heads and width come off the ledger; the formulas and Thm B.2's bounds
(L = R + 1, H = O(s), m = O(s^5 log N)) are in paper_refs/anna.toml.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from attnsim.sim.anna.lsh import PStableLSH
from attnsim.sim.anna.message_code import DecodingError
from attnsim.sim.anna.mpc_direct import run_direct
from attnsim.sim.anna.mpc_scan import scan_protocol
from attnsim.sim.anna.transformer import EMA, LSHAttention, Mechanism, size_from_ledger
from attnsim.sim.ledger import Ledger
from attnsim.verify.claims.anna_mpc_to_anna import EXACT, THM_4_1_PARAMS, protocol_case
from attnsim.verify.registry import CheckContext, Measurement, Param, UsageError, checker

_REFERENCES = {"scan": "numpy.cumsum", "sort": "numpy.sort", "sum": "numpy.cumsum",
               "khop": "attnsim.sim.anna.tasks.hop_labels"}

REGIME_SIZES = (256, 512, 2048, 4096)
"""N of the growth sweep: one token per machine and the widest scan with s^5 < N gives s = 3, 3, 4, 5."""


def direct_mechanism(kind: str, seed: int) -> Mechanism:
    """``"alg1"``: Algorithm 1 at r = 0 (one table of 4 p-stable hashes of width 1/1000 on the ids); or ``"ema"``."""
    return EMA() if kind == "ema" else LSHAttention.draw(PStableLSH(1, 1e-3), 1, 4, seed)


def _grid(quick: bool) -> list[dict[str, Any]]:
    if quick:
        return [{"protocol": "scan", "N": 256, "P": 256}, {"protocol": "khop", "N": 128, "P": 128}]
    return ([{"protocol": "scan", "N": n, "P": n} for n in (256, 2048)]
            + [{"protocol": "khop", "N": 256, "P": 256, "k": k} for k in (1, 5)]
            + [{"protocol": "sort", "N": n, "P": n // 2} for n in (64, 256)]
            + [{"protocol": "sum", "N": 256, "P": 64}, {"protocol": "khop", "N": 128, "P": 128, "mechanism": "ema"}])


_SHARED = {p.name: p for p in THM_4_1_PARAMS}  # the protocol's parameters, as anna.thm_4_1 has them


def in_stated_range(s: int, N: int) -> bool:
    """Thm B.2's range s = O(N^(1/5 - delta)) at this size: s^5 < N (eps = log s / log N < 1/5), in integers."""
    return s ** 5 < N


def _regime(s: int, N: int) -> str:
    """Whether the run lies in Thm B.2's stated range: said in every record."""
    eps = math.log(s) / math.log(N)
    return (f"in Thm B.2's range: s = {s}, eps = log s / log N = {eps:.3f} < 1/5" if in_stated_range(s, N) else
            f"partial: s = {s}, eps = log s / log N = {eps:.3f} >= 1/5, "
            "outside Thm B.2's stated s = O(N^(1/5 - delta))")


def widest_scan_fan(N: int, block: int) -> int:
    """The largest fan f >= 2 whose scan memory s = block + f still has s^5 < N (2 when none has)."""
    fan = 2
    while in_stated_range(block + fan + 1, N):
        fan += 1
    return fan


def _case(ctx: CheckContext, name: str) -> tuple[Any, list[tuple[int, ...]]]:
    """The protocol (a function of the MPC hooks) and its independent answer; the scan's fan from --fan or N."""
    if name != "scan":
        return protocol_case(ctx, name)
    N, P = ctx.params["N"], ctx.params["P"]
    if ctx.params["eps"] is not None:
        raise UsageError("--eps: the scan's memory is N/P + fan words; choose it with --fan")
    fan = ctx.params["fan"] or widest_scan_fan(N, N // P)
    x = np.random.default_rng(ctx.seed).integers(0, 10 * N, size=N)
    return partial(scan_protocol, x, machines=P, fan=fan), [(int(v),) for v in np.cumsum(x)]


@checker("anna.cor_b_9", evidence="independent", numerics=EXACT, params=[
    replace(_SHARED["protocol"], default="scan", choices=tuple(_REFERENCES)),
    replace(_SHARED["N"], default=256), replace(_SHARED["P"], default=256),
    *(_SHARED[name] for name in ("eps", "k", "alphabet")),
    Param("mechanism", str, "alg1", "attention inside every head", choices=("alg1", "ema")),
    Param("fan", int, None, "scan: fan f, s = N/P + f words (default: the largest f with s^5 < N)", minimum=2),
], grid=_grid, growth_grid=lambda quick: [{"protocol": "scan", "N": n, "P": n}
                                          for n in ((256, 512, 1024, 2048) if quick else REGIME_SIZES)])
def check_cor_b_9(ctx: CheckContext) -> Measurement:
    """Run a protocol directly and inside Thm B.2's transformer with ANNA heads; outputs must be equal exactly."""
    name, N = ctx.params["protocol"], ctx.params["N"]
    protocol, reference = _case(ctx, name)
    direct_ledger = Ledger()
    direct = protocol(ledger=direct_ledger)
    R, s = direct_ledger.rounds("mpc_round"), direct.memory
    if R == 0:
        raise UsageError(f"--P: on {direct.machines} machine(s) the {name} protocol sends no message (R = 0 rounds); "
                         "Thm B.2 simulates rounds, and its s heads live in their layers")
    ledger = Ledger()
    ref_name = f"{_REFERENCES[name]} (and the protocol run directly)"
    try:
        run = run_direct(lambda **hooks: protocol(ledger=Ledger(), **hooks), inputs=N, machines=direct.machines,
                         block=direct.block, memory=s, mechanism=direct_mechanism(ctx.params["mechanism"], ctx.seed),
                         ledger=ledger)
    except DecodingError as exc:
        return Measurement(evidence="independent", reference=ref_name, agree=False, error_bits=0.0,
                           derived={"R": R, "s": s},
                           counts={"decoding_failures": ledger.total("decode_failure")},
                           reasons=[f"the transformer stopped: {exc}"])
    reasons = []
    if direct.vector() != reference:
        reasons.append("the protocol run directly differs from the reference answer")
    wrong = sum(a != b for a, b in zip(run.outputs, reference))
    if wrong:
        reasons.append(f"the transformer's output differs from the reference at {wrong} of {N} tokens")
    size = size_from_ledger(ledger)
    code = run.code
    derived = {"R": R, "s": s, "T": code.rows, "B": code.base}
    return Measurement(
        evidence="independent", reference=ref_name, agree=not wrong, error_bits=math.inf if not wrong else 0.0,
        counts={"layers": size["layers"], "heads": size["heads"], "embedding_dim": max(size["qk_dim"], size["v_dim"]),
                "decoding_failures": ledger.total("decode_failure")},
        counts_by_tag=direct_ledger.by_tag("mpc_round"), rounds=R, derived=derived, reasons=reasons,
        extra={**derived, "protocol": name, "P": direct.machines, "mechanism": ctx.params["mechanism"],
               "code": {"alpha": code.alpha, "base": code.base, "rows": code.rows, "digits": code.digits,
                        "width": code.width},
               "max_alpha": run.max_alpha, "bundles_decoded": ledger.total("decode"),
               "s_below_N": s < N, "qk_dim": size["qk_dim"], "value_dim": size["v_dim"],
               "eps_run": math.log(s) / math.log(N), "in_stated_range": in_stated_range(s, N),
               "regime": _regime(s, N)},
    )
