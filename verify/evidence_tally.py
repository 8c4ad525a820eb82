"""How many of a paper's claims rest on independent evidence: as their checkers declare it now, and as the records
said at an earlier commit (``attnsim claims`` prints both).

The figure *before* is measured, not written down: :func:`records_at` exports the repository at a commit
(``git archive``), imports that tree's own attnsim from a temporary folder (no install) in a fresh interpreter,
runs each of the paper's checkers at the first point of its quick grid and keeps the evidence its record says.
``python -m attnsim.verify.evidence_tally`` does this at the parent of the commit that added the torch reference
(``verify/tint_torch.py``: the first independent reference of TinT's SGD step and modules) and writes
:data:`BEFORE_FILE`, which ``attnsim claims`` reads; a test holds the file to that commit and to its own rows.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

BEFORE_FILE = Path(__file__).with_name("evidence_before.json")
FIRST_REFERENCE = "verify/tint_torch.py"
"""The file whose first commit brought TinT's first reference that shares no code with the construction."""
PACKAGES = {"sim": "sim", "theory": "theory", "verify": "verify", "paper_refs": "paper_refs"}
"""The repository's folders as attnsim's subpackages (pyproject's package-dir; ``_pkg`` is attnsim itself)."""

# Run inside the exported tree's interpreter: only the registry, check and paper_refs API every commit has.
_RUN = """
import json, sys
from attnsim.paper_refs import load
from attnsim.verify.check import run_check
from attnsim.verify.registry import all_checkers
checkers, out = all_checkers(), {}
for c in load(sys.argv[1]).claims:
    chk = checkers.get(c.id)
    if chk is None:
        continue
    point = dict(chk.grid(True)[0])
    numerics, seed = point.pop("numerics", None), point.pop("seed", 0)
    r = run_check(c.id, point, numerics, seed)
    out[c.id] = {"evidence": r["evidence"], "verdict": r["verdict"]}
print(json.dumps(out))
"""


def declared(paper: str) -> dict[str, str | None]:
    """Claim id -> the evidence its checker declares (None: declared by no checker), for the runnable claims."""
    from attnsim.paper_refs import load
    from attnsim.verify.registry import all_checkers

    checkers = all_checkers()
    return {c.id: checkers[c.id].evidence for c in load(paper).claims if c.id in checkers}


def tally(evidence: dict[str, Any]) -> dict[str, int]:
    """``{"independent": k, "runnable": n, ...}``: rows by evidence kind (None counted as ``undeclared``)."""
    kinds = Counter("undeclared" if e is None else e for e in evidence.values())
    return {**kinds, "runnable": len(evidence)}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def before_commit(repo: Path) -> str:
    """The parent of the commit that added :data:`FIRST_REFERENCE` (the last commit without it)."""
    added = _git(repo, "log", "--diff-filter=A", "--format=%H", "--", FIRST_REFERENCE).splitlines()[-1]
    return _git(repo, "rev-parse", f"{added}^")


def records_at(repo: Path, commit: str, paper: str) -> dict[str, dict[str, str]]:
    """Each runnable claim's record evidence and verdict at ``commit`` (its own code, run in a fresh interpreter)."""
    with tempfile.TemporaryDirectory() as tmp:
        tree, site = Path(tmp) / "tree", Path(tmp) / "site"
        archive = subprocess.run(["git", "-C", str(repo), "archive", commit], check=True, capture_output=True).stdout
        tree.mkdir()
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        pkg = site / "attnsim"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_bytes((tree / "_pkg" / "__init__.py").read_bytes())
        for name, folder in PACKAGES.items():
            (pkg / name).symlink_to(tree / folder, target_is_directory=True)
        env = {**os.environ, "PYTHONPATH": str(site), "OMP_NUM_THREADS": "1"}
        out = subprocess.run([sys.executable, "-c", _RUN, paper], check=True, capture_output=True, text=True,
                             env=env, cwd=tmp).stdout
    return json.loads(out.strip().splitlines()[-1])


def write_before(repo: Path, paper: str = "tint", path: Path = BEFORE_FILE) -> dict[str, Any]:
    """Measure the records at :func:`before_commit` and write them to ``path``."""
    commit = before_commit(repo)
    rows = records_at(repo, commit, paper)
    body = {"paper": paper, "commit": commit, "subject": _git(repo, "log", "-1", "--format=%s", commit),
            "why": f"the parent of the commit that added {FIRST_REFERENCE}",
            "command": "python -m attnsim.verify.evidence_tally", "records": rows,
            "tally": tally({k: v["evidence"] for k, v in rows.items()})}
    path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    return body


def before(paper: str) -> dict[str, Any] | None:
    """The stored records before (None when :data:`BEFORE_FILE` is not about ``paper``)."""
    if not BEFORE_FILE.exists():
        return None
    body = json.loads(BEFORE_FILE.read_text(encoding="utf-8"))
    return body if body.get("paper") == paper else None


def summary(paper: str) -> str | None:
    """One line: independent rows now (declared) beside the stored count before; None without a stored count."""
    now = tally(declared(paper))
    then = before(paper)
    if then is None:
        return None
    t = then["tally"]
    return (f"{paper}: {now.get('independent', 0)} of {now['runnable']} runnable claims rest on independent evidence "
            f"(declared by their checkers); before the first independent reference: {t.get('independent', 0)} of "
            f"{t['runnable']} (records at commit {then['commit'][:7]}, {then['why']}; "
            f"{BEFORE_FILE.name}, written by `{then['command']}`)")


def main(argv: list[str] | None = None) -> None:
    """Write :data:`BEFORE_FILE` from the repository at ``--repo`` (default: the current folder)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default=".")
    ap.add_argument("--paper", default="tint")
    args = ap.parse_args(argv)
    body = write_before(Path(args.repo), args.paper)
    print(json.dumps(body["tally"]))


if __name__ == "__main__":
    main()
