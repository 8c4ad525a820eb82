"""A new paper touches few places: the lists that name packages, modules and papers are derived, or
checked complete here."""

from __future__ import annotations

import tomllib
from pathlib import Path

from attnsim.paper_refs import load, papers
from attnsim.verify.registry import all_checkers

ROOT = Path(__file__).resolve().parents[1]


def _modules(folder: str, package: str, skip: set[str]) -> set[str]:
    names = {p.stem for p in (ROOT / folder).glob("*.py")} | {p.name for p in (ROOT / folder).iterdir()
                                                           if (p / "__init__.py").is_file()}
    return {f"{package}.{n}" for n in names - {"__init__"} - skip}


def _contract(name_start: str) -> set[str]:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (c,) = [c for c in cfg if c["name"].startswith(name_start)]
    return set(c["source_modules"])


def test_the_cli_contract_lists_every_verify_module() -> None:
    missing = _modules("verify", "attnsim.verify", {"cli"}) - _contract("verify imports the CLI")
    assert not missing, f"add {sorted(missing)} to the source modules of this contract in pyproject.toml"


def test_the_torch_contract_lists_every_other_sim_module() -> None:
    missing = _modules("sim", "attnsim.sim", {"torch"}) - _contract("the torch wing is optional")
    assert not missing, f"add {sorted(missing)} to the source modules of this contract in pyproject.toml"


def test_papers_come_from_paper_refs_and_every_claim_without_a_checker_says_why() -> None:
    ids = papers()
    assert ids[:3] == ("two_heads", "anna", "tint")
    checkers = all_checkers()
    silent = [c.id for p in ids for c in load(p).claims if c.id not in checkers
              and not (c.no_checker or c.extra.get("restated_as") or c.extra.get("out_of_scope"))]
    assert not silent, f"claims without a checker and without a reason: {silent}"


def test_a_claim_with_a_checker_has_no_text_saying_why_it_has_none() -> None:
    """``no_checker`` explains a missing checker; once a checker exists the text is stale and must go."""
    checkers = all_checkers()
    stale = [c.id for p in papers() for c in load(p).claims if c.id in checkers and c.no_checker]
    assert not stale, f"claims with a checker and a no_checker text: {stale}"
