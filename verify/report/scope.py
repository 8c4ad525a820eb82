"""What a report covers, said at its top and kept beside it.

:func:`sweep_line` opens the page with the sweep it ran: quick or full, the papers, the sizes and seeds of its
checks, the growth sweeps, and the commit and code version that ran them. :func:`claim_folder` keeps the scope (the
papers) in ``OUT/report-scope.json`` and refuses, with one line, to write a report into a folder that holds a report
of another scope, unless forced: ``report --paper two_heads --out DIR`` must not silently replace a full report.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Sequence

from attnsim import __version__
from attnsim.verify.registry import UsageError
from attnsim.verify.sweep import atomic_write, code_version

MARKER = "report-scope.json"


def _scope(papers: Sequence[str], paper: str | None) -> dict[str, Any]:
    return {"papers": sorted(papers), "paper_option": paper}


def _said(scope: dict[str, Any]) -> str:
    return f"--paper {scope['paper_option']}" if scope.get("paper_option") else "every paper"


def claim_folder(out: Path, papers: Sequence[str], paper: str | None, force: bool) -> None:
    """Refuse (a usage error naming ``--out``) when ``out`` holds a report of another scope, unless ``force``;
    then record this report's scope there."""
    mine, marker = _scope(papers, paper), Path(out) / MARKER
    if marker.is_file() and not force:
        try:
            theirs = json.loads(marker.read_text())
        except (OSError, ValueError):
            theirs = {"papers": ["?"]}
        if theirs.get("papers") != mine["papers"]:
            raise UsageError(f"--out: {out} holds a report of {_said(theirs)}; this one is of {_said(mine)}: write "
                             "it to another folder, or give --force to replace it")
    Path(out).mkdir(parents=True, exist_ok=True)
    atomic_write(marker, json.dumps(mine))


def commit() -> str:
    """The git commit of the source tree that runs (with ``+ uncommitted changes`` when it has any), or why not."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, timeout=20)
        if head.returncode != 0:
            return "not a git checkout"
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "git not available"
    return head.stdout.strip() + (" + uncommitted changes" if dirty else "")


def _range(values: Sequence[Any]) -> str:
    vs = sorted(set(values))
    return "—" if not vs else f"{vs[0]}" if len(vs) == 1 else f"{vs[0]}…{vs[-1]} ({len(vs)} values)"


def sweep_line(quick: bool, records: Sequence[dict[str, Any]], growth_points: int, papers: Sequence[str],
               paper: str | None) -> str:
    """The page's first line: which sweep this is (quick or full), over what, at which commit."""
    ns = [r["params"]["N"] for r in records if isinstance((r.get("params") or {}).get("N"), int)]
    seeds = sorted({int(r.get("seed") or 0) for r in records})
    kind = "quick (`attnsim report --quick`)" if quick else "full (`attnsim report`)"
    return (f"**Sweep:** {kind}{f' --paper {paper}' if paper else ''}: papers {', '.join(papers)}; "
            f"{len(records)} checks at N = {_range(ns)}, seed{'s' * (len(seeds) != 1)} "
            f"{', '.join(map(str, seeds)) or '—'}; {growth_points} points of growth sweeps; commit {commit()}, "
            f"code version {code_version()}, attnsim {__version__}.")
