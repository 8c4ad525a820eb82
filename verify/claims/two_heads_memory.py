"""Checker of ``two_heads.rebuttal_kv_memory``: does the simulation need only KV-cache memory?

The authors told reviewers that the simulation stores the keys, the values and a constant number of
fixed vectors, O(N·d) like a KV cache. The construction measured is Lemma 3.1's fused scheme combined
online (:mod:`attnsim.sim.two_heads.streaming`): it holds one call's input and output and one query
block's running sums at a time, O(N·d + M²) words beyond its input. Its peak live memory
(``tracemalloc``; numpy reports its buffers to it) is measured over a doubling sweep of N at fixed M and
d. The exponent fitted to the bytes is held against the claimed one, and the bytes are fitted as
c0 + c1·N + c2·N² by least squares (:func:`attnsim.verify.stats.least_squares`): the sweep fails when c2's 95%
interval lies above 0, so an added N² term cannot hide under the baseline c0 (whose share flattens the bytes'
own log-log exponent). That fit needs :data:`QUADRATIC_MIN_SIZES` sizes from :data:`QUADRATIC_MIN_N` on (the
default and quick grids have them; a growth-sweep point, which adds only its peak at N to the growth verdict, runs
three sizes, and its record says the fit was not made).
The interpreter's free lists, which the collection before each measurement empties, are
refilled before it (:func:`~attnsim.verify.claims.rebuttal_memory.refill_free_lists`): a run that refilled them
itself would count up to ~150 KB of them, growing until n = N/M is about 48, a bump that a sweep ending there
read as c2 > 0. With them full the bytes are linear in N from N = 128 at M = 64 (c2's interval ~±1e-3 around 0,
while the N²/64 bytes of the quadratic_scratch twin fit as c2 = 0.0156).
The bytes are held against the bound in paper_refs (the paper states no constant: the record's ratio is our
fitted constant). The output is compared at every N of the sweep with an
independent softmax (:mod:`attnsim.verify.reference_attention`).

Beside it, labelled as an engine choice: the batched engine (:mod:`attnsim.sim.engine`), which holds the
scores of one key-block column of calls, O(N·M + N·d) by design. ``--path engine`` or ``--path direct``
(N × N scores) measure those instead of the construction: wrong "constructions" for the exponent and
the bound to reject.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnsim.paper_refs import get as get_claim
from attnsim.sim.engine.blas import single_threaded_blas
from attnsim.sim.ledger import Ledger
from attnsim.sim.numerics import get_numerics
from attnsim.sim.oracle import Oracle, OracleSpec
from attnsim.sim.two_heads import streaming
from attnsim.theory.formulas import as_number, evaluate
from attnsim.verify.claims.rebuttal_memory import (
    claimed_exponent,
    loglog_exponent,
    peak_bytes,
    settled_heap,
    sweep,
    sweep_fits,
)
from attnsim.verify.long_run import random_layer, run_layer
from attnsim.verify.reference_attention import REFERENCE, relative_row_errors, softmax_attention
from attnsim.verify.registry import CheckContext, Measurement, Param, checker, size_grid
from attnsim.verify.stats import LEVEL, least_squares

EXPONENT_SLACK = 0.1
"""How far the streaming construction's fitted exponent may exceed the claimed 1."""

STREAM_MIN_BITS = 30.0
"""Bits of agreement with direct attention required of the streamed output: the fused decode
A = (1 + k)/(1 − p) − (1 + k) loses about log2(A) of float64's 53 bits to cancellation."""


def direct_attention(N: int, d: int, seed: int) -> np.ndarray:
    """One head of attention computed directly: the N × N scores and weights exist in full."""
    spec, weights, X = random_layer(N, d, 1, seed)
    hw = weights.layers[0].heads[0]
    s = (X @ hw.WQ) @ (X @ hw.WK).T
    w = np.exp(s - s.max(axis=1, keepdims=True))
    return (w @ (X @ hw.WV)) / w.sum(axis=1, keepdims=True)


