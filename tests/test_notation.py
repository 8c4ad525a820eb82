"""One notation: ``claims``, ``bounds`` and the report print every formula through theory/notation.py."""

from __future__ import annotations

import re

from attnsim.paper_refs import load
from attnsim.theory import notation
from attnsim.theory.catalog import catalog


def test_symbols_flags_and_numbers_print_as_the_papers_write_them() -> None:
    assert notation.bound_text("n**2*H*L/(Hp*Lp)", "two_heads") == "O(H·L·n²/(H′·L′))"
    assert notation.text_cases("L*ceiling((2 - fused)*H*n**2/(Hp*Lp))", "two_heads") == (
        "L·⌈2·H·n²/(H′·L′)⌉ (paper scheme); L·⌈H·n²/(H′·L′)⌉ (fused scheme)")
    assert notation.latex("N**eps1", "anna") == r"N^{\varepsilon'}"
    assert "fused" not in notation.latex_cases("2 - fused", "two_heads").replace("fused scheme", "")
    assert notation.at("2 - fused", {"fused": True}, "two_heads") == "1"
    assert notation.number(547034, "bytes") == "534 KiB" and notation.number(20 / 3) == "6.67"
    assert notation.number(-2.841889850887112, "bits") == "-2.8 bits" and notation.number(None) == "—"


def test_claims_bounds_and_report_share_one_notation() -> None:
    from attnsim.verify.cli.bounds import render_md
    from attnsim.verify.cli.claims import claim_rows
    from attnsim.verify.report.claim_page import theory_lines

    rows = catalog("two_heads")
    md = render_md(rows)
    claims = {r["id"]: r for r in claim_rows("two_heads")}
    for summary in rows:
        for line in theory_lines(summary):  # the report's theory block is the bounds table, line for line
            assert line in md
        for name, t in summary["resources"].items():
            assert claims[summary["id"]]["text"][name]["bound"] == t["text"].get("bound")
    table = [line for line in md.splitlines() if line.startswith("| ")]
    assert table and not any(re.search(r"\b(Hp|Lp|\*\*)\b|\*", line) for line in table)
    assert not any(re.search(r"\bfused\b(?! scheme)", line) for line in table)


def test_every_paper_names_its_flags() -> None:
    assert load("two_heads").symbols["fused"].flag == ("paper scheme", "fused scheme")
    assert load("tint").symbols["rf"].flag is not None and load("anna").symbols["eps1"].text == "ε′"
