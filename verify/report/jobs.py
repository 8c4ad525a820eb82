"""What ``attnsim report`` computes, as the jobs of one graph (:mod:`attnsim.verify.report.schedule`).

- ``symbolic theory``: every claim's resources derived once (``theory:<claim>``), kept in this process and
  handed to every later job of that claim, so no worker derives them again;
- ``checks and growth sweeps``: every point of both, once (``checks:<claim>``, ``growth:<claim>``,
  ``paper:<paper>``), each after its claim's theory, the costliest first;
- ``broken variants``: the planned twins (:mod:`attnsim.verify.teeth`), in workers of their own;
- ``proofs``: :func:`attnsim.verify.report.front.proof_status_of`, in this process;
- ``sections``: a claim's section once its checks, its growth sweep and its theory exist; a paper's topic
  sections once its checks do (those of :data:`attnsim.verify.report.sections.IN_PROCESS` in this process).

The sections that time work (:data:`attnsim.verify.report.sections.ALONE`) are not jobs: the report runs
them afterwards, alone.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

from attnsim.theory.symbolic import remember
from attnsim.verify.check import theory_chunk
from attnsim.verify.report.front import proof_status_of
from attnsim.verify.report.schedule import Graph, Job
from attnsim.verify.report.section_tasks import section_chunk, section_name
from attnsim.verify.report.sections import growth, placement
from attnsim.verify.sweep import Point, expected_seconds, run_chunk
from attnsim.verify.sweep import plan as plan_sweep
from attnsim.verify.teeth import Twin, key_point, run_twin_chunk, twin_keys

THEORY, SECTIONS, CHECKS = 0, 1, 2
"""Ranks (lower runs first among ready jobs): theory unblocks everything, a ready section is drawn at once,
then the checks paper by paper (``CHECKS + i``); the broken variants unblock nothing and come last."""
TEETH = 100
PHASES = ("symbolic theory", "checks and growth sweeps", "broken variants", "proofs", "sections")
"""The report's phases, in the order the summary names them."""
P_THEORY, P_CHECKS, P_TEETH, P_PROOFS, P_SECTIONS = PHASES


def paper_of(claim: str) -> str:
    """The paper a claim id belongs to (``two_heads`` of ``two_heads.lemma_3_1``)."""
    return claim.split(".")[0]


