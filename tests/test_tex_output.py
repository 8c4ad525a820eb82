"""``--format tex`` is ASCII LaTeX that a LaTeX parser reads without error (``ψ`` written as ``\\psi``)."""

from __future__ import annotations

import pytest
from cli_run import invoke
from pylatexenc.latexwalker import LatexWalker, LatexWalkerParseError

from attnsim.verify.cli.options import ascii_tex, render_rows


def parses(tex: str) -> int:
    nodes, _, _ = LatexWalker(tex, tolerant_parsing=False).get_latex_nodes()
    return len(nodes)


def test_the_parser_rejects_broken_latex() -> None:
    with pytest.raises(LatexWalkerParseError):
        parses(r"\begin{align*} x \end{cases}")


def test_bounds_tex_is_ascii_and_parses(capfd) -> None:
    code, out, err = invoke(["bounds", "--paper", "two_heads", "--format", "tex"], capfd)
    assert code == 0, err
    assert out.isascii() and r"\ensuremath{\psi}" in out  # the layer MLP's cases name psi
    assert parses(out) > 10


def test_every_tex_table_is_ascii() -> None:
    tex = render_rows(("claim", "bound"), [("§2.4", "O(H′·n²)")], "tex")
    assert tex.isascii() and parses(tex) and r"\textsection" in tex
    assert ascii_tex("ψ ≤ 2") == r"\ensuremath{\psi} \ensuremath{\leq} 2"
