"""Per-topic report material: tables and plots beyond the per-claim records.

Each section is a function ``section(records, out_dir, quick) -> markdown`` of one paper's records; it
may write plots under ``out_dir / "plots"`` and tables under ``out_dir / "tables"``. The order in which
the sections appear after a paper's claims is set here, in :data:`SECTIONS`, and nowhere else; a paper
another package registers lists its own in ``[paper] sections`` (:func:`paper_sections`).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Callable

from attnsim.verify.report.sections import (
                                            anna,
                                            anna_experiments,
                                            anna_mpc_to_anna,
                                            anna_small_memory,
                                            cost_model,
                                            rebuttal_memory,
                                            tint,
                                            tint_rebuttal,
                                            torch_models,
                                            two_heads_approx,
                                            two_heads_masked,
                                            two_heads_precision,
                                            two_heads_proofs,
                                            two_heads_rebuttal,
)

Section = Callable[[list[dict[str, Any]], Path, bool], str]

SECTIONS: dict[str, tuple[Section, ...]] = {
    "two_heads": (
        two_heads_masked.section,
        two_heads_proofs.proofs_section,
        two_heads_approx.approximate_section,
        two_heads_precision.precision_section,
        torch_models.torch_section,
        cost_model.cost_model_section,
        two_heads_rebuttal.questions_from_review,
        rebuttal_memory.two_heads_memory_section,
    ),
    "anna": (
        anna.anna_section,
        anna.eta_sweep_section,
        anna_mpc_to_anna.anna_mpc_to_anna_section,
        anna_small_memory.anna_small_memory_section,
        rebuttal_memory.anna_memory_section,
        anna_experiments.match2_section,
        anna_experiments.induction_section,
    ),
    "tint": (
        tint.tint_report,
        tint_rebuttal.tint_review_report,
    ),
}

ALONE: tuple[Section, ...] = (cost_model.cost_model_section,)
"""Sections that time work: the report runs them last, in its own process, with nothing else of it running."""

IN_PROCESS: tuple[Section, ...] = (torch_models.torch_section, anna_experiments.match2_section,
                                   anna_experiments.induction_section)
"""Sections that run torch: in the report's own process, once no worker will be forked from it any more (a
process forked after torch's OpenMP threads started waits forever at their barrier, so a pool worker forked
from a process that had used torch, as a test's is, must not run it)."""


UNCACHED: tuple[Section, ...] = (anna_experiments.match2_section, anna_experiments.induction_section)
"""Sections whose page depends on files outside the report (results ``attnsim experiment`` stored): computed
on every report, never read from the report's section cache, so a result stored since is never hidden."""


def placement(section: Section) -> str:
    """Where the report runs ``section``: ``alone`` (:data:`ALONE`), ``local`` (:data:`IN_PROCESS`) or ``pool``
    (the executor's workers)."""
    return "alone" if section in ALONE else "local" if section in IN_PROCESS else "pool"


def paper_sections(paper: str) -> tuple[Section, ...]:
    """The sections of ``paper``: attnsim's own (:data:`SECTIONS`), then those its ``[paper] sections``
    names as ``module:function``."""
    from attnsim.paper_refs import load

    own = [getattr(importlib.import_module(m), f) for m, _, f in (s.partition(":") for s in load(paper).sections)]
    return SECTIONS.get(paper, ()) + tuple(own)
