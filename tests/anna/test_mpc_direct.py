"""Thm B.2's transformer with ANNA heads (anna.cor_b_9): one layer per round, Lemma B.4's code at alpha = s."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from attnsim.sim.anna.mpc_direct import run_direct
from attnsim.sim.anna.mpc_protocols import khop_protocol
from attnsim.sim.anna.mpc_scan import scan_protocol, scan_rounds
from attnsim.sim.anna.tasks import hop_labels, hop_string
from attnsim.sim.anna.transformer import EMA, size_from_ledger
from attnsim.sim.ledger import Ledger
from attnsim.verify.check import run_check
from attnsim.verify.claims.anna_direct import direct_mechanism, widest_scan_fan
from attnsim.verify.report.sections.anna import anna_section
from attnsim.verify.teeth import run_twin
from attnsim.verify.twins import all_twins

TWINS = [t for t in all_twins() if t.claim == "anna.cor_b_9" and t.kind != "growth"]


@pytest.mark.parametrize("mechanism", [direct_mechanism("alg1", 3), EMA()], ids=["alg1", "ema"])
def test_khop_through_one_layer_per_round_with_averaged_messages(mechanism):
    text = hop_string(np.random.default_rng(5), 64, 3)
    protocol = partial(khop_protocol, text, hops=3, machines=64)
    direct = protocol(ledger=Ledger())
    ledger = Ledger()
    run = run_direct(lambda **hooks: protocol(ledger=Ledger(), **hooks), inputs=64, machines=64, block=1,
                     memory=direct.memory, mechanism=mechanism, ledger=ledger)
    assert run.outputs == direct.vector() == [(int(v),) for v in hop_labels(text, 3)]
    size = size_from_ledger(ledger)
    assert size["layers"] == direct.rounds + 2 and size["heads"] == direct.memory == 16
    assert run.max_alpha >= 2 and run.code.alpha == 16 and run.code.rows > 1  # the code's averaging is used


def test_each_twin_kind_is_present():
    assert {"construction", "ledger", "formula"} <= {t.kind for t in TWINS}


@pytest.mark.parametrize("twin", TWINS, ids=[t.name for t in TWINS])
def test_twin_is_caught(twin):
    result = run_twin(twin)
    assert result.bites, result.reason


def test_report_section_shows_the_averaging(tmp_path):
    record = run_check("anna.cor_b_9", {"protocol": "khop", "N": 64, "P": 64}, None, 0)
    md = anna_section([record], tmp_path, True)
    assert "| khop (alg1) | 64 | 64 | 16 | 16 | 27 | 29 | 5440 | 16 x 17 | 2 | yes |" in md


@pytest.mark.parametrize("N,P,fan", [(64, 64, 2), (64, 16, 3), (48, 12, 5)])
def test_scan_is_the_prefix_sum_within_its_memory_and_capacity(N, P, fan):
    x = np.random.default_rng(N + fan).integers(-50, 50, size=N)
    ledger = Ledger()
    run = scan_protocol(x, machines=P, fan=fan, ledger=ledger)
    assert run.vector() == [(int(v),) for v in np.cumsum(x)]
    assert run.memory == N // P + fan and ledger.rounds("mpc_round") == run.rounds == scan_rounds(P, fan)


def test_default_check_runs_in_thm_b2_stated_range():
    record = run_check("anna.cor_b_9", {}, None, 0)
    s, N = record["extra"]["s"], record["params"]["N"]
    assert record["verdict"] == "pass" and s ** 5 < N and record["extra"]["in_stated_range"]
    assert record["extra"]["max_alpha"] >= 2  # rotated outboxes: one head averages several senders


def test_widest_scan_fan_keeps_s_below_n_to_the_fifth_root():
    assert [widest_scan_fan(n, 1) + 1 for n in (256, 512, 2048, 4096)] == [3, 3, 4, 5]
