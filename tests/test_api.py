"""The Python API (docs/api.md): typed records, errors that name the keyword, one JSON schema for ``--json``."""

from __future__ import annotations

import math

import jsonschema
import pytest
from cli_run import invoke

import attnsim
from attnsim.verify.records import loads


def test_check_returns_a_typed_record_whose_repr_shows_verdict_counts_and_bits() -> None:
    r = attnsim.check("two_heads.lemma_3_1", N=16, M=4, d=2)
    assert isinstance(r, attnsim.Record) and r.verdict == "pass" and r.error_bits == math.inf
    assert r.counts["calls"] == r.predicted["calls"] == 32
    text = repr(r)
    assert "pass" in text and "inf bits" in text and "calls=32/32" in text
    assert "<table>" in r._repr_html_() and "pass" in r._repr_html_()
    assert attnsim.Record.from_json(r.to_json()) == r


def test_errors_raised_in_python_name_the_keyword_and_the_cli_its_flag(capfd) -> None:
    with pytest.raises(attnsim.UsageError) as err:
        attnsim.check("two_heads.lemma_3_1", N=16, M=1, d=2)
    assert err.value.param == "M" and str(err.value).startswith("M: ") and "--" not in str(err.value)
    with pytest.raises(attnsim.UsageError) as err:
        attnsim.check("two_heads.lemma_3_1", numerics="mp:1")
    assert err.value.param == "numerics" and "--" not in str(err.value).split(":")[0]
    code, _, stderr = invoke(["check", "two_heads.lemma_3_1", "--M", "1"], capfd)
    assert code == 2 and stderr.strip() == "error: --M: must be >= 2, got 1"


@pytest.mark.parametrize("argv", [["two_heads.lemma_3_1", "--N", "16", "--M", "4", "--d", "2"],
                                  ["two_heads.lemma_3_1", "--N", "16", "--M", "4", "--d", "2", "--numerics", "float64"],
                                  ["tint.size"]])
def test_every_json_record_follows_the_schema_and_reads_back_equal(argv, capfd) -> None:
    code, out, _ = invoke(["check", *argv, "--json", "-"], capfd)
    assert code == 0, out
    jsonschema.validate(__import__("json").loads(out), attnsim.record_schema())
    typed = attnsim.Record.from_json(out)
    assert typed.to_dict() == loads(out)
    bits = typed.error_bits  # the same number in Python and in JSON; JSON's "inf" is Python's inf
    assert bits is None or bits == math.inf or 0 < bits < 64


def test_the_model_holds_every_key_of_a_record() -> None:
    from attnsim.verify.check import RECORD_KEYS

    assert set(attnsim.Record.model_fields) == set(RECORD_KEYS)


def test_claims_lists_the_parameters_in_words() -> None:
    info = {c.id: c for c in attnsim.claims("two_heads")}
    assert info["two_heads.lemma_3_1"].runnable and info["two_heads.lemma_3_1"].params["M"] == "int >= 2"
    with pytest.raises(attnsim.UsageError) as err:
        attnsim.claims("no_such_paper")
    assert err.value.param == "paper"
