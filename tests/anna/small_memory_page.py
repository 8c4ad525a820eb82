"""The page docs/anna_small_memory.md and the readers its two test files share: counts, rounded figures
and percentages as the page writes them, and the defaults and memories of the claims it describes."""

from __future__ import annotations

import re

from doc_page import Page

from attnsim.paper_refs import get as get_claim
from attnsim.theory.formulas import as_number, evaluate
from attnsim.verify.registry import get_checker

_PAGE = Page("anna_small_memory.md")
said = _PAGE.said
table = _PAGE.table


def num(text: str) -> int:
    """A count as the page writes it (14,887)."""
    return int(text.replace(",", ""))


def nums(text: str) -> list[int]:
    return [num(x) for x in re.findall(r"\d[\d,]*", text)]


def percent(x: float, text: str) -> bool:
    """Whether the fraction ``x`` is ``text`` percent to the decimals the page gives."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    return round(100 * x, decimals) == float(text)


WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "nine": 9}


def scientific(text: str) -> tuple[float, int]:
    """A figure written as −7·10⁻⁵ (or plain), and its significant digits."""
    plain = text.replace("−", "-").translate(str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-"))
    mantissa, _, exponent = plain.partition("·10")
    digits = len(mantissa.lstrip("-").lstrip("0.").replace(".", ""))
    return float(f"{mantissa}e{exponent or 0}"), digits


def defaults(claim: str) -> dict:
    return {p.name: p.default for p in get_checker(claim).params}


def memory(claim: str, **params) -> int:
    """s = ceil(s_scale N^eps') from the claim's definitions."""
    return int(as_number(evaluate("s", get_claim(claim).definitions, {**defaults(claim), **params})))
