"""The check record as a typed model: what :func:`attnsim.check` returns and what every ``--json`` record follows.

:func:`attnsim.verify.check.run_check` builds a record as a plain dictionary (the cache, the sweeps and the
report keep it so); :class:`Record` is the same record with types, a JSON schema (:func:`record_schema`), a
short ``repr`` (claim, verdict, agreement in bits, counts against their exact formulas) and ``_repr_html_``
for notebooks. One encoding of ``error_bits`` everywhere: a float in Python, ``inf`` for outputs that are
equal (exact numerics); in JSON the same number, with ``inf`` written as the string ``"inf"`` (strict JSON
has no infinity, :mod:`attnsim.verify.records`). ``Record.from_json(r.to_json()) == r``.
"""

from __future__ import annotations

import html
import math
from typing import Annotated, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from attnsim.verify.records import dumps, jsonable, loads

_BITS_SCHEMA = {"anyOf": [{"type": "number"}, {"const": "inf"}, {"type": "null"}],
                "description": "bits of agreement with the reference: a number, \"inf\" when equal (exact "
                               "numerics), null when the claim has no output to compare"}
Bits = Annotated[Optional[float], WithJsonSchema(_BITS_SCHEMA)]
Number = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "number"}, {"enum": ["inf", "-inf", "nan"]},
                                                  {"type": "null"}]})]


class BoundEntry(BaseModel):
    """One bounded resource: the paper's bound at this size, the measured value, their ratio and the guard."""

    model_config = ConfigDict(extra="allow")
    formula: str
    value: Number = None
    measured: Number = None
    ratio: Number = None
    constant: Literal["paper", "frozen", "none"]
    C: Optional[float] = None
    calibrated_at: Optional[float] = None
    stated_by: Optional[str] = None
    guard: str


class Containment(BaseModel):
    """Whether the exact count lies in the bound's class as the size grows (:mod:`attnsim.theory.bounds`)."""

    model_config = ConfigDict(extra="allow")
    verdict: Optional[str] = None
    leading_constant: Optional[str] = None
    limit: Optional[str] = None
    leading_constant_here: Optional[str] = None


class Size(BaseModel):
    """The claim's limit variable and its value in this record (None when the parameters do not fix it)."""

    var: str
    value: Number = None


class Record(BaseModel):
    """One claim, one case, one numerics: the outputs' agreement, the counts against the exact formulas and
    the paper's bounds, the evidence kind and the verdict (:func:`attnsim.verify.check.run_check`)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    claim: str = Field(description="claim id, e.g. two_heads.lemma_3_1")
    label: str = Field(description="the paper's result number")
    paper: str
    params: dict[str, Any] = Field(description="every parameter of the check, defaults filled in")
    numerics: str = Field(description="the numerics the construction ran in; 'none' for a counting claim")
    seed: int
    length_convention: Optional[str] = None
    agree: Optional[bool] = Field(description="outputs agree with the reference; null: nothing to compare")
    error_bits: Bits = None
    min_bits: Optional[float] = None
    calls: Number = None
    calls_by_tag: dict[str, Any] = Field(default_factory=dict)
    predicted_calls: Number = None
    rounds: Optional[int] = None
    bound: Optional[str] = Field(default=None, description="the calls bound as the paper states it")
    counts: dict[str, Number] = Field(description="measured counts by resource (from the ledger)")
    predicted: dict[str, Number] = Field(description="exact counts by resource (from paper_refs)")
    bounds: dict[str, BoundEntry]
    size: Size
    containment: dict[str, Containment]
    verdict: Literal["pass", "fail"]
    reasons: list[str]
    evidence: Literal["independent", "self-consistency", "sanity"]
    reference: Optional[str] = None
    extra: dict[str, Any] = Field(default_factory=dict)
    version: str
    varying: list[str] = Field(default_factory=list)

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> Record:
        """The typed form of a record dictionary (as :func:`run_check` returns or JSON holds it)."""
        return cls.model_validate(loads(dumps(record)))

    @classmethod
    def from_json(cls, text: str) -> Record:
        """Read a record written by :meth:`to_json` or by any ``--json`` output of one record."""
        return cls.from_dict(loads(text))

    def to_dict(self) -> dict[str, Any]:
        """The plain dictionary (Python values: ``error_bits`` may be ``inf``)."""
        return loads(dumps(self.model_dump()))

    def to_json(self, **kwargs: Any) -> str:
        """Strict JSON, the encoding of every ``--json`` record (``inf`` as ``"inf"``)."""
        return dumps(self.model_dump(), **kwargs)

    @property
    def passed(self) -> bool:
        """Whether the verdict is pass."""
        return self.verdict == "pass"

    def agreement(self) -> str:
        """The agreement in words: ``exact (inf bits)``, ``N.N bits``, ``NO (N.N bits)`` or ``n/a``."""
        if self.agree is None:
            return "n/a"
        bits = self.error_bits
        text = "exact (inf bits)" if bits == math.inf else ("?" if bits is None else f"{bits:.1f} bits")
        return text if self.agree else f"NO ({text})"

    def count_cells(self) -> list[tuple[str, Any, Any]]:
        """(resource, measured, exact formula's value) for every counted or predicted resource."""
        names = list(self.counts) + [n for n in self.predicted if n not in self.counts]
        return [(n, self.counts.get(n), self.predicted.get(n)) for n in names]

    def __repr__(self) -> str:
        counts = ", ".join(f"{n}={_short(m)}" + ("" if p is None else f"/{_short(p)}")
                           for n, m, p in self.count_cells())
        params = " ".join(f"{k}={v}" for k, v in self.params.items() if v is not None)
        return (f"<Record {self.claim} [{params}] numerics={self.numerics}: {self.verdict}; "
                f"agreement {self.agreement()}; counts (measured/exact) {counts or 'none'}"
                + (f"; {len(self.reasons)} reason(s)" if self.reasons else "") + ">")

    __str__ = __repr__

    def _repr_html_(self) -> str:
        e = html.escape
        colour = "green" if self.passed else "red"
        rows = "".join(f"<tr><td>{e(n)}</td><td>{e(_short(m))}</td><td>{e(_short(p))}</td>"
                       f"<td>{e(self.bounds[n].formula) if n in self.bounds else ''}</td></tr>"
                       for n, m, p in self.count_cells())
        reasons = "".join(f"<li>{e(r)}</li>" for r in self.reasons)
        return (f"<div><b>{e(self.claim)}</b> ({e(self.label)}) — <span style='color:{colour}'>"
                f"<b>{e(self.verdict)}</b></span>; numerics {e(self.numerics)}, seed {self.seed}; agreement "
                f"{e(self.agreement())} (evidence: {e(self.evidence)})<br>params: "
                f"{e(', '.join(f'{k}={v}' for k, v in self.params.items()))}"
                "<table><tr><th>resource</th><th>measured</th><th>exact count</th><th>bound</th></tr>"
                f"{rows}</table>" + (f"<ul>{reasons}</ul>" if reasons else "") + "</div>")


def _short(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return "inf" if v == math.inf else f"{v:.4g}"
    return str(v)


def record_schema() -> dict[str, Any]:
    """The JSON schema every ``--json`` check record follows."""
    return jsonable(Record.model_json_schema(mode="serialization"))
