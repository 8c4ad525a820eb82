"""Run the obligations of claims through the solver, replay every counterexample as an ordinary check.

A row per obligation: ``proved`` (z3 and, when asked, cvc5 both say unsat; for every size, or for every
N with each M up to a stated bound when z3 gave up on symbolic M), ``unconfirmed`` (z3 alone: a failing
row), ``counterexample`` (the solver's values; the claim's exact check is run at once at those sizes and
must fail) or ``unknown`` (a failing row).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from attnsim.sim.errors import AttnsimError
from attnsim.verify.check import run_check
from attnsim.verify.prove import cvc5kit, identities, outputs
from attnsim.verify.prove.claims import CLAIMS, MIN_M, obligations
from attnsim.verify.prove.obligations import Obligation
from attnsim.verify.prove.z3kit import Outcome, prove
from attnsim.verify.registry import UsageError
from attnsim.verify.teeth import select_claims

RLIMIT = 20_000_000  # z3 resource units per query: deterministic (10× the largest query's use), not seconds
M_BOUND = 64  # per-M fallback when symbolic M is unknown: every N, each M ≤ this bound
SMALL = {"N": 24, "M": 8, "r": 4, "s": 3, "n": 6, "chunks": 6, "H": 2, "L": 2, "Hp": 2, "Lp": 2, "jobs": 12}


@dataclass
class Row:
    """One obligation's result."""

    claim: str
    obligation: str
    variant: str
    status: str
    seconds: float
    scope: str
    counterexample: dict[str, int] | None = None
    replay: dict[str, Any] | None = None
    cvc5: str | None = None  # the second solver on the same query: unsat, unknown (its resource limit), sat

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return asdict(self)


def select(names: Sequence[str] | None) -> list[str]:
    """Claim ids to prove: all, or those named (a claim id or the paper ``two_heads``) that have a plan."""
    if not names:
        return list(CLAIMS)
    chosen = [c for c in select_claims(names) if c in CLAIMS]
    if not chosen:
        raise UsageError(f"CLAIM: no proved plan for {', '.join(names)}; choose from two_heads, {', '.join(CLAIMS)}")
    return chosen


def _per_M(ob: Obligation, hyps: list[Any], goal: Any, names: dict[str, Any], rlimit: int) -> Outcome:
    """Every N, each M from the minimum to :data:`M_BOUND` (symbolic M defeated the solver)."""
    total = 0.0
    for m in range(MIN_M, M_BOUND + 1):
        out = prove(hyps + [names["M"] == m], goal, names, rlimit)
        total += out.seconds
        if out.status != "proved":
            return Outcome(out.status, total, out.model)
    return Outcome("proved", total)


def replay_params(ob: Obligation, model: dict[str, int]) -> dict[str, Any]:
    """The check's parameters at a counterexample's sizes (one head, one layer unless the model says)."""
    p: dict[str, Any] = {"d": 2, "H": 1, "L": 1, "Hp": 1, "Lp": 1, **ob.params}
    M = model.get("M", 4)
    p["M"] = max(M, MIN_M)
    if "N" in model:
        p["N"] = max(model["N"], 1)
    else:  # a count over n blocks (or chunks): that many blocks of M − strict tokens
        b = p["M"] - (p.get("length") == "strict")
        p["N"] = max(1, model.get("n", 1)) * b + model.get("chunks", 0) * b
    for k in ("H", "L", "Hp", "Lp"):
        if k in model:
            p[k] = max(1, min(model[k], 3))
    p["d"] = 2 * p["H"]
    if "r" in model:
        p["window"], p["sinks"] = model["r"], model.get("s", 0)
    if "jobs" in model:
        p["jobs"] = max(1, min(model["jobs"], 8))
    claim_params = {"two_heads.lemma_3_1": ("N", "M", "d", "scheme", "length", "psi"),
                    "two_heads.lemma_3_3": ("M", "d", "H", "Hp", "Lp", "jobs"),
                    "two_heads.claim_b_6": ("N", "M", "d", "length"),
                    "two_heads.cor_3_2": ("N", "M", "d", "scheme", "length", "H", "L", "psi")}
    keep = claim_params.get(ob.claim)
    return {k: v for k, v in p.items() if keep is None or k in keep}


