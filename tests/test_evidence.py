"""Evidence has no default: every Measurement a checker builds declares its kind, and an independent one
names its reference (fails on a Measurement(...) call without ``evidence=``, naming file and line)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import attnsim.verify as verify_pkg
from attnsim.verify.registry import Measurement

VERIFY = Path(verify_pkg.__file__).parent


def _measurement_calls() -> list[tuple[str, ast.Call]]:
    calls = []
    for path in sorted(VERIFY.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = getattr(node, "func", None)
            if isinstance(node, ast.Call) and getattr(name, "id", getattr(name, "attr", None)) == "Measurement":
                calls.append((f"{path.relative_to(VERIFY)}:{node.lineno}", node))
    return calls


def test_every_measurement_a_checker_builds_declares_its_evidence():
    calls = _measurement_calls()
    assert len(calls) >= 30  # the checkers' measurements, found by the walk
    missing = [where for where, call in calls if "evidence" not in {kw.arg for kw in call.keywords}]
    assert not missing, f"Measurement(...) without evidence=: {missing}"
    unnamed = [where for where, call in calls
               if any(kw.arg == "evidence" and getattr(kw.value, "value", None) == "independent"
                      for kw in call.keywords)
               and "reference" not in {kw.arg for kw in call.keywords}]
    assert not unnamed, f"Measurement(evidence='independent') without reference=: {unnamed}"


def test_an_independent_measurement_without_evidence_or_reference_is_refused():
    with pytest.raises(TypeError, match="evidence"):
        Measurement(agree=True)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="reference"):
        Measurement(agree=True, evidence="independent")
    with pytest.raises(ValueError, match="evidence"):
        Measurement(agree=True, evidence="trust me")
    assert Measurement(agree=True, evidence="independent", reference="numpy x.sum()").reference == "numpy x.sum()"
    assert Measurement(agree=None, evidence="self-consistency").reference is None
