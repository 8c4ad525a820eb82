"""One experiment end to end, as the command line and the report run it: train, evaluate, draw, compare (where the
theory meets the Match2 experiment is :mod:`.definition`, why Algorithm 1 errs where the softmax does not is
:mod:`.diagnosis`).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

from rich.console import Console

from attnsim.verify.experiments import compare, figures, induction, match2

FIGURES = {match2.ID: ("fig1a_match2.png", figures.match2_figure),
           induction.ID: ("fig1b_induction.png", figures.induction_figure)}


def config_for(experiment: str, *, quick: bool, steps: int | None, runs: int | None, tests: int | None,
               seed: int, betas: tuple[float, ...] | None = None, families: tuple[str, ...] | None = None) -> Any:
    """The experiment's configuration: the default (or quick) one with the given overrides (``betas``: Match2's
    temperatures; they must include the figure's; ``families``: Algorithm 1's hash families)."""
    base = {match2.ID: (match2.Match2Config(), match2.QUICK), induction.ID: (induction.InductionConfig(),
                                                                             induction.QUICK)}[experiment]
    config = base[1] if quick else base[0]
    changes = {"steps": steps, "runs": runs, "tests": tests, "betas": betas, "families": families}
    return replace(config, seed=seed, **{k: v for k, v in changes.items() if v is not None})


def run_experiment(experiment: str, config: Any, out: Path, console: Console | None, *,
                   reuse: bool = True, figures_to: Path | None = None) -> dict[str, Any]:
    """Run (or read back) ``experiment`` at ``config`` with its cache under ``out``; draw its figure into
    ``figures_to`` (default ``out``); return the result with its comparison rows and the figure's path.
    torch's global settings (threads, deterministic kernels) are as they were afterwards."""
    root = Path(out) / "cache"
    module = match2 if experiment == match2.ID else induction
    with torch_settings_kept():
        result = module.run(config, root, console, reuse=reuse)
    name, draw = FIGURES[experiment]
    figure = draw(result, Path(figures_to or out) / name)
    rows = compare.match2_rows(result) if experiment == match2.ID else compare.induction_rows(result)
    return {**result, "figure": str(figure), "comparison": [r.__dict__ for r in rows]}


@contextmanager
def torch_settings_kept() -> Iterator[None]:
    """Training sets one thread and deterministic kernels for the whole process; put them back afterwards."""
    import torch

    threads, strict = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(strict)


def comparison_table(result: dict[str, Any]) -> list[list[str]]:
    """The comparison rows as table cells."""
    return [compare.Row(**r).cells() for r in result["comparison"]]