def agreement_bits(N: int, d: int, seed: int, Y: np.ndarray) -> float:
    """Bits of agreement of the streamed head ``Y`` with the independent softmax on the same random head."""
    _, weights, X = random_layer(N, d, 1, seed)
    hw = weights.layers[0].heads[0]
    truth, _ = softmax_attention(X @ hw.WQ, X @ hw.WK, X @ hw.WV)
    err = float(relative_row_errors(np.asarray(Y, dtype=float), truth).max())
    return float(-np.log2(err)) if err > 0 else float("inf")


def fused_calls(N: int, M: int) -> int:
    """Lemma 3.1's exact call count for the fused scheme at (N, M), read from paper_refs (the stream makes one
    call per block pair, counted on a compact ledger that merges like calls)."""
    claim = get_claim("two_heads.lemma_3_1")
    values = {"N": N, "M": M, "strict": 0, "fused": 1}
    return int(as_number(evaluate(claim.resources["calls"].exact, claim.definitions, values)))


QUADRATIC_MIN_SIZES = 5
"""Sizes the fit c0 + c1·N + c2·N² needs: two residual degrees of freedom, so c2's interval is not vacuous."""

QUADRATIC_MIN_N = 128
"""Smallest N the fit c0 + c1·N + c2·N² takes. Below it the bytes per token still climb as the interpreter's
per-block objects settle, a curve the fit reads as c2 > 0 with no N² term in the construction. Measured at M = 2,
d = 1 (a fuzzed example): 225, 295, 297, 326 bytes per added token from N = 7 to 112 (c2's interval [0.062, 0.68]
over those five sizes, a failure), then 309, 322, 358, 343 up to N = 1792 (interval [-0.026, 0.034] over 112 to
1792); at M = 8, d = 1, 87 to 96 from N = 512 to 8192."""


def quadratic_term(ns: list[int], peaks: list[int]) -> tuple[float, float, float] | None:
    """(c2, low, high): the N² coefficient of peak = c0 + c1·N + c2·N² by least squares over the sizes from
    :data:`QUADRATIC_MIN_N` on, and its :data:`LEVEL` interval; None with fewer than :data:`QUADRATIC_MIN_SIZES` such
    sizes (no interval worth the name)."""
    kept = [(n, pk) for n, pk in zip(ns, peaks) if n >= QUADRATIC_MIN_N]
    if len({n for n, _ in kept}) < QUADRATIC_MIN_SIZES:
        return None
    ns, peaks = [n for n, _ in kept], [pk for _, pk in kept]
    fit = least_squares([[1.0] * len(ns), [float(n) for n in ns], [float(n) ** 2 for n in ns]], peaks)
    low, high = fit.interval(2, LEVEL)
    return fit.coefficients[2], low, high


def stream_run(N: int, M: int, d: int, seed: int) -> tuple[int, np.ndarray, Oracle]:
    """Peak live bytes of the streaming construction on one random head (input built before measuring)."""
    spec, weights, X = random_layer(N, d, 1, seed)
    hw = weights.layers[0].heads[0]
    nm = get_numerics("float64", seed)
    # A compact ledger: one entry per run of like calls, so the accounting does not grow with the n² calls.
    oracle = Oracle(OracleSpec(M + 1, dim=2 * d + 2), nm, Ledger(compact=True))
    args = [nm.array(a) for a in (X, hw.WQ, hw.WK, hw.WV)]
    out: list[np.ndarray] = []
    with single_threaded_blas():
        peak = peak_bytes(lambda: out.append(streaming.simulate(*args, oracle, b=M)))
    return peak, out[0], oracle


def path_peak(path: str, N: int, M: int, d: int, seed: int) -> int:
    """Peak live bytes of one head at N on ``path``: the construction, the batched engine or direct attention."""
    if path == "stream":
        return stream_run(N, M, d, seed)[0]
    if path == "engine":
        return peak_bytes(lambda: run_layer(N, M, d, scheme="fused", scheduler="serial", workers=1, seed=seed))
    return peak_bytes(lambda: direct_attention(N, d, seed))


