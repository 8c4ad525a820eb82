"""The report's front page: per paper, what holds and on what evidence, before the table of contents.

For each paper of ``attnsim.paper_refs``, in its order:

- one line of counts: claims registered, with a checker, checked by this sweep, by the kind of
  evidence their passes rest on, failing; proved for every size; the growth verdicts (a slot that a
  provider fills);
- a table of every claim by label, in the paper's order: its verdict and evidence, whether it is proved
  for every size or checked at instances (and at which N, read off the records), its route (the paper's
  construction or ours), the variables its growth verdicts are judged in (the checker's limit and parameter
  sweeps), its regime (what the records say of it, :func:`attnsim.verify.regime.run_regime`, then paper_refs'
  conditions), and a note — why it has no checker, what we reconstructed, what we check that is weaker than
  the statement;
- the reconstructions and weakenings, one line each, linking ``docs/``;
- the findings (:mod:`attnsim.verify.findings`), computed from records of this run, one line each, linking the
  report's section and naming the records and the command that computes each.

A claim's verdict is its :class:`~attnsim.verify.report.verdicts.ClaimVerdict`, the object the checks table and
the failing list are built from too.

What is proved for every size comes from ``attnsim prove`` (:mod:`attnsim.verify.prove.status`, run
once per code version and cached beside the records); the growth verdicts from the report's growth pass
(:mod:`attnsim.verify.report.sections.growth`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from attnsim.paper_refs import Claim, Paper
from attnsim.verify.findings import Finding
from attnsim.verify.growth import VERDICTS, ResourceGrowth
from attnsim.verify.regime import run_regime
from attnsim.verify.registry import EVIDENCE_KINDS, all_checkers
from attnsim.verify.report.doc_links import doc_link
from attnsim.verify.report.verdicts import ClaimVerdict
from attnsim.verify.sweep import code_version

PROOF_PREFIXES = ("output proved", "call plan proved", "integer plan proved", "proof failed")


def proof_status_of(out: Path | None, quick: bool, claims: Sequence[str]) -> dict[str, str]:
    """The status ``attnsim prove`` gives each of ``claims`` (run once per code version, cached under
    ``out``; not run when no claim of ``claims`` has a call plan to prove)."""
    from attnsim.verify.prove import beyond
    from attnsim.verify.prove.claims import CLAIMS
    from attnsim.verify.prove.status import proof_results, proof_status

    found = beyond.proof_status_of(out, code_version(), quick, claims)
    if not set(claims) & set(CLAIMS):
        return found
    results = proof_results(out, code_version(), quick)
    return {**found, **{cid: proof_status(cid, results) for cid in results}}


def claim_status(claim: Claim, verdict: ClaimVerdict | None, has_checker: bool) -> tuple[str, str]:
    """(verdict cell, evidence kind or "") of one claim on the front page: its :class:`ClaimVerdict`'s cell."""
    if not has_checker:
        restated = claim.extra.get("restated_as")
        return (f"checked as [`{restated}`](#{restated})" if restated else "no checker"), ""
    if verdict is None or not verdict.checks:
        return "not run by this sweep", ""
    return verdict.cell, verdict.weakest if verdict.ok else ""


def sizes(records: list[dict[str, Any]]) -> str:
    """The sequence lengths a claim was checked at, as ``N = 16…64`` (or the number of instances)."""
    ns = sorted({r["params"]["N"] for r in records if isinstance(r.get("params", {}).get("N"), int)})
    if not ns:
        return f"{len(records)} instance{'s' * (len(records) != 1)}"
    return f"N = {ns[0]}" if len(ns) == 1 else f"N = {ns[0]}…{ns[-1]} ({len(ns)} sizes)"


def _docs_link(claim: Claim) -> str:
    """`` (docs/<page>)``, a link relative to the report folder when the source tree holds the page (the report
    copies it there, :mod:`attnsim.verify.report.doc_links`)."""
    if not claim.docs:
        return ""
    link = doc_link(claim.docs)
    return f" ([docs/{claim.docs.partition('#')[0]}]({link}))" if link else f" (docs/{claim.docs})"


