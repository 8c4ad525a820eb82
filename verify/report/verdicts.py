"""One verdict per claim, from which the front page, the checks table and the failing list are all built.

A claim's :class:`ClaimVerdict` gathers every row that can fail it: its check records, its growth rows (a bounded
resource that is not ``within``, a growth point that failed its own check: :mod:`attnsim.verify.report.sections.
growth`), and its broken variants (:mod:`attnsim.verify.teeth`: a claim whose check let one pass, or with too few,
fails with a row of its own). The three views read the same object, so they cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from attnsim.verify.regime import outside_stated_range
from attnsim.verify.registry import EVIDENCE_KINDS
from attnsim.verify.teeth import MIN_TWINS


@dataclass(frozen=True)
class ClaimVerdict:
    """Everything that decides one claim in this run: its checks, the broken-variant cell and the failing rows."""

    claim: str
    checks: int
    passed: int
    kinds: tuple[str, ...]
    teeth: str
    failures: tuple[dict[str, Any], ...]
    outside: int = 0  # passing checks whose record says they ran outside the statement's range (partial evidence)

    @property
    def ok(self) -> bool:
        """No failing row: every check passed, every growth row is within, the broken variants bite."""
        return not self.failures

    @property
    def weakest(self) -> str:
        """The weakest evidence kind its checks rest on (independent > self-consistency > sanity)."""
        return max(self.kinds, key=EVIDENCE_KINDS.index) if self.kinds else ""

    @property
    def why(self) -> str:
        """Why it fails, in a few words per kind of failing row ("" when it passes)."""
        checks = sum(r.get("source") == "check" for r in self.failures)
        growth = [r for r in self.failures if r.get("source") == "growth"]
        teeth = [r for r in self.failures if r.get("source") == "teeth"]
        parts = [f"{checks} of {self.checks} checks fail"] if checks else []
        parts += [f"growth: {len(growth)} row{'s' * (len(growth) != 1)} fail"] if growth else []
        parts += [teeth[0]["reasons"][0]] if teeth else []
        return "; ".join(parts)

    @property
    def cell(self) -> str:
        """The verdict as every view prints it: ``pass``, ``pass (self-consistency)``, ``fail (why)``; a claim whose
        passing checks ran outside the statement's range, some or all, says how many (all: ``partial``)."""
        if not self.ok:
            return f"fail ({self.why})"
        weak = [k for k in self.kinds if k != "independent"]
        notes = weak + ([f"{self.outside} of {self.checks} checks outside the stated range"] if self.outside else [])
        word = "partial" if self.outside and self.outside == self.checks else "pass"
        return word + (f" ({', '.join(notes)})" if notes else "")


def teeth_cell(teeth: dict[str, dict[str, Any]] | None, cid: str) -> tuple[str, str | None]:
    """(the broken-variants cell, the problem that fails the claim or None)."""
    if teeth is None:
        return "not run", None
    t = teeth.get(cid)
    if t is None or t["registered"] < MIN_TWINS:
        n = 0 if t is None else t["registered"]
        return f"no teeth ({n} registered)", f"fewer than {MIN_TWINS} broken variants registered ({n})"
    refused = f", {t['refused']} refused" if t.get("refused") else ""
    cell = f"{t['caught']}/{t['run']}{refused}" + ("" if t["ok"] else f" (**{t.get('problem')}**)")
    return cell, None if t["ok"] else (t.get("problem") or "a broken variant passed")


def claim_verdicts(records: Sequence[dict[str, Any]], teeth: dict[str, dict[str, Any]] | None = None,
                   growth_rows: Sequence[dict[str, Any]] = ()) -> dict[str, ClaimVerdict]:
    """Every claim that ran (check records or growth rows), in the papers' order, with its verdict. ``teeth``: the
    broken-variant results by claim (None: not run); ``growth_rows``: failing growth rows and points."""
    from attnsim.paper_refs import all_claims

    order = {cid: i for i, cid in enumerate(all_claims())}
    claims = sorted(dict.fromkeys([r["claim"] for r in records] + [r["claim"] for r in growth_rows]),
                    key=lambda c: order.get(c, len(order)))
    out = {}
    for cid in claims:
        mine = [r for r in records if r["claim"] == cid]
        cell, problem = teeth_cell(teeth, cid)
        fails = [{**r, "source": "check"} for r in mine if r["verdict"] != "pass"]
        fails += [{**r, "source": "growth"} for r in growth_rows if r["claim"] == cid]
        if problem:
            fails.append({"claim": cid, "params": {}, "numerics": None, "verdict": "fail", "reasons": [problem],
                          "source": "teeth"})
        kinds = tuple(sorted({r.get("evidence", "independent") for r in mine}))
        outside = sum(r["verdict"] == "pass" and outside_stated_range(r) for r in mine)
        out[cid] = ClaimVerdict(cid, len(mine), sum(r["verdict"] == "pass" for r in mine), kinds, cell, tuple(fails),
                                outside)
    return out


def verdict_table(verdicts: dict[str, ClaimVerdict]) -> list[str]:
    """The checks table: one row per claim that ran, failing last: result, checks, passed, evidence, broken
    variants caught, verdict."""
    from attnsim.paper_refs import all_claims

    known = all_claims()
    rows = sorted(((not v.ok, i, v) for i, v in enumerate(verdicts.values()) if v.checks), key=lambda r: r[:2])
    lines = [f"| [{known[v.claim].label if v.claim in known else v.claim}](#{v.claim}) | `{v.claim}` | {v.checks} | "
             f"{v.passed} | {', '.join(v.kinds)} | {v.teeth} | {v.cell if v.ok else 'fail'} |"
             for _, _, v in rows]
    return ["| result | claim | checks | passed | evidence | broken variants caught | verdict |",
            "|---|---|---|---|---|---|---|", *lines, ""] if lines else []


def failing_list(verdicts: dict[str, ClaimVerdict]) -> list[dict[str, Any]]:
    """Every failing row of every claim, checks first within a claim, in the papers' order."""
    return [{k: v for k, v in row.items() if k != "source"} for cv in verdicts.values() for row in cv.failures]