class ReportJobs:
    """The report's jobs on ``graph`` and what they leave behind: records, theories, twin results, proofs,
    section markdown (``parts``) and the topic sections' seconds (``slow``)."""

    def __init__(self, graph: Graph, out: Path, quick: bool, points: list[Point], grow: list[Point],
                 claims: list[str], cache_dir: Path | None, audit: int = 0) -> None:
        """``points`` (the checks) and ``grow`` (the growth sweeps) as one sweep, cached in ``cache_dir``, with
        ``audit`` cached records computed again and compared."""
        self.graph, self.out, self.quick, self.claims = graph, out, quick, claims
        self.enabled = cache_dir is not None
        self.n_points = len(points)
        self.swept = plan_sweep(points + grow, cache_dir, audit)
        self.theories: dict[str, list[Any]] = {}
        self.twin_results: list[Any] = []
        self.proved: dict[str, str] = {}
        self.parts: dict[Any, str] = {}
        self.slow: dict[str, float] = {}
        for name in PHASES:
            graph.phase(name)

    def _theories(self, cid: str) -> Callable[[], list[Any]]:
        return lambda: self.theories.get(cid, [])

    def _learn(self, cid: str, derived: list[Any]) -> None:
        remember(derived)
        self.theories[cid] = derived

    def theory(self, ids: Sequence[str]) -> None:
        """Derive the theory of every claim of ``ids`` first (it unblocks every other job of its claim)."""
        for cid in ids:
            self.graph.expect(f"theory:{cid}")
            self.graph.add(Job(P_THEORY, theory_chunk, lambda cid=cid: ([cid],), partial(self._learn, cid),
                               provides=(f"theory:{cid}",), rank=THEORY, label=cid))

    def checks(self) -> None:
        """Every point the cache does not hold, after its claim's theory; a point of both sweeps counts for both.

        The paper with the least check work (by the cost model) first, its costliest check first: its sections
        can then be drawn while the other papers' checks run, instead of all sections waiting for the end."""
        swept, tokens = self.swept, {}
        for i, (key, point) in enumerate(swept.keyed):
            mine = tokens.setdefault(key, set())
            if i < self.n_points:
                mine.update({f"checks:{point.claim}", f"paper:{paper_of(point.claim)}"})
            else:
                mine.add(f"growth:{point.claim}")

        def keep(results: list[tuple[str, dict[str, Any]]]) -> None:
            for key, rec in results:
                swept.put(key, rec)

        cost = {key: expected_seconds((key, point)) for key, point in swept.todo}
        work: dict[str, float] = {}
        for key, point in swept.todo:
            work[paper_of(point.claim)] = work.get(paper_of(point.claim), 0.0) + cost[key]
        order = {paper: i for i, paper in enumerate(sorted(work, key=work.__getitem__))}
        for key, point in swept.todo:
            for token in tokens[key]:
                self.graph.expect(token)
            self.graph.add(Job(P_CHECKS, run_chunk,
                               lambda key=key, point=point: ([(key, point)], swept.cache_root), keep,
                               needs=(f"theory:{point.claim}",), provides=tuple(sorted(tokens[key])),
                               cost=cost[key], rank=CHECKS + order[paper_of(point.claim)], label=point.claim,
                               theories=self._theories(point.claim)))

    def teeth(self, planned: dict[str, tuple[int, list[Twin]]]) -> None:
        """The twins of ``planned`` (:func:`attnsim.verify.teeth.plan`), each after its claim's theory."""
        for claim, name in twin_keys(planned):  # each claim's baseline (its unbroken check) and its twins
            params, numerics = key_point(planned, (claim, name))
            self.graph.add(Job(P_TEETH, run_twin_chunk, lambda k=(claim, name): ([k],),
                               self.twin_results.extend, needs=(f"theory:{claim}",), lane="teeth", rank=TEETH,
                               cost=expected_seconds(("", Point(claim, params, numerics))),
                               label=f"{claim} ({name})", theories=self._theories(claim)))

    def proofs(self, ids: Sequence[str]) -> None:
        """The proof status of ``ids``, in this process once no worker is forked any more (z3 starts threads)."""
        where = self.out if self.enabled else None
        self.graph.add(Job(P_PROOFS, proof_status_of, lambda: (where, self.quick, list(ids)), self.proved.update,
                           lane="local", label="proofs"))
        self.graph.after_forks.append(self.graph.jobs[-1])

    def checks_of(self, pred: Callable[[str], bool]) -> list[dict[str, Any]]:
        """The check records (not the growth sweeps') whose claim ``pred`` accepts, in grid order."""
        return [self.swept.results[k] for k, p in self.swept.keyed[:self.n_points] if pred(p.claim)]

    def growth_of(self, cid: str) -> list[Any]:
        """The growth verdicts of ``cid`` over its growth sweep ([] when the sweep did not run it)."""
        if cid not in self.claims:
            return []
        records = [self.swept.results[k] for k, p in self.swept.keyed[self.n_points:] if p.claim == cid]
        return growth.judged([cid], records, self.quick).get(cid, [])

    def sections(self, shown: Sequence[Any], paper_sections: Callable[[str], Sequence[Any]]) -> None:
        """Every claim section and every topic section of the papers ``shown`` but those run alone."""
        def sectioned(done: list[tuple[str, Any, str, float]]) -> None:
            for kind, key, text, seconds in done:
                self.parts[key] = text
                if kind == "topic":
                    self.slow[section_name(paper_sections(key[0])[key[1]])] = seconds

        out, quick, enabled = str(self.out), self.quick, self.enabled
        for pr in shown:
            for index, section in enumerate(paper_sections(pr.id)):
                where = placement(section)
                if where == "alone":
                    continue

                def topic(pid: str = pr.id, index: int = index) -> tuple:
                    records = self.checks_of(lambda c: c.startswith(pid + "."))
                    return ([("topic", pid, index, {"out": out, "quick": quick, "enabled": enabled,
                                                    "records": records})],)

                self.graph.add(Job(P_SECTIONS, section_chunk, topic, sectioned, needs=(f"paper:{pr.id}",), cost=2.0,
                                   rank=SECTIONS, lane="main" if where == "pool" else "local",
                                   label=section_name(section)))
                if where == "local":
                    self.graph.after_forks.append(self.graph.jobs[-1])
            for c in pr.claims:
                def claim_job(cid: str = c.id, pid: str = pr.id) -> tuple:
                    inputs = (out, quick, cid, self.checks_of(lambda x: x == cid), enabled, self.growth_of(cid))
                    return ([("claim", pid, cid, {"claim": inputs})],)

                self.graph.add(Job(P_SECTIONS, section_chunk, claim_job, sectioned, cost=0.5, rank=SECTIONS,
                                   label=c.id,
                                   needs=(f"checks:{c.id}", f"growth:{c.id}", f"theory:{c.id}"),
                                   theories=self._theories(c.id)))
