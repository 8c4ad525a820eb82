"""The layering of the house: import-linter's contracts (pyproject.toml) and the CLI's isolation."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from limits import limit

ROOT = Path(__file__).resolve().parents[1]


def _installed_tree(tmp: Path) -> Path:
    """The ``attnsim`` namespace laid out as one folder (what a non-editable install holds)."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    top = tmp / "attnsim"
    for pkg, folder in sorted(cfg.items(), key=lambda kv: kv[0].count(".")):
        dest = tmp.joinpath(*pkg.split("."))
        shutil.copytree(ROOT / folder, dest, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.toml", "*.md"))
    return top


def test_import_contracts_hold(tmp_path: Path) -> None:
    _installed_tree(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    p = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=limit(300),
    )
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "broken" in out and " 0 broken" in out, out


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_nothing_outside_the_cli_imports_it() -> None:
    offenders = []
    for folder in ("sim", "theory", "verify", "paper_refs", "_pkg", "examples", "benchmarks"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.is_relative_to(ROOT / "verify" / "cli"):
                continue
            if any(n == "attnsim.verify.cli" or n.startswith("attnsim.verify.cli.") for n in _imports(path)):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"modules outside verify/cli/ import it: {offenders}"
