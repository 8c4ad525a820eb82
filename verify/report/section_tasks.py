"""The report's sections as tasks of the sweep's executors.

Every claim section and every topic section (:func:`attnsim.verify.report.sections.paper_sections`) runs in
the executor's workers as soon as its records exist (:mod:`attnsim.verify.report.schedule`), each through the
section cache (:func:`attnsim.verify.report.section_cache.cached_section`); the sections that run torch run in
the report's own process (:data:`attnsim.verify.report.sections.IN_PROCESS`), and those that time work
(:data:`attnsim.verify.report.sections.ALONE`) last, one at a time, with nothing else of the report running.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator

from attnsim.sim.errors import AttnsimError
from attnsim.verify.limits import out_of_memory
from attnsim.verify.registry import ResumableError
from attnsim.verify.report.section_cache import cached_section
from attnsim.verify.report.sections import UNCACHED, paper_sections, placement

Job = tuple[str, str, Any, dict[str, Any]]
"""(kind ``claim`` or ``topic``, paper, the claim id or the section's index, the task's inputs)."""


def section_name(section: Any) -> str:
    """The name a topic section is cached and timed under: ``module.function``."""
    return f"{section.__module__.rsplit('.', 1)[-1]}.{section.__qualname__}"


NOT_COMPUTED = "Section not computed"
"""What a topic section says in place of its content when a guard refused its work (the report lists it)."""


def run_topic(out: str, quick: bool, paper: str, index: int, records: list[dict[str, Any]], enabled: bool) -> str:
    """The markdown of the paper's ``index``-th topic section (cached in OUT/.cache). Work that a guard refuses
    (memory, time: :mod:`attnsim.verify.limits`) leaves the section saying so instead of ending the report, and
    nothing is cached, so a rerun with a higher limit computes it."""
    section = paper_sections(paper)[index]
    try:
        return cached_section(Path(out), section_name(section), quick, records,
                              lambda: section(records, Path(out), quick), enabled=enabled and section not in UNCACHED)
    except ResumableError:
        raise
    except (AttnsimError, MemoryError) as exc:
        why = str(exc) if isinstance(exc, AttnsimError) else out_of_memory().removeprefix("error: ")
        return f"### {section_name(section)}\n\n**{NOT_COMPUTED}:** {why}\n"


def section_chunk(jobs: list[Job], _cache: str | None = None) -> list[tuple[str, Any, str, float]]:
    """A task: (kind, claim id or (paper, index), markdown, seconds) of each job."""
    from attnsim.verify.report.claim_page import claim_sections

    done = []
    for kind, paper, which, inputs in jobs:
        start = time.perf_counter()
        if kind == "claim":
            ((_, md),) = claim_sections([inputs["claim"]])
            done.append((kind, which, md, time.perf_counter() - start))
        else:
            md = run_topic(inputs["out"], inputs["quick"], paper, which, inputs["records"], inputs["enabled"])
            done.append((kind, (paper, which), md, time.perf_counter() - start))
    return done


def topic_jobs(papers: list[str], out: Path, quick: bool, records: list[dict[str, Any]], enabled: bool,
               where: str) -> Iterator[Job]:
    """The topic sections of ``papers`` that run ``where`` (:func:`attnsim.verify.report.sections.placement`:
    ``pool``, ``local`` or ``alone``), as jobs."""
    for paper in papers:
        mine = [r for r in records if r["claim"].startswith(paper + ".")]
        for index, section in enumerate(paper_sections(paper)):
            if placement(section) == where:
                yield "topic", paper, index, {"out": str(out), "quick": quick, "records": mine, "enabled": enabled}