def peak_sweep(path: str, ns: list[int], M: int, d: int, seed: int) -> tuple[list[int], float]:
    """Peak bytes per N (after one unmeasured warm-up run: first-call caches are not the method's) and the exponent."""
    path_peak(path, ns[0], M, d, seed)
    peaks = [path_peak(path, n, M, d, seed) for n in ns]
    return peaks, loglog_exponent(ns, peaks)


def _kv_grid(quick: bool) -> list[dict[str, Any]]:
    """The quick point pins ``path`` to the construction: ``engine`` and ``direct`` are the wrong "constructions"
    this check exists to reject (direct's N × N scores fail on both the exponent and c2, by design), and
    ``attnsim fuzz`` draws only the choices the quick grid pins (:func:`attnsim.verify.fuzz.param_strategy`), so
    it fuzzes the claim's construction rather than reporting those planned failures as findings."""
    if quick:
        return [{"N": 2048, "M": 64, "d": 16, "points": 5, "path": "stream", "engine_N": 1024, "direct_N": 1024}]
    return [{}]


@checker("two_heads.rebuttal_kv_memory", evidence="independent", relations=sweep_fits,
         numerics=("float64",), default_numerics="float64", grid=_kv_grid,
         growth_grid=size_grid("N", (256, 512, 1024, 2048), M=64, d=16, points=3, engine_N=0, direct_N=0), params=[
    Param("N", int, 16384, "largest input length of the sweep", minimum=2),
    Param("M", int, 256, "oracle length (block size b = M)", minimum=2),
    Param("d", int, 32, "embedding dimension (one head)", minimum=1),
    Param("points", int, 6, "sizes in the doubling sweep N/2^(points-1) .. N", minimum=2),
    Param("path", str, "stream", "what is measured as the construction: stream (Lemma 3.1 combined online), "
          "engine (the batched engine) or direct (N x N attention)", choices=("stream", "engine", "direct")),
    Param("engine_N", int, 4096, "largest N of the batched engine's sweep shown beside it (0: none)", minimum=0),
    Param("direct_N", int, 2048, "largest N of the direct-attention sweep shown beside it (0: none)", minimum=0),
])
@settled_heap()
@single_threaded_blas()
def check_kv_memory(ctx: CheckContext) -> Measurement:
    """Peak live memory of the construction against N: fitted exponent and bytes against the bound. One BLAS
    thread throughout: the construction runs so anyway, and the reference softmax at N = 2048 and more costs
    half the CPU so (OpenBLAS splits a product by output tiles, so the numbers are the same)."""
    p = ctx.params
    ns = sweep(p["N"], p["points"])
    if p["path"] == "stream":
        stream_run(ns[0], p["M"], p["d"], ctx.seed)  # unmeasured warm-up, as peak_sweep does
        runs = [stream_run(n, p["M"], p["d"], ctx.seed) for n in ns]
        peaks, fitted = [r[0] for r in runs], loglog_exponent(ns, [r[0] for r in runs])
    else:
        peaks, fitted = peak_sweep(p["path"], ns, p["M"], p["d"], ctx.seed)
        runs = [stream_run(n, p["M"], p["d"], ctx.seed) for n in ns]
    above = quadratic_term(ns, peaks)
    claimed = claimed_exponent(ctx.claim)
    bound = get_claim(ctx.claim).resources["peak_bytes"].bound
    bounds = [float(as_number(evaluate(bound, {}, {"N": n, "M": p["M"], "d": p["d"]}))) for n in ns]
    ratios = [pk / b for pk, b in zip(peaks, bounds)]
    reasons = []
    if fitted > claimed + EXPONENT_SLACK:
        reasons.append(f"peak memory of the {p['path']} path: the fitted log-log exponent exceeds the "
                       f"claimed {claimed:g} (+{EXPONENT_SLACK} slack; its value is among the measurements)")
    if above is not None and above[1] > 0:
        reasons.append(f"peak memory of the {p['path']} path above its baseline: the N² coefficient of the fit "
                       f"c0 + c1 N + c2 N² has its {LEVEL:.0%} interval above 0, a super-linear term (its value is "
                       "among the measurements)")
    bits_at = [agreement_bits(n, p["d"], ctx.seed, Y) for n, (_, Y, _) in zip(ns, runs)]
    calls = [r[2].ledger.total("oracle") for r in runs]
    want = [fused_calls(n, p["M"]) for n in ns]
    if calls != want:
        reasons.append(f"stream calls {calls} at N = {ns} != Lemma 3.1's fused count (paper_refs) {want}")
    bits = min(bits_at)
    oracle = runs[0][2]
    extra: dict[str, Any] = {
        "path": p["path"], "N_sweep": ns, "peak_bytes": peaks, "exponent": fitted, "claimed_exponent": claimed,
        "quadratic_term": None if above is None else list(above), "bits_at_each_N": bits_at,
        "stream_calls_at_each_N": calls,
        "slack": EXPONENT_SLACK, "bytes_per_token": [pk / n for pk, n in zip(peaks, ns)],
        "bound_bytes": bounds, "bound_ratio": ratios, "min_bits": STREAM_MIN_BITS,
        "stream_calls": oracle.ledger.total("oracle"), "stream_rounds": oracle.ledger.rounds("oracle"),
        "summary": [f"{p['path']}: peak bytes {peaks} at N = {ns} (M = {p['M']}, d = {p['d']}); fitted exponent "
                    f"{fitted:.3f} (claimed {claimed:g} + {EXPONENT_SLACK})",
                    f"bound {bound} bytes: measured / bound = {', '.join(f'{r:.2f}' for r in ratios)} "
                    f"(the paper states no constant; this ratio is our fitted constant)",
                    "bytes fitted as c0 + c1 N + c2 N²: "
                    + (f"not fitted: {sum(n >= QUADRATIC_MIN_N for n in ns)} sizes from N = {QUADRATIC_MIN_N} on, "
                       f"{QUADRATIC_MIN_SIZES} needed (--N, --points); only the exponent judges this sweep"
                       if above is None
                       else f"c2 = {above[0]:.3g} bytes/N², {LEVEL:.0%} interval [{above[1]:.3g}, {above[2]:.3g}]"),
                    f"streamed output vs an independent softmax at every N: {', '.join(f'{b:.1f}' for b in bits_at)} "
                    f"bits "
                    f"(required {STREAM_MIN_BITS:g}); {oracle.ledger.total('oracle')} calls in "
                    f"{oracle.ledger.rounds('oracle')} round"]}
    for what, top in (("engine", p["engine_N"]), ("direct", p["direct_N"])):
        if top:
            ens = [n for n in sweep(top, min(p["points"], 4)) if n >= 2]
            epeaks, efit = peak_sweep(what, ens, p["M"], p["d"], ctx.seed)
            extra.update({f"{what}_N_sweep": ens, f"{what}_peak_bytes": epeaks, f"{what}_exponent": efit})
            extra["summary"].append(f"beside it, {what} ({'an engine choice' if what == 'engine' else 'N x N scores'}"
                                    f"): peak bytes {epeaks} at N = {ens}, exponent {efit:.3f}")
    return Measurement(evidence="independent", reference=REFERENCE,
                       agree=bits >= STREAM_MIN_BITS, error_bits=bits,
                       counts={"peak_bytes": peaks[-1], "exponent": fitted},
                       derived={"b": p["M"]}, reasons=reasons, extra=extra, varying=VARYING)


VARYING = ("peak_bytes", "exponent", "quadratic_term", "bytes_per_token", "bound_ratio", "summary",
           "engine_peak_bytes", "engine_exponent", "direct_peak_bytes", "direct_exponent")
"""Peak bytes (tracemalloc) and what is computed from them differ from run to run by allocator state; the
verdict rests on the fitted exponent within its stated slack."""
