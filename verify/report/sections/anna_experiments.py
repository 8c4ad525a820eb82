"""The report's sections on ANNA's experiments (§6, App. G): Fig. 1a (Match2) and Fig. 1b (induction heads).

Each section shows the stored result of the experiment's default budget when ``attnsim experiment`` has
computed one under ``attnsim-experiments/`` (read back verified, never recomputed here); otherwise it runs the
experiment at its tiny quick budget, which takes a few CPU seconds and learns nothing, and says so. With
torch absent it says why it is skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnsim.verify.experiments import torch_missing
from attnsim.verify.experiments.compare import HEADER, Row
from attnsim.verify.experiments.store import DEFAULT_OUT, cache_root, load_result

TITLES = {"anna.match2": "Match2 surrogate through Algorithm 1 (Fig. 1a, App. G.1)",
          "anna.induction": "Induction heads through Algorithm 1 in both layers (Fig. 1b, App. G.2)"}


def _table(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    return lines + ["| " + " | ".join(c.replace("|", "\\|") for c in Row(**r).cells()) + " |" for r in rows]


def _section(experiment: str, out_dir: Path) -> str:
    head = [f"### {TITLES[experiment]}", ""]
    missing = torch_missing()
    if missing is not None:
        return "\n".join(head + [f"_Skipped: {missing}._", ""])
    from attnsim.verify.experiments.command import config_for, run_experiment

    default = config_for(experiment, quick=False, steps=None, runs=None, tests=None, seed=0)
    plots = Path(out_dir) / "plots"
    if load_result(cache_root(DEFAULT_OUT), experiment, default.as_dict()) is not None:
        result = run_experiment(experiment, default, DEFAULT_OUT, None, figures_to=plots)
        source = (f"The default budget ({_budget(result)}), read back from the verified result that "
                  f"`attnsim experiment {experiment}` stored (computed in {result['seconds']} s, "
                  f"{result['cpu_seconds']} CPU s).")
    else:
        quick = config_for(experiment, quick=True, steps=None, runs=None, tests=None, seed=0)
        result = run_experiment(experiment, quick, Path(out_dir) / ".experiments", None, reuse=False,
                                figures_to=plots)
        source = (f"**Tiny budget** ({_budget(result)}): no stored result of the default budget was found, so "
                  f"this checks the whole path and learns nothing. `attnsim experiment {experiment}` computes "
                  f"the default budget; this section then shows it.")
    figure = Path(result["figure"])
    return "\n".join(head + [source, "", f"![{TITLES[experiment]}](plots/{figure.name})", ""]
                     + _table(result["comparison"]) + [""])


def _budget(result: dict[str, Any]) -> str:
    c = result["config"]
    steps = result.get("steps") or max(v["steps"] for v in result["betas"].values())
    return f"{steps} steps, {c['runs']} run(s) × {c['tests']} test sequences"


def match2_section(records: list[dict[str, Any]], out_dir: Any, quick: bool) -> str:
    """Fig. 1a and the Match2 comparison."""
    return _section("anna.match2", Path(out_dir))


def induction_section(records: list[dict[str, Any]], out_dir: Any, quick: bool) -> str:
    """Fig. 1b and the induction-heads comparison."""
    return _section("anna.induction", Path(out_dir))
