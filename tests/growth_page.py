"""The page docs/growth.md and how its formulas are read, shared by the files that check it
(tests/test_doc_growth.py: the rules, curvature, frozen growth; tests/test_doc_growth_sweeps.py: bounds in a
parameter other than N, the growth twins, eta and the sweeps' figures)."""

from __future__ import annotations

import re

import sympy as sp
from doc_page import Page
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_multiplication_application,
    parse_expr,
    standard_transformations,
)

_PAGE = Page("growth.md")
said = _PAGE.said
WORDS = {"two": 2, "three": 3, "four": 4, "five": 5}


def expr(text: str) -> sp.Expr:
    """A formula as the page writes it (``^``, implicit products, ``ln``, ``eps'``)."""
    text = re.sub(r"\bceil\b", "ceiling", re.sub(r"\bln\b", "log", text.replace("eps'", "eps1")))
    text = text.replace("−", "-").replace("ε", "eps").replace("²", "^2")
    names = {n: sp.Symbol(n, positive=True) for n in re.findall(r"[A-Za-z_]\w*", text) if n not in
             ("log", "exp", "ceiling", "sqrt")}
    return parse_expr(text, local_dict=names, transformations=standard_transformations
                      + (implicit_multiplication_application, convert_xor))


def same(page: str, code: str, **subs: str) -> bool:
    """Whether a page formula equals a paper_refs formula (with ``subs`` put into the latter)."""
    a, b = expr(page), expr(code)
    b = b.subs({sp.Symbol(k, positive=True): expr(v) for k, v in subs.items()})
    return sp.simplify(a - b) == 0
