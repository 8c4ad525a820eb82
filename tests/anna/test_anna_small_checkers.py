"""anna.thm_4_2, thm_c_1, lemma_c_2, thm_5_4 and thm_5_6 through ``attnsim.verify.check``, and their report section."""

from __future__ import annotations

from functools import partial

import pytest
from lazy_records import LazyRecords

from attnsim.verify.check import run_check
from attnsim.verify.claims.anna_mpc_small import RADIX_MEMORY_4_2
from attnsim.verify.claims.anna_sort import HALF_MEMORY
from attnsim.verify.registry import UsageError
from attnsim.verify.report.sections.anna_small_memory import anna_small_memory_section

LARGE_4_2 = {"r": 0.1, "c": 14.0, "s_scale": 200.0}  # large memory (s >= N, the splitter sort's room): small and fast

CASES = {
    "thm_4_2_two_layers_half": ("anna.thm_4_2", {"N": 32, "layers": 2, "eps1": 0.5, **LARGE_4_2}),
    "thm_4_2_cross_polytope": ("anna.thm_4_2", {"N": 32, "eps1": 0.75, "lsh": "cross-polytope", **LARGE_4_2}),
    "thm_4_2_radix_small_memory": ("anna.thm_4_2", {"N": 256, "sort": "radix", **RADIX_MEMORY_4_2}),  # quick grid's
    "thm_c_1_small": ("anna.thm_c_1", {"N": 64, "layers": 2, "eps1": 0.5, "s_scale": 200.0}),
    "thm_c_1_radix": ("anna.thm_c_1", {"N": 64, "layers": 2, "eps1": 0.5, "s_scale": 40.0, "sort": "radix"}),
    "thm_c_1_larger": ("anna.thm_c_1", {"N": 256, "layers": 1, "eps1": 0.75, "s_scale": 40.0}),
    # two draws a record: the counts are the same on every draw; the chance of a refusal is tested in
    # test_mpc_splitter_sort.py
    "lemma_c_2_half": ("anna.lemma_c_2", {"N": 1024, "draws": 2, **HALF_MEMORY}),
    "lemma_c_2_three_quarters": ("anna.lemma_c_2", {"N": 4096, "eps1": 0.75, "s_scale": 128.0, "draws": 2}),
    "lemma_c_2_sublinear": ("anna.lemma_c_2", {"N": 4096, "draws": 2}),  # the default memory, s = 4 N^(3/4) = 2048
    "thm_5_4": ("anna.thm_5_4_direct", {"N": 64}),
    "thm_5_6_k32": ("anna.thm_5_6_direct", {"N": 64, "k": 32}),
    "thm_5_6_k5_alg1": ("anna.thm_5_6_direct", {"N": 48, "k": 5, "mechanism": "alg1"}),
}


@pytest.fixture(scope="module")
def records():
    return LazyRecords({name: partial(run_check, claim, params, None, 0) for name, (claim, params) in CASES.items()})


@pytest.mark.parametrize("name", list(CASES))
def test_checks_pass_and_counts_equal_the_exact_formulas(records, name):
    r = records[name]
    assert r["verdict"] == "pass", r["reasons"]
    assert r["agree"] is True and r["predicted"]
    assert all(r["counts"][k] == v for k, v in r["predicted"].items())
    if "max_load" in r["counts"]:
        assert 0 < r["counts"]["max_load"] <= r["extra"]["s"] == r["bounds"]["max_load"]["value"]


def test_layer_counts_grow_with_log_k(records):
    r1, r32 = records["thm_5_4"], records["thm_5_6_k32"]
    assert r32["counts"]["layers"] - r1["counts"]["layers"] == 1 + 5
    assert r32["containment"]["layers"]["verdict"] != "outside bound"


