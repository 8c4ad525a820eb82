"""Every checker's cost model: memory (MiB) and time (seconds) as sums of terms ``c · Π (p / ref_p)^e``
stated at a reference size, fitted to runs measured on a two-core machine at sizes that take seconds to
minutes (each model's note says what was measured and what it stood at before). ``attnsim.verify.cost``
evaluates them; ``tests/test_domains.py`` holds measured runs within a factor of their estimates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping


@dataclass(frozen=True)
class Term:
    """``coef · Π (p / ref_p)^e``: MiB or seconds; ``numeric``: scaled by the numerics' entry size or op time;
    ``approx``: counted only in runs whose numerics are approximate (the reference those runs compute, in mp at
    twice their precision, which an exact run does not need)."""

    coef: float
    exps: dict[str, float]
    numeric: bool = True
    approx: bool = False


def T(coef: float, numeric: bool = True, approx: bool = False, **exps: float) -> Term:
    """A term (see :class:`Term`)."""
    return Term(coef, exps, numeric, approx)


@dataclass(frozen=True)
class Model:
    """A checker's cost: memory terms (MiB) and time terms (seconds) stated at ``ref`` in numerics ``nm``
    (None: the claim computes in no numerics of the user's choice). ``derive`` maps the values to the
    sizes the run really uses (e.g. a block no longer than the sequence)."""

    ref: dict[str, Any]
    mem: tuple[Term, ...]
    time: tuple[Term, ...]
    nm: str | None = "exact"
    derive: Callable[[dict[str, Any]], dict[str, Any]] | None = field(default=None)
    flags: dict[str, str] = field(default_factory=dict)
    """A size ``derive`` adds, named by the parameter a refusal it drives should name (e.g. codes: --c)."""
    inputs: tuple[str, ...] = ()
    """Parameters ``derive`` reads as given (not sizes, so not floored at 1; one whose ``ref`` is a name, such as a
    case's, passes as the string given), at ``ref``'s value when absent."""
    kinds: Mapping[str, float] | None = None
    """Time of the numeric terms in each kind of numerics (exact, mp, float64) relative to ``nm``, measured on the
    claim itself, where the ratio of one scalar operation's time (``verify.cost.op_seconds``) does not say it:
    TinT's exact weights stay small, so its mp runs take about as long as its exact ones, not 25 times longer."""


def _block(vals: dict[str, float]) -> dict[str, float]:
    return {**vals, "M": min(vals["M"], vals["N"])}


_TWO_HEADS_EXACT = Model(
    {"N": 64, "M": 8, "d": 4, "H": 1, "L": 1, "Hp": 1, "Lp": 1},
    mem=(T(2, N=2, H=1), T(1, N=1, d=1, L=1), T(0.01, False, d=2, H=1, L=1), T(0.01, False, Hp=1, Lp=1, d=2)),
    time=(T(0.05, False, N=2, M=-2, d=1.5, H=1, L=1), T(0.016, N=2, d=1, H=1, L=1),
          T(0.12, False, True, N=2, d=1, H=1, L=1), T(0.01, False, Hp=1, Lp=1, d=2, H=1, L=1)),
    derive=_block)
"""Fitted to CPU seconds measured (start-up taken off), Lemma 3.1: exact 3.8 s at N = 512, M = 8, d = 4; 1.0 s at
M = 32; 22 s at M = 8, d = 16; 4.2 s at M = 128, d = 16; 15 s and 53 s at N = 1024 and 2048 (M = 8, d = 4). So an
exact run costs its oracle calls, (N/M)^2 of them each costing about d^1.5 whatever the numerics (the first term),
and N^2 d products in its numerics (the second; in mp:200 about 28 times the exact ones). A run in approximate
numerics also computes its reference in mp at twice the precision (the third: 7.5 s at N = 512, d = 4 beside
float64, whose own arithmetic is negligible). mp:200 at N = 512, M = 8: 44 s at d = 4, 196 s at d = 16; 155 s at
N = 1024. The multi-head claims (Thm 3.4 at N = 256, M = 32, d = 8, H = L = Hp = Lp = 2: 1 s exact, 8 s
exact:64:seeded, 17 s float64, 50 s mp:200; Cor 3.2 at N = 192: 3.8 s) scale with H L. The model stood at
2 s (N/64)^2 d before, which refused the exact runs above N = 1108 at the default 10 minutes."""

_TWO_HEADS_LINEAR = Model({"N": 2048, "d": 4, "H": 2, "L": 2, "Hp": 2, "Lp": 1},
                          mem=(T(500, N=1.8, H=1, L=1), T(0.01, False, Hp=1, Lp=1, d=2)),
                          time=(T(16, False, N=1.3, d=1, H=1, L=1), T(1, N=1, d=1, H=1, L=1),
                                T(0.01, False, Hp=1, Lp=1, d=2, H=1, L=1)))
"""Thm 1.4 and Thm 5.1 (O(N/M) calls): measured exact at d = 4, H = L = 2, Hp = 2: 0.6, 3.3 and 9.8 s at N = 320,
896 and 2048 (N^1.3), 13, 75 and 340 MiB over the interpreter; the oracle's weights grow with H' L' d^2, as in the
quadratic claims. They were costed with the quadratic claims before, which put N = 2048 at 27 min."""

def _tint_work(vals: dict[str, Any]) -> dict[str, Any]:
    """A named TinT case's size: D^2 n L (width squared, tokens, simulated layers times steps), the work of one pass
    of the auxiliary model. A name that is not a case counts as the smallest one, so that the parameter's choices,
    not a cost, refuse it."""
    from attnsim.sim.tint.cases import CASES

    def work(case: Any) -> float:
        return float(case.aux.D ** 2 * len(case.ids) * (case.tint.n_sim or case.aux.layers) * case.tint.steps)

    name = str(vals["case"])
    return {**vals, "work": work(CASES[name]) if name in CASES else min(map(work, CASES.values()))}


TINT_REF_CASE = "tiny-relu"
"""The case the TinT case models are stated at (D = 8, 6 tokens, 2 layers: work 768), the size a command line
that names no case is estimated at before the claim's own default is filled in."""

_TINT_REF = {"case": TINT_REF_CASE, "work": 768.0}
_TINT_WIDE = 131072.0
"""The work of gpt2-d64 (D = 64, 16 tokens, 2 layers), where the models' growing terms are measured."""


def _tint_case_model(seconds: float, growth: float, fixed: float, kinds: dict[str, float], nm: str = "exact",
                     halvings: bool = False) -> Model:
    """A TinT case claim: start-up, torch's reference in approximate runs (2.5 s, 300 MiB), ``fixed`` seconds
    whatever the case, and ``seconds`` at gpt2-d64 growing as work^growth; memory linear in the work, at most
    450 MiB at gpt2-d64 (the backward claims' runs there held 570 MB, the interpreter's 100 included, after 10 min)."""
    scale = _TINT_REF["work"] / _TINT_WIDE
    extra = {"halvings": 1.0} if halvings else {}
    return Model({**_TINT_REF, **({"halvings": 4} if halvings else {})},
                 mem=(T(20), T(300, False, True), T(min(seconds, 450) * scale, work=1)),
                 time=(T(1.5 + fixed, False), T(2.5, False, True), T(seconds * scale ** growth, work=growth, **extra)),
                 nm=nm, derive=_tint_work, inputs=("case",), kinds=kinds, flags={"work": "case"})


_TINT_FIXED = Model({"halvings": 4}, mem=(T(20), T(300, False, True)),
                    time=(T(0.4, halvings=1), T(6, False, halvings=0.3), T(4, False, True, halvings=0.3)))
"""Thm 2.5's softmax simulation and Def 2.3's gated attention, at sizes of their own (no case): exact 0.4 to 0.8 s,
float64 2.1 to 4.5 s (6.8 s at 16 halvings) and 300 MiB, most of it loading torch for the reference."""
_TINT_FORWARD = _tint_case_model(12, 1.0, 0, {"exact": 1.0, "mp": 1.6, "float64": 0.02})
"""The forward and descent claims, measured (CPU s, exact / mp:200 / float64): 1.1 to 1.8, 1.3 to 4.1 and 1.3 to 4.3
at the tiny and D = 12 cases (start-up, and torch in the approximate runs); at gpt2-d64 6.5 to 13 in exact, 6.2 to
17 in mp, 1.3 to 3.9 in float64. Before, one model for every case and claim said 6.4 s exact."""
_TINT_MLP_SPLIT = _tint_case_model(25, 1.0, 0, {"exact": 1.0, "mp": 1.6, "float64": 0.02})
"""Def. 2.9's split MLP, the costliest forward claim: 22 s in exact and 43 s in mp:200 at gpt2-d64, 89 s in mp:200
at gpt2-d128 (twice the work), 1.6 s in float64; 1.5 to 2.2 s at the tiny and D = 12 cases."""
_TINT_BACKWARD = _tint_case_model(1000, 1.1, 4, {"exact": 1.0, "mp": 0.3, "float64": 0.005})
"""The backward claims, the SGD step, dynamic evaluation and Thm 1.1: 4 to 11 s at the tiny and D = 12 cases in every
numerics; at gpt2-d64 in exact, attention's backward pass, dynamic evaluation and Thm 1.1 were still running after
10 min and the SGD step after 15 min (estimated at 6.4 s and 10 s by the models before, which ignored the case);
attention's backward pass took 192 s in mp:200, 4.6 s in float64."""
_TINT_FD = _tint_case_model(5100, 1.1, 0, {"mp": 1.0, "float64": 0.005}, nm="mp:200", halvings=True)
"""The activation's and LayerNorm's backward passes against finite differences (mp and float64 only), at 4 halvings:
17 to 19 s in mp:200 at the tiny and D = 12 cases, 3.9 to 5.5 s in float64 (6.8 s at 16 halvings); at gpt2-d64 the
activation's still running after 10 min in mp:200, 6.1 to 6.9 s in float64."""
_ANNA_MPC = Model({"N": 16384, "P": 64, "k": 5, "alphabet": 4},
                  mem=(T(350, N=2),), time=(T(12, N=1.4, k=0.5), T(1.1, N=0.5, P=1.2)), nm=None)
"""Measured: Thm 4.1 1.2 s at N = 1024, 8.1 s and 332 MiB at 16384, 57 s and 5.0 GiB at 65536; Thm 5.4 12 s at 4096,
16 s at 16384, 28 s and 1.3 GiB at 32768; Thm 5.6 (k = 32) 6.1 s at 4096, 10 s at 8192. It stood at 20 s (N/1024) k/5
and 8 MiB (N/1024) k/5 before: 5 min at N = 16384, and 1.6 GiB where 5 GiB ran. The machines cost time of their own:
Thm 4.1's growth sweep (the bitonic sort on P = 2^ceiling(log2(6 sqrt N)) machines) took 1.2, 7.0 and 38.5 s at
N = 1024, 4096 and 16384 (P = 256, 512, 1024), where the model read N alone and said 0.2, 1.7 and 12 s."""
_ANNA_MPC_DEPTH = Model({"N": 16384, "depth": 2, "d": 3, "rank": 2},
                        mem=(T(500, N=2, d=1, rank=1),), time=(T(5, N=1.85, depth=1, d=1, rank=1),), nm=None)
"""Measured: Thm 4.4, Thm D.1 and Cor D.3 0.6 s at N = 1024, 2.7 s and 460 MiB at 16384, 35 s and 7.0 GiB at 65536
(20 s (N/1024) and 8 MiB (N/1024) before)."""
def _lsh_codes_against(r_ref: float, c_ref: float) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A derive: how many more hash codes (ell tables of z hashes a point) the proof's parameters give at (N, r, c)
    than at (N, r_ref, c_ref), where the terms' N-growth was fitted. Hyperplane's rho stands for both families
    (cross-polytope's ell is a little smaller, its z about a third). Left at 1 outside Theorem 3.4 (c r > 2,
    rho >= 1/3), which the checkers refuse themselves."""
    def derive(vals: dict[str, Any]) -> dict[str, Any]:
        # imported here, not with the models: theory.lsh loads sympy (0.4 s), which the CLI need not map to refuse
        from attnsim.theory.lsh import hyperplane_probabilities, proof_parameters, rho_limit

        def codes(r: float, c: float) -> int | None:
            if c <= 1 or not 0 < c * r <= 2 or vals["N"] < 2:
                return None
            pp = proof_parameters(int(vals["N"]), *hyperplane_probabilities(r, c))
            return None if pp.rho >= rho_limit() else pp.ell * pp.z

        here, ref = codes(vals["r"], vals["c"]), codes(r_ref, c_ref)
        return vals if here is None or ref is None else {**vals, "codes_c": here / ref}

    return derive


_ANNA_LSH = Model({"N": 64, "m": 8, "seeds": 200, "r": 0.2, "c": 7.0, "codes_c": 1.0},
                  mem=(T(0.5, N=2, m=1), T(0.6, N=1.6, codes_c=1)),
                  time=(T(2, N=2, m=1, seeds=1), T(3, N=1.6, seeds=1, codes_c=1)), nm=None,
                  derive=_lsh_codes_against(0.2, 7.0), flags={"codes_c": "c"}, inputs=("r",))
"""Measured after the reference compared pairs in cache-sized blocks: N = 4096, 3 seeds took 640 MiB above the
interpreter and 41 CPU s (so 2 GiB and 2 min estimated); N = 1024, 10 seeds 6.5 s; N = 64, 200 seeds 2 s. The
codes' terms: a seed takes about 2e-7 s and 7 bytes per table, point and hash (ell z N): at r = 0.2, c = 3
(ell = 4418, z = 88 at N = 256) 17.6 s and 700 MiB at N = 256, 4.6 s and 140 MiB at 128; at c = 4, N = 256
(ell = 851, z = 63) 3.6 s and 70 MiB. At c = 7, ell z N grows as N^1.6 from N = 64 to 1024. Before, the model
ignored c: it said 3.2 s for 20 seeds at N = 256, c = 3, which were still running at 120 s."""


_ANNA_BLOCKS = Model({"N": 262144, "block": 16, "words": 3}, mem=(T(500, N=1, words=1),),
                     time=(T(5, N=1.2, words=1),), nm=None)
"""Measured: Lemmas B.5 and B.6 0.1 s at N = 16384, 2.1 to 3.5 s and 360 to 420 MiB at 262144 (20 s (N/1024) before)."""
_TINT_LINEAR = Model({"D": 64, "K": 2, "n": 5, "n_train": 3},
                     mem=(T(80, D=2, n=1, n_train=1), T(250, False, True)),
                     time=(T(1.5, False, D=1.5, n=1, n_train=1), T(2.5, False, True)))
"""Measured in exact: 0.3, 0.35 and 1.4 s at D = 8, 24 and 64 (79 MiB at 64); float64 and mp:200 at D = 8: 1.8 to
2.4 s, loading torch for the reference. It stood at 10 s (D/8)^3 before: 85 min at D = 64."""

MODELS: dict[str, Model] = {
    **{c: _TWO_HEADS_EXACT for c in (
        "two_heads.lemma_3_1", "two_heads.cor_3_2", "two_heads.thm_1_1", "two_heads.thm_3_4", "two_heads.thm_3_5",
        "two_heads.claim_b_6", "two_heads.rebuttal_rope", "two_heads.rebuttal_norm")},
    "two_heads.thm_1_4": _TWO_HEADS_LINEAR,
    "two_heads.thm_5_1": _TWO_HEADS_LINEAR,
    # exact 0.1, 0.4 and 1.7 s at M = 8, 256 and 512, 36 MiB at 512; float64 and mp:200 0.2 s at M = 8 (3 s (M/8)^2
    # before: 3.4 h at M = 512)
    "two_heads.lemma_3_3": Model(
        {"M": 512, "d": 8, "H": 4, "Hp": 2, "Lp": 2, "jobs": 4},
        mem=(T(100, M=1.5, jobs=1, d=1), T(0.01, False, Hp=2, Lp=2, d=2)),
        time=(T(3, False, M=1.5, jobs=1, d=1), T(1, False, True, M=1, jobs=1, d=1), T(0.01, False, Hp=2, Lp=2, d=2))),
    "two_heads.thm_4_1": Model(
        {"N": 32768, "M": 16384, "d": 2, "seeds": 100, "H": 1, "L": 1},
        mem=(T(600, N=1, M=1, H=1), T(1, seeds=1)),
        time=(T(60, N=1, M=1, seeds=1, d=1, H=1, L=1),), nm="float64", derive=_block),
    # mp:200: 0.7, 11 and 46 s at N = 128, 512 and 1024, 680 MiB at 1024 (10 s (N/32)^2 before: 2.8 h at 1024)
    "two_heads.thm_4_2": Model({"N": 1024, "M": 4, "d": 2}, mem=(T(700, N=2, d=1),), time=(T(50, N=2, d=1),),
                               nm="mp:200"),
    "two_heads.lower_bound": Model({"N": 16, "M": 8, "d": 6, "seeds": 20, "radius": 1},
                                   mem=(T(2, N=2, d=1),), time=(T(10, N=2, d=1, seeds=1, radius=1),), nm="mp:96"),
    # certified bits (arb balls) over the sampled rows: 2·N·(M+1) exps per sampled query block per probe, each at
    # about N bits for the 2^-N target. Fitted to seconds measured per N (d = 4 and 8, 4 sampled blocks, N = 256 …
    # 4096, M = 8 … 64; d made no difference): 2^-N 2.4 s at N = 1024, M = 8, growing as N^2.2 … N^2.3 and
    # M^0.6 … M^0.75 (126 s at N = 4096, M = 32); 2^-10 1.4 s, as N^1.2 and M^0.3 (7 s at N = 4096, M = 32); the
    # float rows (a check, not a study) as N^1.6 and flat in M (2.5 s at N = 4096, 22 s at 16384).
    "two_heads.rebuttal_log_bits": Model({"N": 1024, "M": 8, "d": 4, "sample_blocks": 4},
                                         mem=(T(40, N=1, M=1, d=1),),
                                         time=(T(2.4, N=2.3, M=0.75, sample_blocks=1),), nm=None),
    "two_heads.rebuttal_log_bits_tolerance": Model({"N": 1024, "M": 8, "d": 4, "sample_blocks": 4},
                                                   mem=(T(40, N=1, M=1, d=1),),
                                                   time=(T(1.4, N=1.2, M=0.3, sample_blocks=1),), nm=None),
    "two_heads.rebuttal_log_bits_float": Model({"N": 1024, "M": 8, "d": 4, "sample_blocks": 4},
                                               mem=(T(40, N=1, M=1, d=1),),
                                               time=(T(0.5, N=1.6, sample_blocks=1),), nm=None),
    # 16 s at N = 16384, 216 s and 1.2 GiB at 65536 (N^1.9; it grew as N before, 140 s estimated at 65536)
    "two_heads.rebuttal_kv_memory": Model(
        {"N": 16384, "M": 256, "d": 32, "points": 6, "engine_N": 4096, "direct_N": 2048},
        mem=(T(300, N=1, d=1), T(32, direct_N=2), T(128, engine_N=1, M=1)),
        time=(T(16, N=1.9, M=1, d=1, points=1), T(10, direct_N=2, d=1), T(10, engine_N=2, d=1)),
        nm="float64", derive=_block),
    "anna.alg_1": _ANNA_LSH,
    "anna.alg_2": _ANNA_LSH,
    "anna.cor_b_14": _ANNA_MPC,
    "anna.thm_4_1": _ANNA_MPC,
    "anna.thm_b_10": _ANNA_MPC,
    "anna.cor_d_3": _ANNA_MPC_DEPTH,
    "anna.thm_4_4": _ANNA_MPC_DEPTH,
    "anna.thm_d_1": _ANNA_MPC_DEPTH,
    # beyond start-up: 3.7 s and 113 MiB at N = 16384 on P = 256 machines, 5.1 s at P = 1024 and 25.4 s, 950 MiB at
    # P = 4096; the growth sweep's one token a machine (P = N) 0.7, 2.9 and 13.1 s at N = 1024, 2048 and 4096, 57, 207
    # and 680 MiB: the machines' term grows as P^1.9 in time, P^1.8 in memory. The model read N alone before and
    # gave 1 s and 50 MiB at N = P = 4096 (and 16 s and 0.8 GiB at N = P = 65536, which would need some 200 GiB)
    "anna.cor_b_9": Model({"N": 16384, "P": 4096}, mem=(T(113, N=0.9), T(840, N=0.2, P=1.8)),
                          time=(T(3.5, N=1), T(22, N=0.4, P=1.9)), nm=None),
    # 3.7 and 13 s at N = 32768 and 65536, 0.8 and 3.1 GiB; stopped at 12 GiB at 131072 (64 MiB (N/1024) before)
    "anna.lemma_b_13": Model({"N": 65536, "P": 64}, mem=(T(3500, N=2),), time=(T(20, N=2),), nm=None),
    # 2.9 and 7.6 s at N = 16384 and 32768, 0.65 and 2.5 GiB; stopped at 12 GiB at 65536 (64 MiB (N/1024) before)
    "anna.lemma_b_12": Model({"N": 32768, "P": 32}, mem=(T(3000, N=2),), time=(T(12, N=1.6),), nm=None),
    # 14, 13 and 19 s at N = 4096, 16384 and 65536, 42 MiB at 65536 (4 s (N/1024) before)
    "anna.khop": Model({"N": 65536, "k": 16, "strings": 4}, mem=(T(100, N=1),), time=(T(25, N=0.5, strings=1),),
                       nm=None),
    "anna.lemma_b_4": Model({"q": 4096, "alpha": 4, "Delta": 8, "trials": 200},
                            mem=(T(0.1, q=1), T(2, alpha=1, Delta=1)),
                            time=(T(0.15, trials=1, alpha=1, Delta=1), T(0.02, q=1, trials=1)), nm=None),  # 12 s at
    # 20000 trials, 0.9 s at 2000 (20 s per 200 trials before)
    "anna.lemma_b_5": _ANNA_BLOCKS,
    "anna.lemma_b_6": _ANNA_BLOCKS,
    # measured, a draw at the default memory: 0.3 s at N = 4096, 1.3 s at 65536, 3.4 s at 262144 (the whole process
    # then 530 MB, 370 MB at 4096); the time term grows like N^0.7, above those, and with the draws
    "anna.lemma_c_2": Model({"N": 4096, "draws": 36}, mem=(T(8, N=1),), time=(T(11, N=0.7, draws=1),), nm=None),
    # 0.5, 0.4 and 1.5 s at N = 1000, 10^4 and 10^5, 47 MiB at 10^5 (30 s (N/1000) before)
    "anna.lemma_d_2": Model({"N": 100000, "rank": 2, "mv": 3, "s_scale": 6.4}, mem=(T(80, N=1, rank=1, mv=1),),
                            time=(T(3, N=1, rank=1, mv=1, s_scale=1),), nm=None),
    # 0.3, 0.2 and 19 s at N = 64, 1024 and 16384, 645 MiB at 16384 (15 s (N/64) before)
    "anna.prop_e_3": Model({"N": 16384, "B": 2, "L": 3, "M": 1000}, mem=(T(700, N=1.75, M=1),),
                           time=(T(25, N=1.75, L=1, M=1, B=1),), nm=None),
    "anna.def_ema": Model({"N": 1024, "d": 2}, mem=(T(12, N=2, d=1),), time=(T(2, N=1.2, d=1),), nm=None),
    # 1.7, 1.8 and 4.0 s at emp_N = 32, 64 and 256 (40 s (emp_N/32)^2 before)
    "anna.rebuttal_hash_tables": Model({"N": 16000, "emp_N": 256, "seeds": 50},
                                       mem=(T(1, N=1), T(100, emp_N=1)),
                                       time=(T(2, N=1), T(3, emp_N=1.5, seeds=1)), nm=None),
    # 1.4 s at N = 1024, 104 s and 220 MiB at 16384 (N^1.55; it grew as N before)
    "anna.rebuttal_linear_memory": Model({"N": 16384, "points": 4, "m": 8}, mem=(T(640, N=1, m=1, points=1),),
                                         time=(T(110, N=1.55, m=1, points=1),), nm=None),
    # measured: 11.5 s at the reference; 37 s, 0.5 GB at N = 2048 and 157 s, 1.4 GB at N = 16384 (s = N^0.95)
    "anna.thm_4_2": Model({"N": 256, "heads": 2, "layers": 1, "r": 0.02, "c": 70.0, "codes_c": 1.0},
                          mem=(T(48, N=1, heads=1, layers=1), T(3.7, codes_c=1)),
                          time=(T(12, N=0.75, heads=1, layers=1), T(3, N=0.75, heads=1, layers=1, codes_c=1)),
                          nm=None, derive=_lsh_codes_against(0.02, 70.0), flags={"codes_c": "r"}, inputs=("r", "c")),
    # 27 s at the defaults; r = 0.01, 0.005 and 0.002 (2.8, 6.3 and 16 times the default's hash codes): 41, 53 and 96 s,
    # 241 to 291 MiB; r = 1e-6 (33,400 times) was stopped at the 9.8 GiB memory limit before the model read r and c
    # 1.4, 1.9 and 8.6 s at N = 32, 128 and 1024, 96 MiB at 1024 (10 s (N/32)^2 before: 11 h at 2048)
    "anna.thm_5_2": Model({"N": 1024, "modulus": 37, "examples": 200}, mem=(T(150, N=1, modulus=1),),
                          time=(T(12, N=1, modulus=1, examples=1),), nm=None),
    "anna.thm_5_4": _ANNA_MPC,
    "anna.thm_5_6": _ANNA_MPC,
    # both: 0.8 to 1.0, 1.6 to 1.8 and 6.8 to 7.1 s at N = 256, 1024 and 4096, 12 MiB (15 s (N/256)^2 before)
    "anna.thm_5_4_direct": Model({"N": 4096, "strings": 2}, mem=(T(50, N=1),), time=(T(10, N=1, strings=1),), nm=None),
    "anna.thm_5_6_direct": Model({"N": 4096, "k": 8, "strings": 2}, mem=(T(50, N=1),),
                                 time=(T(10, N=1, k=1, strings=1),), nm=None),
    "anna.thm_b_2": Model({"N": 40, "k": 3, "s": 256}, mem=(T(2, N=1, s=1),), time=(T(10, N=1, k=1, s=1),),
                          nm=None),
    # 6.6, 9.5 and 9.5 s at N = 2048, 4096 and 16384, 20 MiB (15 s (N/256) before: 16 min at 16384)
    "anna.thm_c_1": Model({"N": 16384, "d": 2, "alphabet": 16, "layers": 2, "mv": 2, "s_scale": 40},
                          mem=(T(100, N=1, d=1, alphabet=1),), time=(T(15, N=0.5, d=1, layers=1, mv=1),),
                          nm=None),
    **{c: _TINT_FORWARD for c in ("tint.act_forward", "tint.attn_forward", "tint.def_2_8", "tint.ln_forward",
                                  "tint.act_descent", "tint.attn_descent", "tint.ln_descent", "tint.loss_gradient")},
    "tint.mlp_split": _TINT_MLP_SPLIT,
    "tint.thm_2_5": _TINT_FIXED,
    "tint.def_2_3": _TINT_FIXED,
    **{c: _TINT_BACKWARD for c in ("tint.attn_backward", "tint.dynamic_eval", "tint.sgd_step", "tint.thm_1_1")},
    **{c: _TINT_FD for c in ("tint.act_backward", "tint.ln_backward")},
    **{c: _TINT_LINEAR for c in ("tint.linear_backward", "tint.linear_descent", "tint.linear_forward")},
    # measured in exact: 0.5, 4.0 and 51 s at D = 12, 32 and 64, and 4, 60 and 833 MiB (D^3.7); mp:200 at D = 12
    # 1.2 s. It stood at 10 s (D/12)^3 and 4 MiB (D/12)^2 before, a fifth of what D = 64 takes in memory.
    "tint.stacking": Model({"D": 64}, mem=(T(900, False, D=3.8),), time=(T(60, False, D=3.7), T(2, False, True))),
    # 0.04, 0.12 and 0.3 s at D = 12, 32 and 64, in every numerics (10 s (D/12)^3 before: 25 min at D = 64)
    "tint.def_2_1": Model({"D": 64}, mem=(T(100, D=2),), time=(T(0.5, False, D=1.5),)),
    "tint.def_2_7": Model({"D": 64}, mem=(T(100, D=2),), time=(T(1, False, D=1),), nm="mp:200"),  # under 1 s to D = 64
    "tint.param_sharing": Model({}, mem=(T(20),), time=(T(10),), nm=None),
    # 1.1, 1.4 and 2.0 s at D = 4, 8 and 32, 156 MiB at 32 (30 s (D/4)^2 before)
    "tint.rebuttal_fd_end_to_end": Model({"D": 32, "widths": 8, "samples": 2000, "decades": 4},
                                         mem=(T(200, samples=1, D=1, widths=1),),
                                         time=(T(3, samples=1, D=0.5, widths=1, decades=1),), nm=None),
    # exact 0.3, 0.2 and 0.5 s at D = 8, 16 and 18; float64 1.9 s and mp:200 2.4 s at D = 8, loading torch (it stood
    # at 15 s (D/8)^3 before)
    "tint.rebuttal_mlp_aux": Model({"D": 8, "H_sim": 10, "n": 6, "n_train": 4, "steps": 1},
                                   mem=(T(20, D=2, H_sim=1, n=1), T(250, False, True)),
                                   time=(T(1, False, D=1.5, H_sim=1, n=1, n_train=1, steps=1), T(2.5, False, True))),
    # 0.4, 0.5 and 3.8 s at 3, 24 and 96 steps (10 s per 3 steps before)
    "tint.rebuttal_size_growth": Model({"layers": 1, "steps": 96}, mem=(T(32, steps=1, layers=1),),
                                       time=(T(6, steps=1.5, layers=1),), nm=None),
    "tint.size": Model({"n_sim": 1, "steps": 64}, mem=(T(64, steps=1, n_sim=1),), time=(T(2, steps=1, n_sim=1),),
                       nm=None),  # under 0.5 s from 1 to 64 steps (5 s a step before)
    "tint.under_2b": Model({}, mem=(T(400),), time=(T(60),), nm=None),  # 14 s alone, 58 s on shared cores; 370 MiB
}
"""The cost model of every checker, by claim id (``tests/test_domains.py`` checks that none is missing)."""

DEFAULT_MODEL = Model({"N": 64}, mem=(T(16, N=2),), time=(T(10, N=2),))
"""A claim without a model of its own (a checker registered outside this package) is costed as dense
attention over N."""
