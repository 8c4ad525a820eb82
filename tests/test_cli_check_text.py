"""``attnsim check``'s text table prints a record's evaluated leading constant as it is, even when it still
holds symbols (it is already printed notation, with middle dots, not a formula to parse again)."""

from __future__ import annotations

import io
import math

from attnsim.verify.cli.check import print_record


def test_a_symbolic_leading_constant_is_printed_not_reparsed():
    record = {
        "claim": "anna.thm_5_6", "label": "Theorem 5.6", "numerics": "exact", "seed": 0, "length_convention": None,
        "params": {"N": 1024, "k": 32}, "error_bits": math.inf, "agree": True, "evidence": "independent",
        "reference": "the protocol run directly", "counts": {"embedding_dim": 844}, "predicted": {"embedding_dim": 844},
        "bounds": {"embedding_dim": {"formula": "N**eps1", "value": 724.1}},
        "containment": {"embedding_dim": {"verdict": "tight", "leading_constant": "3*N**eps/eps_gap",
                                          "leading_constant_here": "3·1024^ε/eps_gap"}},
        "calls_by_tag": {}, "verdict": "pass", "reasons": [], "extra": {},
    }
    out = io.StringIO()
    print_record(record, file=out)
    assert "3·1024^ε/eps_gap" in out.getvalue() and "verdict: pass" in out.getvalue()