def replay(ob: Obligation, model: dict[str, int]) -> dict[str, Any]:
    """Run the claim's check in exact numerics at the counterexample's sizes; its verdict must be fail."""
    params = replay_params(ob, model)
    if ob.claim == "two_heads.thm_1_1" and "causal" not in params:
        params["causal"] = False
    try:
        record = run_check(ob.claim, params, "exact")
    except AttnsimError as exc:
        return {"params": params, "verdict": "refused", "reasons": [str(exc)]}
    except Exception as exc:  # noqa: BLE001 - a crash is reported (it is not a failing verdict), never hidden
        return {"params": params, "verdict": "crashed", "reasons": [f"{type(exc).__name__}: {exc}"]}
    return {"params": params, "verdict": record["verdict"], "reasons": record["reasons"][:3]}


UNCONFIRMED = "unconfirmed"  # z3 proved it, cvc5 did not settle it within its limit: not proved


def run_obligation(ob: Obligation, rlimit: int = RLIMIT, replay_failures: bool = True,
                   second: bool = False) -> Row:
    """Prove one obligation (symbolic M first, then each M up to :data:`M_BOUND`), replaying a counterexample;
    ``second``: ask cvc5 too when z3 proves it for every size (``Row.cvc5``): the row is ``proved`` only if
    cvc5 says unsat as well (``unconfirmed`` if cvc5 gives up, ``unknown`` if it finds a model)."""
    hyps, goal, names = ob.build()
    out = prove(hyps, goal, names, rlimit, SMALL)
    verdict = cvc5kit.check(cvc5kit.smt2(hyps, goal)).status if second and out.status == "proved" else None
    scope = "every size"
    if out.status == "unknown" and "M" in names:
        first = out.seconds
        out = _per_M(ob, hyps, goal, names, rlimit)
        out.seconds += first
        scope = f"every N, each M <= {M_BOUND}"
    if verdict == "sat":  # the solvers disagree: neither answer is taken
        out = Outcome("unknown", out.seconds)
    elif verdict == "unknown":  # z3 alone: "proved" means both solvers say unsat
        out = Outcome(UNCONFIRMED, out.seconds)
    row = Row(ob.claim, ob.name, ob.variant, out.status, round(out.seconds, 3), scope,
              out.model if out.status == "counterexample" else None, cvc5=verdict)
    if row.counterexample is not None and replay_failures:
        row.replay = replay(ob, row.counterexample)
    return row


QUICK_VARIANTS = ("scheme=paper length=paper", "any")


def quick_obligation(ob: Obligation) -> bool:
    """The obligations a quick report proves: the paper's scheme and length convention (with and without
    sinks), and the packing ones."""
    return ob.variant.startswith(QUICK_VARIANTS)


OUTPUT = "output"
OUTPUT_SCOPE = "symbolic entries at sizes with every call shape"


def output_rows(claim: str, keep_variant: Callable[[str], bool] | None = None,
                done: dict[str, Row] | None = None) -> list[Row]:
    """The claim's output identities (``outputs.py``), each failure replayed as an exact check."""
    done = {} if done is None else done
    rows = []
    for variant, params, share in outputs.variants(claim):
        if keep_variant is not None and not keep_variant(variant):
            continue
        if share in done:
            first = done[share]
            rows.append(Row(claim, OUTPUT, variant, first.status, 0.0, first.scope, first.counterexample,
                            first.replay))
            continue
        out = outputs.run_output(claim, variant, params)
        row = Row(claim, OUTPUT, variant, out.status, out.seconds, f"{OUTPUT_SCOPE} {out.sizes}" if out.sizes else
                  OUTPUT_SCOPE, None if out.status == "proved" else {**out.sizes, "why": out.detail})
        if out.status != "proved":
            row.replay = replay_output(claim, params, out.sizes)
        done[share] = row
        rows.append(row)
    return rows


def replay_output(claim: str, params: dict[str, Any], sizes: dict[str, Any]) -> dict[str, Any]:
    """A failed output identity's sizes as an ordinary exact check (affine ψ, as the identity ran); must fail."""
    ob = Obligation(claim, OUTPUT, "", lambda: ([], None, {}), {**params, "psi": "affine"})
    model = {k: v for k, v in sizes.items() if isinstance(v, int)}
    if "window" in model:
        model["r"], model["s"] = model.pop("window"), model.pop("sinks")
    return replay(ob, model)


