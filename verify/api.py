"""The Python API of attnsim, exported at the top level (``attnsim.check``, ``attnsim.claims`` ...).

The same work as the commands of the same names, with Python values in and typed results out::

    import attnsim
    r = attnsim.check("two_heads.lemma_3_1", N=64, M=8, d=4)   # a Record
    r.verdict, r.counts["calls"], r.error_bits                 # 'pass', 128, inf

Bad input raises :class:`~attnsim.verify.registry.UsageError` (an :class:`attnsim.AttnsimError`) whose
``param`` names the keyword at fault (``M: must be >= 2, got 1``); only the command line spells it as a flag.
docs/api.md shows every function.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

from attnsim.verify.record_model import Record
from attnsim.verify.registry import UsageError


@dataclass(frozen=True)
class ClaimInfo:
    """A claim of a paper: its id, the paper's result number, its kind, whether a checker runs it, its bounds
    (resource -> big-O formula) and its parameters (name -> domain in words, empty without a checker)."""

    id: str
    label: str
    kind: str
    runnable: bool
    bounds: dict[str, str]
    params: dict[str, str]

    def __repr__(self) -> str:
        return f"<Claim {self.id} ({self.label}){'' if self.runnable else ' not runnable'}>"


def claims(paper: Optional[str] = None) -> list[ClaimInfo]:
    """Every claim of ``paper`` (every paper when None), in the papers' order."""
    from attnsim.paper_refs import load, papers
    from attnsim.verify.registry import all_checkers

    if paper is not None and paper not in papers():
        raise UsageError(f"unknown paper {paper!r}; known: {', '.join(papers())}", param="paper")
    checkers = all_checkers()
    out = []
    for p in [paper] if paper else list(papers()):
        for c in load(p).claims:
            chk = checkers.get(c.id)
            out.append(ClaimInfo(c.id, c.label, c.kind, chk is not None,
                                 {k: r.bound for k, r in c.resources.items() if r.bound},
                                 {q.name: q.domain() for q in chk.params} if chk else {}))
    return out


def check(claim_id: str, *, numerics: Optional[str] = None, seed: int = 0, min_bits: Optional[float] = None,
          **params: Any) -> Record:
    """Run one claim's construction and reference on the case ``params`` (the claim's own parameters, defaults
    filled in; :func:`claims` lists them) and return its :class:`Record`."""
    from attnsim.verify.check import run_check

    return Record.from_dict(run_check(claim_id, params, numerics, seed, min_bits))


@dataclass(frozen=True)
class GrowthResult:
    """A claim's growth sweep: its records and, per bounded resource, the growth verdict
    (:class:`attnsim.verify.growth.ResourceGrowth`)."""

    claim: str
    records: list[Record]
    resources: list[Any]

    @property
    def ok(self) -> bool:
        """Every bounded resource within its bound."""
        return all(g.ok for g in self.resources)

    def __repr__(self) -> str:
        rows = ", ".join(f"{g.resource}: {g.verdict}" for g in self.resources)
        return f"<Growth {self.claim}: {len(self.records)} records; {rows or 'no bounded resource'}>"


def growth(claim_or_paper: str, *, quick: bool = True, seed: int = 0) -> list[GrowthResult]:
    """The growth sweep of a claim, or of every claim of a paper, and each bounded resource's verdict."""
    from attnsim.verify.growth import run_growth
    from attnsim.verify.teeth import select_claims

    out = []
    for claim_id in select_claims([claim_or_paper]):
        records, results = run_growth(claim_id, quick, seed)
        out.append(GrowthResult(claim_id, [Record.from_dict(r) for r in records], list(results)))
    return out


def teeth(claims_or_papers: Sequence[str] | str | None = None, *, quick: bool = True, seed: int = 0) -> list[Any]:
    """Run each claim's broken twins through its check (:class:`attnsim.verify.teeth.ClaimTeeth` per claim)."""
    from attnsim.verify.teeth import run_teeth, select_claims

    names = [claims_or_papers] if isinstance(claims_or_papers, str) else claims_or_papers
    return list(run_teeth(select_claims(names), quick, seed))


def prove(claims_or_papers: Sequence[str] | str | None = None, *, rlimit: int | None = None) -> list[Any]:
    """Prove the named claims (default: all) for every size — call plans (z3, re-checked by cvc5), per-call
    and output identities: one :class:`attnsim.verify.prove.run.Row` per obligation. ``rlimit``: z3
    resource units per query (default ``attnsim.verify.prove.run.RLIMIT``; deterministic, unlike seconds)."""
    from attnsim.verify.prove.run import RLIMIT, run, select

    rlimit = RLIMIT if rlimit is None else rlimit
    if not 0 < rlimit <= 10 ** 12:
        raise UsageError(f"must be a number of resource units in 1..10^12, got {rlimit}", param="rlimit")
    names = [claims_or_papers] if isinstance(claims_or_papers, str) else claims_or_papers
    return run(select(names), rlimit)


def report(out: str | Path = "attnsim-report", *, quick: bool = True, paper: Optional[str] = None,
           teeth: bool = True, executor: str = "serial", workers: Optional[int] = None) -> list[Record]:
    """Write the report into ``out`` (report.md/.html, checks.csv/.json, tables, plots) and return its failing
    records (an empty list: everything passed)."""
    from attnsim.paper_refs import papers
    from attnsim.verify.report.build import write_report

    if paper is not None and paper not in papers():
        raise UsageError(f"unknown paper {paper!r}; known: {', '.join(papers())}", param="paper")
    failed = write_report(Path(out), quick=quick, executor=executor, workers=workers, teeth=teeth, paper=paper)
    return [Record.from_dict(r) if "version" in r else r for r in failed]
