"""The decode-by-d study: its records carry both decodes' certified and float64 bits, and the report's finding is
computed from them (``verify/precision/decode_by_d.py``)."""

from __future__ import annotations

from attnsim.verify.precision.decode_by_d import decode_finding, decode_records, decode_table


def test_records_show_the_papers_decode_failing_where_the_stable_one_holds_and_the_finding_says_so():
    recs = decode_records((4, 16), N=16, M=8)
    by = {(r["d"], r["decode"]): r for r in recs}
    assert by[(16, "paper")]["float64_error_bits"] < 1 and sum(by[(16, "paper")]["float64_non_finite"].values())
    assert by[(16, "stable")]["float64_error_bits"] >= 40 and not by[(16, "stable")]["float64_non_finite"]
    assert by[(16, "paper")]["certified_bits"] < by[(16, "stable")]["certified_bits"] - 40
    assert by[(4, "paper")]["float64_error_bits"] > 30
    finding = decode_finding(recs)
    assert "d = 16" in finding and "--d 16 --numerics float64" in finding
    assert len(decode_table(recs)) == 2 + 2
    assert decode_finding([r for r in recs if r["d"] == 4]) is None
