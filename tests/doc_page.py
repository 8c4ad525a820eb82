"""A page of docs/ as the tests that hold its figures to the code read it: its text, the text with its line breaks
collapsed (a sentence runs over lines), what a pattern finds in it, the rows of a markdown table, and whether a
value is a figure as the page rounds it."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def shown(x: float, text: str) -> bool:
    """Whether ``x`` is the figure ``text`` to the significant digits the page gives (1.0645, 0.0051, 3.3e6, 4096,
    −0.25); a figure written 0 is exactly 0."""
    text = text.replace("−", "-")
    mantissa = text.partition("e")[0]
    digits = len(mantissa.lstrip("-0.").replace(".", ""))
    return x == 0 if not digits else float(f"{x:.{digits}g}") == float(text)


def collapsed(text: str) -> str:
    """``text`` with its line breaks and runs of spaces as single spaces."""
    return " ".join(text.split())


class Page:
    """docs/``name``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.text = (DOCS / name).read_text()
        self.flat = collapsed(self.text)

    def find(self, pattern: str, text: str | None = None) -> re.Match:
        """The first match of ``pattern`` in the collapsed page (or in ``text``); the page no longer saying it fails."""
        m = re.search(pattern, self.flat if text is None else text)
        assert m, f"docs/{self.name} no longer says {pattern!r}"
        return m

    def said(self, pattern: str) -> tuple[str, ...]:
        """The groups of ``pattern`` where it first matches the collapsed page."""
        return self.find(pattern).groups()

    def table(self, header: str) -> list[list[str]]:
        """The cells of each row of the markdown table whose header line starts with ``header``."""
        rows = []
        for line in self.text[self.text.index(header):].splitlines()[2:]:
            if not line.startswith("|"):
                break
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        return rows