def identity_rows(claim: str, ids: Sequence[identities.Identity]) -> list[Row]:
    """The per-call identities (sympy) as rows of every claim whose calls they decode."""
    return [Row(claim, f"identity[{i.name}]", "any", "proved" if i.proved else "failed", 0.0,
                "symbolic A, B, u, e") for i in ids]


def run(claims: Sequence[str], rlimit: int = RLIMIT, on_row: Callable[[Row], None] | None = None,
        first_failure: bool = False, keep: Callable[[Obligation], bool] | None = None,
        with_outputs: bool = True, second: bool = True) -> list[Row]:
    """Every obligation of ``claims`` (``keep``: only those it accepts), then each claim's per-call
    identities and output identities (``with_outputs``; with ``keep``, only the variants it keeps);
    ``first_failure``: stop a claim at its first row that is not proved; ``second``: every query z3
    proves is re-checked by cvc5."""
    rows = _plan_rows(claims, rlimit, on_row, first_failure, keep, second)
    if not with_outputs:
        return rows
    ids = identities.prove_all()
    done: dict[str, Row] = {}
    keep_variant = None if keep is None else (lambda v: v.startswith(QUICK_VARIANTS))
    for claim in claims:
        for row in identity_rows(claim, ids) + output_rows(claim, keep_variant, done):
            rows.append(row)
            if on_row is not None:
                on_row(row)
    return rows


def _plan_rows(claims: Sequence[str], rlimit: int, on_row: Callable[[Row], None] | None,
               first_failure: bool, keep: Callable[[Obligation], bool] | None, second: bool) -> list[Row]:
    """The solver's rows: every obligation of the claims' call plans."""
    rows: list[Row] = []
    done: dict[str, Row] = {}
    for claim in claims:
        for ob in obligations(claim):
            if keep is not None and not keep(ob):
                continue
            start = time.perf_counter()
            if ob.share is not None and ob.share in done:
                first = done[ob.share]
                row = Row(claim, ob.name, ob.variant, first.status, 0.0, f"{first.scope} (the query of {first.claim})",
                          first.counterexample, first.replay, first.cvc5)
            else:
                row = run_obligation(ob, rlimit, second=second)
                row.seconds = round(max(row.seconds, time.perf_counter() - start), 3)
                if ob.share is not None:
                    done[ob.share] = row
            rows.append(row)
            if on_row is not None:
                on_row(row)
            if first_failure and row.status != "proved":
                break
    return rows


def all_proved(rows: Sequence[Row]) -> bool:
    """Exit status 0 of ``attnsim prove``: every row proved."""
    return bool(rows) and all(r.status == "proved" for r in rows)


@dataclass
class TwinProof:
    """What the prover said of a plan twin: every counterexample it found, each replayed."""

    claim: str
    name: str
    what: str
    caught: bool
    seconds: float
    row: Row | None
    rows: list[Row] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"claim": self.claim, "name": self.name, "what": self.what, "caught": self.caught,
                "seconds": self.seconds, "row": self.row.as_dict() if self.row else None,
                "counterexamples": [r.as_dict() for r in self.rows]}


def run_plan_twin(t: Any, rlimit: int = RLIMIT) -> TwinProof:
    """Prove ``t.claim`` with the twin's break applied: caught iff some obligation has a counterexample and
    the replay of every counterexample (under the same break) fails the ordinary check."""
    start = time.perf_counter()
    found: list[Row] = []
    with t.breaks():
        for ob in obligations(t.claim):
            row = run_obligation(ob, rlimit, replay_failures=False)
            if row.status == "counterexample":
                row.replay = replay(_with(ob, t.params), row.counterexample or {})
                found.append(row)
    caught = bool(found) and all(r.replay is not None and r.replay["verdict"] == "fail" for r in found)
    return TwinProof(t.claim, t.name, t.what, caught, round(time.perf_counter() - start, 2),
                     found[0] if found else None, found)


def _with(ob: Obligation, params: dict[str, Any]) -> Obligation:
    """The obligation with the twin's fixed parameters (e.g. ``causal``) added to its replay."""
    keep = {k: v for k, v in params.items() if k not in ("N", "M", "d", "window", "sinks")}
    return Obligation(ob.claim, ob.name, ob.variant, ob.build, {**ob.params, **keep})
