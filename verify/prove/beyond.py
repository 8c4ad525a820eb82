"""``attnsim prove anna``: run the ANNA obligations through z3 and cvc5, and the plan twins.

Each obligation is decided by z3 under a resource limit and, when z3 proves it, re-checked by cvc5
under its own (both deterministic, not seconds). A counterexample of a twin is replayed: the claim's
ordinary exact check runs with the same bug planted and must fail.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from attnsim.sim.errors import AttnsimError
from attnsim.verify.check import run_check
from attnsim.verify.prove import anna, cvc5kit, tint
from attnsim.verify.prove.anna_twins import TWINS, PlanTwin
from attnsim.verify.prove.obligations import Obligation
from attnsim.verify.prove.run import RLIMIT, Row
from attnsim.verify.prove.tint_twins import TWINS as TINT_TWINS
from attnsim.verify.prove.z3kit import prove

CVC5_RLIMIT = 1_000_000  # cvc5 resource units per query (deterministic); the ANNA digit queries need more than 10^5
PAPERS: dict[str, Callable[[], list[Obligation]]] = {"anna": anna.obligations, "tint": tint.obligations}


def prove_one(ob: Obligation, rlimit: int = RLIMIT, second: bool = True) -> Row:
    """One obligation: z3, then cvc5 on what z3 proved (a cvc5 ``sat`` makes the row unknown)."""
    start = time.perf_counter()
    if ob.params.get(tint.WALK):
        bad = tint.first_unwritten(ob.params["shape"])
        return Row(ob.claim, ob.name, ob.variant, "proved" if bad is None else "counterexample",
                   round(time.perf_counter() - start, 3), "this loop shape, every width (a walk, no solver)",
                   None if bad is None else {"layer": bad[0], "register": bad[1]})
    if ob.params.get(tint.BLOCKS):
        bad_block = tint.blocks_read_after_write()
        return Row(ob.claim, ob.name, ob.variant, "proved" if bad_block is None else "counterexample",
                   round(time.perf_counter() - start, 3), "every layer index (a walk over names, no solver)",
                   None if bad_block is None else {"block": bad_block[0], "register": bad_block[1]})
    hyps, goal, names = ob.build()
    out = prove(hyps, goal, names, rlimit)
    verdict = cvc5kit.check(cvc5kit.smt2(hyps, goal), CVC5_RLIMIT).status if second and out.status == "proved" else None
    status = "unknown" if verdict == "sat" else out.status
    return Row(ob.claim, ob.name, ob.variant, status, round(time.perf_counter() - start, 3),
               ob.params.get("scope", "every size"),
               out.model if status == "counterexample" else None, cvc5=verdict)


def run(paper: str, rlimit: int = RLIMIT, on_row: Callable[[Row], None] | None = None,
        second: bool = True) -> list[Row]:
    """Every obligation of ``paper``."""
    rows = []
    for ob in PAPERS[paper]():
        row = prove_one(ob, rlimit, second)
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows


STATEMENTS = {**anna.STATEMENTS, tint.CLAIM: tint.STATEMENT}


def status(rows: Sequence[Row]) -> dict[str, str]:
    """Each claim's proof status: what is proved (and how many solver rows cvc5 confirmed), or what failed."""
    out = {}
    for claim in dict.fromkeys(r.claim for r in rows):
        mine = [r for r in rows if r.claim == claim]
        bad = sorted({r.obligation for r in mine if r.status != "proved"})
        asked = [r for r in mine if r.cvc5 is not None]
        both = sum(r.cvc5 == "unsat" for r in asked)
        second = f"cvc5 confirms {both} of {len(asked)} solver rows" if asked else "cvc5 not run"
        out[claim] = (f"{STATEMENTS[claim]} (z3; {second})" if not bad
                      else f"proof failed ({', '.join(bad)}); checked at instances")
    return out


def proof_status_of(out: Path | None, version: str, quick: bool, claims: Sequence[str]) -> dict[str, str]:
    """The status of each claim of ``claims`` that ``attnsim prove anna``/``tint`` proves, run once per code
    version (cached under ``out``); ``quick``: z3 alone."""
    papers = [p for p in PAPERS if any(c in STATEMENTS and c.startswith(p + ".") for c in claims)]
    if not papers:
        return {}
    path = None if out is None else Path(out) / ".cache" / f"prove-beyond-{version}{'-quick' if quick else ''}.json"
    if path is not None and path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") == version and set(papers) <= set(data["papers"]):
                return data["status"]
        except (json.JSONDecodeError, KeyError, UnicodeDecodeError):
            pass
    found: dict[str, str] = {}
    for paper in papers:
        found.update(status(run(paper, second=not quick)))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"version": version, "papers": papers, "status": found}), encoding="utf-8")
    return found


@dataclass
class TwinResult:
    """What the prover said of one twin, and the replay of the claim's check with the bug planted."""

    twin: PlanTwin
    rows: list[Row] = field(default_factory=list)
    replay: dict[str, Any] | None = None

    @property
    def found(self) -> bool:
        """The prover found a counterexample."""
        return bool(self.rows)

    @property
    def caught(self) -> bool:
        """A counterexample was found and the replay's verdict is fail."""
        return bool(self.rows) and self.replay is not None and self.replay["verdict"] == "fail"

    def as_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"claim": self.twin.claim, "name": self.twin.name, "what": self.twin.what, "caught": self.caught,
                "observable": self.twin.observable,
                "counterexamples": [r.as_dict() for r in self.rows], "replay": self.replay}


def replay(claim: str, params: dict[str, Any], numerics: str = "exact") -> dict[str, Any]:
    """The claim's check at ``params`` (with whatever bug is planted); a refusal or crash is not a fail."""
    try:
        record = run_check(claim, params, numerics)
    except AttnsimError as exc:
        return {"params": params, "verdict": "refused", "reasons": [str(exc)]}
    return {"params": params, "numerics": numerics, "verdict": record["verdict"], "reasons": record["reasons"][:2]}


def run_twin(t: PlanTwin, rlimit: int = RLIMIT) -> TwinResult:
    """Prove the twin's claim with its bug planted; replay the check at the first counterexample's sizes."""
    res = TwinResult(t)
    with t.breaks():
        for ob in PAPERS[paper_of(t)]():
            if ob.claim != t.claim:
                continue
            row = prove_one(ob, rlimit, second=False)
            if row.status == "counterexample":
                res.rows.append(row)
            if row.status == "counterexample" and "shape" in ob.params:  # the shape it broke at, for the replay
                row.counterexample = {**(row.counterexample or {}), "steps": ob.params["shape"].steps}
        if res.rows:
            res.replay = replay(t.claim, t.replay(res.rows[0].counterexample or {}), t.numerics)
    return res


def paper_of(t: PlanTwin) -> str:
    """The paper (``anna``, ``tint``) of a twin's claim."""
    return t.claim.split(".")[0]


def run_twins(paper: str, rlimit: int = RLIMIT) -> list[TwinResult]:
    """Every plan twin of ``paper``."""
    return [run_twin(t, rlimit) for t in (*TWINS, *TINT_TWINS) if paper_of(t) == paper]
