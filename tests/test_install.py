"""Packaging: every package folder is mapped, and a non-editable install imports and finds the TOML."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

from limits import limit

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_listed():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    dirs = cfg["package-dir"]
    found = set()
    for pkg, folder in dirs.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([pkg, *rel.parts]) if rel.parts else pkg)
    assert found <= listed, f"unlisted packages: {sorted(found - listed)}"


def test_non_editable_install_imports_everything(tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    # The dependencies come from the environment running the tests (a .pth line adds its
    # site-packages after the new venv's own); attnsim itself must come from the new install.
    inner_site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                check=True, capture_output=True, text=True).stdout.strip()
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
             *(p for p in sys.path if p.endswith("site-packages"))}
    Path(inner_site, "outer_env.pth").write_text("\n".join(sorted(outer)) + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", str(ROOT)], check=True, env=env,
                   timeout=limit(600), capture_output=True)
    code = ("import attnsim.sim.numerics, attnsim.sim.two_heads, attnsim.sim.anna, attnsim.sim.tint, "
            "attnsim.theory, attnsim.verify.cli, attnsim.paper_refs as p, attnsim;"
            f"assert attnsim.__file__.startswith({str(env_dir)!r}), attnsim.__file__;"
            "print(len(p.load('two_heads').claims))")
    out = subprocess.run([str(py), "-c", code], check=True, capture_output=True, text=True, cwd=tmp_path, env=env)
    assert int(out.stdout.strip()) >= 14
