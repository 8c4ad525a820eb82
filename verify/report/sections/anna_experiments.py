"""The report's sections on ANNA's experiments (§6, App. G): Fig. 1a (Match2) and Fig. 1b (induction heads).

Each section shows the stored result of the largest budget that ``attnsim experiment`` has computed under
``attnsim-experiments/`` (read back verified, never recomputed here; the default budget first); otherwise it
runs the experiment at its tiny quick budget, which takes a few CPU seconds and learns nothing, and says so.
With torch absent it says why it is skipped.
"""

from __future__ import annotations

import json
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
    stored = _largest_stored(experiment, default)
    if stored is not None:
        result = run_experiment(experiment, stored, DEFAULT_OUT, None, figures_to=plots)
        which = "the default budget" if stored == default else "not the default budget"
        source = (f"Read back from the verified result that `attnsim experiment {experiment}` stored, "
                  f"{which} ({_budget(result)}; computed in {result['seconds']} s, {result['cpu_seconds']} CPU s).")
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


def _largest_stored(experiment: str, default: Any) -> Any:
    """The configuration of the largest result stored under ``attnsim-experiments/`` for ``experiment`` whose entry
    verifies (the default's first, then the most training steps, runs and tests), or None."""
    from dataclasses import fields, replace

    found = []
    for path in sorted((cache_root(DEFAULT_OUT) / "results").glob(f"{experiment}-*.json")):
        try:
            asked = json.loads(path.read_text())["key"]["config"]
            config = replace(default, **{f.name: tuple(v) if isinstance(v, list) else v
                                         for f in fields(default) for k, v in asked.items() if k == f.name})
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if load_result(cache_root(DEFAULT_OUT), experiment, config.as_dict()) is not None:
            found.append(config)
    if not found:
        return None
    return max(found, key=lambda c: (c == default, c.steps, c.runs, c.tests))


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
