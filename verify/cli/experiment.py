"""``attnsim experiment ID``: ANNA's experiments (§6, App. G) reproduced: train, run Algorithm 1, compare."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from attnsim.verify.cli.options import (
    FORMAT_KINDS,
    check_format,
    check_json_path,
    emit,
    format_option,
    json_option,
    quick_option,
    render_rows,
    seed_option,
    write_json,
)
from attnsim.verify.experiments import EXPERIMENTS, torch_missing
from attnsim.verify.registry import INT_MAX, UsageError

FORMATS = FORMAT_KINDS["rows"]


def register(app: typer.Typer) -> None:
    """Add the ``experiment`` command to ``app``."""
    @app.command()
    def experiment(
        name: str = typer.Argument(..., metavar="ID", help=f"one of: {', '.join(EXPERIMENTS)}"),
        steps: Optional[int] = typer.Option(None, "--steps", min=1, max=INT_MAX,
                                            help="training steps (default: anna.match2 the paper's 20,000; "
                                                 "anna.induction 3,000 of the paper's 400,000, lr 1e-3 after a "
                                                 "300-step warm-up)"),
        runs: Optional[int] = typer.Option(None, "--runs", min=1, max=1000,
                                           help="Algorithm 1 runs per grid cell (default: match2 10, induction 3)"),
        tests: Optional[int] = typer.Option(None, "--tests", min=4, max=100_000,
                                            help="test sequences (default: match2 256, induction 20)"),
        betas: Optional[str] = typer.Option(None, "--betas", metavar="B,B,...",
                                            help="anna.match2's temperatures (default 0.1,1,10; must include 0.1, "
                                                 "the figure's)"),
        lsh: Optional[str] = typer.Option(None, "--lsh", metavar="F,F",
                                          help="Algorithm 1's angular hash families: cross-polytope (Andoni et al. "
                                               "2015, the family the paper cites) and hyperplane (random "
                                               "hyperplanes, a name the paper also gives it); default: both"),
        seed: int = seed_option(),
        quick: bool = quick_option("a tiny budget that checks the whole path in seconds (learns nothing)"),
        out: Path = typer.Option(Path("attnsim-experiments"), "--out",
                                 help="the folder written: figure, and cache/ (checkpoints, results)"),
        fresh: bool = typer.Option(False, "--fresh", help="evaluate again even if a stored result answers this "
                                                          "configuration (training still resumes)"),
        fmt: str = format_option(FORMATS, "table"),
        json_out: Optional[str] = json_option(),
    ) -> None:
        """Train the softmax surrogate with torch on CPU (seeded, deterministic, resumable), run its weights with
        Algorithm 1 over the paper's grid, draw Fig. 1a or 1b and compare every number the paper states.

        Progress goes to stderr. A second run with the same settings reads the stored result back."""
        from attnsim.verify import guards

        if name not in EXPERIMENTS:
            raise UsageError(f"ID: unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
        check_format(fmt, FORMATS)
        check_json_path(json_out)
        guards.output_folder(out, "--out")
        missing = torch_missing()
        if missing is not None:
            raise UsageError(missing)
        if name == "anna.match2" and tests is not None and tests % 4:
            raise UsageError(f"--tests: Match2 test sets are balanced over four bins; need a multiple of 4, "
                             f"got {tests}")
        temperatures = _betas(betas, name)
        families = _families(lsh)
        from attnsim.verify.experiments.command import comparison_table, config_for, run_experiment

        start = time.perf_counter()
        config = config_for(name, quick=quick, steps=steps, runs=runs, tests=tests, seed=seed, betas=temperatures,
                            families=families)
        result = run_experiment(name, config, out, Console(stderr=True), reuse=not fresh)
        if fmt == "json":  # the whole result, as --json writes it
            import json

            emit(json.dumps(result, indent=2, default=str), json_out)
            write_json(result, json_out)
            return
        text = [_budget(result, quick), "",
                render_rows(["paper's statement", "paper", "ours", "verdict", "why"], comparison_table(result), fmt),
                ""]
        if name == "anna.match2":
            from attnsim.verify.experiments.definition import definition_lines, match2_definition, trained_model
            from attnsim.verify.experiments.diagnosis import match2_diagnosis

            result["definition"] = match2_definition(config, out)
            if result["definition"] is not None:
                text += definition_lines(result["definition"], config.figure_beta) + [""]
            model = trained_model(config, out)
            if model is not None:
                text += match2_diagnosis(model, config) + [""]
        text += [f"figure: {result['figure']}",
                f"took {time.perf_counter() - start:.0f} s here"
                + (" (result read back from the cache)" if result["from_cache"] else "")]
        emit("\n".join(text), json_out)
        write_json(result, json_out)


def _betas(text: Optional[str], name: str) -> tuple[float, ...] | None:
    """``--betas`` parsed: positive numbers including 0.1, for anna.match2 only."""
    if text is None:
        return None
    if name != "anna.match2":
        raise UsageError("--betas: only anna.match2 trains several temperatures")
    try:
        values = tuple(float(b) for b in text.split(","))
    except ValueError:
        raise UsageError(f"--betas: expected comma-separated numbers, got {text!r}") from None
    if not all(0 < b < float("inf") for b in values) or 0.1 not in values or len(set(values)) != len(values):
        raise UsageError(f"--betas: need distinct positive numbers including 0.1 (the figure's), got {text!r}")
    return values


def _families(text: Optional[str]) -> tuple[str, ...] | None:
    """``--lsh`` parsed: distinct names of :data:`~attnsim.verify.experiments.anna_layer.FAMILIES`."""
    if text is None:
        return None
    from attnsim.verify.experiments.anna_layer import FAMILIES

    names = tuple(f.strip() for f in text.split(","))
    if any(f not in FAMILIES for f in names) or len(set(names)) != len(names):
        raise UsageError(f"--lsh: expected distinct names among {', '.join(FAMILIES)}, got {text!r}")
    return names


def _budget(result: dict, quick: bool) -> str:
    """One line on what was trained and evaluated, and how long it took when computed."""
    c = result["config"]
    tiny = "QUICK (a tiny budget: it checks the path, it does not learn the task); " if quick else ""
    if result["experiment"] == "anna.match2":
        soft = ", ".join(f"β = {b}: {v['softmax_error']:.4f}" for b, v in result["betas"].items())
        steps = ", ".join(f"{v['steps']}" for v in result["betas"].values())
        return (f"{tiny}Match2: N = {c['N']}, M = {c['modulus']}, m = {c['width']}, {c['train_size']} examples, "
                f"steps {steps} per β; Algorithm 1 ({', '.join(c['families'])} LSH; {c['runs']} runs × "
                f"{c['tests']} test sequences); softmax "
                f"surrogate error {soft}; computed in {result['seconds']} s ({result['cpu_seconds']} CPU s)")
    return (f"{tiny}induction heads: N = {c['N']}, m = {c['width']}, β = {c['beta']:g}, {result['steps']} steps "
            f"(paper: 400,000), lr {c['lr']:g} after a {c.get('warmup', 0)}-step warm-up (paper: 0.01); "
            f"Algorithm 1 ({', '.join(c['families'])} LSH; {c['runs']} runs × {c['tests']} test sequences); "
            f"softmax surrogate error {result['softmax_error']:.3f}; computed in {result['seconds']} s "
            f"({result['cpu_seconds']} CPU s)")
