"""LaTeX output shared by the report's ``tables/*.tex`` and ``attnsim bounds --format tex``."""

from __future__ import annotations

_TEX = {"\\": r"\textbackslash{}", "_": r"\_", "&": r"\&", "%": r"\%", "#": r"\#", "$": r"\$",
        "^": r"\^{}", "{": r"\{", "}": r"\}", "~": r"\~{}"}


def tex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped, for use outside math mode."""
    return "".join(_TEX.get(ch, ch) for ch in text)
