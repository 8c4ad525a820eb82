"""The README's "More documentation" list names every page under docs/, and every page it names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _listed() -> set[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## More documentation", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^- `(docs/[^`]+\.md)`", section, flags=re.M))


def test_the_readme_lists_every_page_under_docs_and_only_pages_that_exist() -> None:
    pages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md")}
    listed = _listed()
    assert pages - listed == set(), f"pages the README's list leaves out: {sorted(pages - listed)}"
    assert listed - pages == set(), f"pages the README names that do not exist: {sorted(listed - pages)}"