def test_the_machine_count_is_within_the_bound_as_n_grows(records):
    assert records["thm_c_1_small"]["containment"]["machines"]["verdict"] == "within bound (not tight)"
    # m H = Theta(N^eps) words a token over ell = Theta(N^(3 rho) log N) tables fill Thm 4.2's bound (with ell's log N)
    assert records["thm_4_2_two_layers_half"]["containment"]["machines"]["verdict"] == "tight"
    for name in ("thm_4_2_two_layers_half", "thm_c_1_small", "thm_c_1_radix"):
        assert records[name]["containment"]["rounds"]["verdict"] == "tight"
    # Lemma C.2's items are padded to N^eps words, so its machines meet N^(1+eps-eps') up to a constant
    assert records["lemma_c_2_half"]["containment"]["machines"]["verdict"] == "tight"


def test_lemma_c_2_rounds_are_the_plans_and_sorted_against_python(records):
    for name in ("lemma_c_2_half", "lemma_c_2_three_quarters"):
        r = records[name]
        assert r["reference"] == "sorted(keys)" and r["counts"]["rounds"] == r["extra"]["plan_rounds"] > 0


def test_lemma_d_2_on_one_machine_runs_no_round_and_passes():
    # N = 1 fits one machine: no round, so no load entry (the fuzzer's example once crashed on max() of nothing)
    r = run_check("anna.lemma_d_2", {"N": 1, "rank": 1, "mv": 1, "s_scale": 10.0}, None, 0)
    assert r["verdict"] == "pass" and r["counts"]["rounds"] == 0 and r["extra"]["max_words_received"] == 0


@pytest.mark.parametrize("claim, params, flag", [
    ("anna.thm_4_2", {"eps": 0.6, "eps1": 0.5}, "eps1"),  # a relation (the fuzz moves eps'): named alone
    ("anna.thm_4_2", {"c": 120.0}, "c"),  # the library names a single parameter; the CLI writes it as a flag
    ("anna.thm_4_2", {"lsh": "pstable"}, "lsh"),
    ("anna.thm_c_1", {"eps": 0.6, "eps1": 0.5}, "eps1"),
    ("anna.thm_c_1", {"eps1": 1.5}, "eps1"),  # above its own maximum: named alone
    ("anna.thm_5_6_direct", {"eps": 0.9}, "eps1"),  # a relation: named alone
    ("anna.thm_5_4_direct", {"mechanism": "softmax"}, "mechanism"),
    ("anna.lemma_c_2", {"N": 16, "eps1": 0.5, "s_scale": 1.0}, "s_scale"),  # s = 4 words: no item fits, P undefined
    ("anna.cor_b_9", {"protocol": "scan", "N": 2, "P": 1, "alphabet": 2, "k": 0}, "P"),  # R = 0: no routing layer
])
def test_bad_parameters_are_usage_errors(claim, params, flag):
    with pytest.raises(UsageError, match=f"^{flag}:"):
        run_check(claim, params, None, 0)


def test_report_section_tables_and_plot(records, tmp_path):
    extra = [run_check("anna.thm_c_1", {"N": 128, "layers": 2, "eps1": 0.5, "s_scale": 200.0}, None, 0)]
    md = anna_small_memory_section(list(records.values()) + extra, tmp_path, True)
    assert "`anna.thm_4_2`: rounds, machines and load" in md and "| 2 | 0.5 | hyperplane | 32 |" in md
    assert (tmp_path / "plots" / "anna_small_thm_c_1_machines.png").stat().st_size > 1000
    assert "| `anna.thm_5_6_direct` | 64 | 32 |" in md and "| — | 0.75 | sort only | 4096 |" in md


def test_records_at_s_of_n_or_more_say_they_lie_outside_the_sublinear_memory_the_theorems_are_about(records):
    """The report counts them as partial: a machine there could hold every token."""
    for name in ("thm_4_2_two_layers_half", "thm_c_1_small", "thm_4_2_radix_small_memory", "lemma_c_2_half",
                 "lemma_c_2_sublinear"):
        r = records[name]
        assert r["extra"]["in_stated_range"] is (r["extra"]["s"] < r["params"]["N"]), name
    assert records["thm_4_2_radix_small_memory"]["extra"]["in_stated_range"]
    assert not records["thm_c_1_small"]["extra"]["in_stated_range"]
    assert records["lemma_c_2_sublinear"]["extra"]["in_stated_range"]
    assert not records["lemma_c_2_half"]["extra"]["in_stated_range"]