def paper_block(paper: Paper, records: list[dict[str, Any]], checkers: set[str],
                verdicts: Mapping[str, ClaimVerdict], proved: Mapping[str, str],
                growth: dict[str, int], found: Sequence[Finding] = ()) -> list[str]:
    """The front-page block of one paper (markdown)."""
    rows, kinds, failing, checked = [], {k: 0 for k in EVIDENCE_KINDS}, 0, 0
    registered = all_checkers()
    for claim in paper.claims:
        mine = [r for r in records if r["claim"] == claim.id]
        verdict, kind = claim_status(claim, verdicts.get(claim.id), claim.id in checkers)
        checked += bool(mine)
        failing += verdict.startswith("fail")
        if kind:
            kinds[kind] += 1
        status = proved.get(claim.id, "")
        size = status if status.startswith(PROOF_PREFIXES) else (
            f"at instances: {sizes(mine)}" if mine else "—")
        scope = claim.extra.get("out_of_scope")
        note = (f"out of scope: {scope}" if scope and claim.id not in checkers else "") or (
            claim.no_checker if claim.id not in checkers else "") or "; ".join(
            f"{what}: {line}" for what, line in (("reconstructed", claim.reconstructed), ("weakened", claim.weakened))
            if line)
        chk = registered.get(claim.id)
        judged = ", ".join([claim.limit] + [ps.var for _, ps in chk.param_sweeps]) if chk is not None else ""
        regime = "; ".join(x for x in (run_regime(mine), claim.regime) if x)
        cells = (verdict, size, claim.route or "—", judged or "—", regime or "—", note or "—")
        rows.append(f"| [{claim.label}](#{claim.id}) | " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    with_checker = sum(c.id in checkers for c in paper.claims)
    counts = ", ".join(f"{n} {k}" for k, n in kinds.items())
    n_out = sum(proved.get(c.id, "").startswith("output proved for every size") for c in paper.claims)
    n_plan = sum(proved.get(c.id, "").startswith(("call plan proved", "integer plan proved")) for c in paper.claims)
    proof = (f"{n_out} with the output proved for every size, {n_plan} with only the call or integer plan proved "
             "(`attnsim prove`), the others checked at instances")
    growth_line = ", ".join(f"{n} {v}" for v, n in growth.items()) + " bounded resources (`attnsim growth CLAIM`)"
    lines = [f"#### {paper.title} (`{paper.id}`)", "",
             f"{len(paper.claims)} claims registered, {with_checker} with a checker, {checked} checked by this "
             f"sweep: passing on {counts} evidence; {failing} failing. {proof[0].upper()}{proof[1:]}. "
             f"Growth verdicts: {growth_line}.", "",
             "| result | verdict | for every size / at instances | route | judged in | regime | note |",
             "|---|---|---|---|---|---|---|", *rows, ""]
    changed = [c for c in paper.claims if c.reconstructed or c.weakened]
    if changed:
        lines += ["Reconstructed or weakened:", ""]
        lines += [f"- [{c.label}](#{c.id}): " + "; ".join(
            f"{what} — {line}" for what, line in (("reconstructed", c.reconstructed), ("weakened", c.weakened))
            if line) + _docs_link(c) for c in changed]
        lines.append("")
    if found:
        lines += ["Findings (computed by this run; each record and the command that computes it again are in "
                  "findings.json):", ""]
        lines += [f"- {f.text} ([{f.link}](#{f.link})). Records: " + "; ".join(
            f"`{name}` (`{cmd}`)" for name, cmd in zip(f.sources, f.commands)) if f.records
            else f"- {f.text} ([{f.link}](#{f.link}))" for f in found]
        lines.append("")
    return lines


def front_page(papers: list[Paper], records: list[dict[str, Any]], checkers: set[str],
               verdicts: Mapping[str, ClaimVerdict], proved: Mapping[str, str],
               grown: Mapping[str, Sequence[ResourceGrowth]],
               found: Mapping[str, Sequence[Finding]] | None = None) -> list[str]:
    """The front page (markdown, no level-2 heading: the table of contents follows it). ``verdicts``: each claim's
    verdict (:func:`attnsim.verify.report.verdicts.claim_verdicts`); ``proved``: each claim's proof status;
    ``grown``: each claim's growth verdicts; ``found``: each paper's findings."""
    lines = ["What holds, per paper: a claim passes when every check of it passes and its check rejects its "
             "broken variants; *independent* evidence compares with a reference computed another way, "
             "*self-consistency* holds our code against our own formula, *sanity* is a necessary condition.", ""]
    for paper in papers:
        mine = [r for r in records if r["claim"].startswith(paper.id + ".")]
        counted = [g.verdict for cid, rs in grown.items() if cid.startswith(paper.id + ".") for g in rs]
        lines += paper_block(paper, mine, checkers, verdicts, proved, {v: counted.count(v) for v in VERDICTS},
                             (found or {}).get(paper.id, ()))
    return lines
