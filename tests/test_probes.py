"""The referee and theory probes hold on the code as it is, and each of their broken variants is caught."""

from __future__ import annotations

from attnsim.verify.probes import ProbeTwin, probe_failures, probe_pass, run_probe_twin
from attnsim.verify.probes.oracle_limits import LIMITS, executors
from attnsim.verify.twins.referee import refusal_mutated


def test_every_probe_holds_and_every_break_of_the_referee_or_theory_is_caught() -> None:
    result = probe_pass()
    assert result["ok"], probe_failures(result)
    names = {p["name"] for p in result["probes"]}
    for limit in LIMITS:  # every limit on the numpy oracle and, where torch is installed, on the torch oracle
        assert f"oracle_limit.{limit.name}.Oracle" in names
        assert ("TorchOracle" not in executors()) or f"oracle_limit.{limit.name}.TorchOracle" in names
    assert {"comparator.exact", "ledger.compaction", "theory.N**2_vs_O(N)"} <= names
    caught = {t["name"] for t in result["twins"] if t["caught"]}
    assert {"oracle.length_plus_one", "oracle.output_width_at_limit_refused", "comparator.tolerance_1e-9",
            "ledger.compaction_drops_amount", "theory.limit_always_zero"} <= caught


def test_a_break_that_no_longer_applies_is_not_caught() -> None:
    gone = ProbeTwin("gone", "referee", "a comparison that is not in the code", lambda: refusal_mutated("no such", "x"),
                     ("oracle_limit.length.Oracle",))
    r = run_probe_twin(gone)
    assert not r.caught and "could not be applied" in r.reason


def test_a_failing_probe_is_a_failure_of_the_run() -> None:
    fake = {"probes": [{"name": "p", "ok": False, "reason": "no"}], "twins": [{"name": "t", "caught": False,
                                                                                "reason": "held"}]}
    assert probe_failures(fake) == [("p", "no"), ("t", "broken variant not caught: held")]
