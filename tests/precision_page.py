"""The page docs/precision.md and the runs its figures come from, shared by the files that read it
(tests/test_doc_precision.py: formats, certificates, the rebuttal rows and the decodes; and
tests/test_doc_precision_agreement.py: the cases of its "Agreement" section and the precision study)."""

from __future__ import annotations

from functools import cache

import pytest
from doc_page import Page

from attnsim.verify.check import run_check
from attnsim.verify.registry import UsageError

_PAGE = Page("precision.md")
said = _PAGE.said
table = _PAGE.table


def f1(x: float) -> str:
    return f"{x:.1f}"


def num(text: str) -> float:
    """A figure as the page writes it (a minus sign as −)."""
    return float(text.replace("−", "-"))


@cache
def record(claim: str, numerics: str | None = None, seed: int = 0, min_bits: float | None = None,
           **params) -> dict:
    """One check's record, run once per file (read-only)."""
    return run_check(claim, params, numerics, seed, min_bits)


def refusal(claim: str, numerics: str | None, seed: int = 0, param: str = "numerics", **params) -> str:
    """The one line a check is refused with, which must name ``param``."""
    with pytest.raises(UsageError) as e:
        run_check(claim, params, numerics, seed)
    assert e.value.param == param
    return str(e.value)
