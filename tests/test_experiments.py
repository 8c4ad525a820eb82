"""ANNA's experiments (§6, App. G): Algorithm 1 on stacked sequences, deterministic resumable training, the
tiny-budget runs repeating bit for bit, the comparison verdicts, and the command without torch."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from attnsim.verify.experiments import compare

torch = pytest.importorskip("torch", reason="the torch extra is not installed (pip install -e '.[torch]')")

from attnsim.sim.anna.attention import anna_tables  # noqa: E402
from attnsim.verify.experiments import induction, match2, training  # noqa: E402
from attnsim.verify.experiments.anna_layer import (  # noqa: E402
    FAMILIES,
    SharedDraw,
    _first,
    anna_attention,
    anna_attention_prefixes,
)
from attnsim.verify.experiments.tasks import Match2Data  # noqa: E402


@pytest.fixture(autouse=True)
def _torch_settings_kept():
    from attnsim.verify.experiments.command import torch_settings_kept

    with torch_settings_kept():  # training sets one thread and deterministic kernels for the process
        yield


TINY_MATCH2 = replace(match2.QUICK, betas=(0.1,), steps=6, train_size=32, tests=8, ells=(1, 3), zs=(1, 2), runs=2)
TINY_INDUCTION = replace(induction.QUICK, N=8, width=8, steps=4, ells1=(1, 2), ells2=(1,), zs=(1,), tests=2)


def _unit(rng, shape):
    x = rng.standard_normal(shape)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_table_cut_to_z_hashes_gives_the_first_z_codes(family):
    x = _unit(np.random.default_rng(5), (20, 6))
    draw = SharedDraw.draw(np.random.default_rng(6), 6, 2, 4, family)
    for table in draw.tables:
        assert np.array_equal(_first(table, 2).codes(x), table.codes(x)[:, :2])
        assert table.alphabet == (12 if family == "cross-polytope" else 2)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_stacked_sequences_equal_algorithm_1_per_sequence(family):
    rng = np.random.default_rng(3)
    B, N, m, ell, z = 3, 8, 6, 4, 2
    q, k, v = _unit(rng, (B * N, m)), _unit(rng, (B * N, m)), rng.standard_normal((B * N, m))
    k[:N] = q[:N]  # the first sequence's queries meet their keys: buckets are shared
    draw = SharedDraw.draw(np.random.default_rng(1), m, ell + 2, z + 1, family)
    draw.prime(q, k)
    got = anna_attention(draw, q, k, v, N, ell, z)
    tables = [_first(t, z) for t in draw.tables[:ell]]
    want = np.vstack([anna_tables(q[b * N:(b + 1) * N], k[b * N:(b + 1) * N], v[b * N:(b + 1) * N], tables).output()
                      for b in range(B)])
    assert np.array_equal(got, want)
    assert np.abs(got[:N]).sum() > 0


def test_every_ell_from_one_pass_equals_algorithm_1_at_each_ell():
    rng = np.random.default_rng(4)
    B, N, m = 2, 8, 6
    q, k, v = _unit(rng, (B * N, m)), _unit(rng, (B * N, m)), rng.standard_normal((B * N, m))
    k[:N] = q[:N]
    draw = SharedDraw.draw(np.random.default_rng(2), m, 5, 3)
    draw.prime(q, k)
    for z in (1, 3):
        got = anna_attention_prefixes(draw, q, k, v, N, (1, 2, 5), z)
        assert sorted(got) == [1, 2, 5]
        for ell, out in got.items():
            assert np.array_equal(out, anna_attention(draw, q, k, v, N, ell, z))  # the same bits
        assert not np.array_equal(got[1], got[5])


def _recipe(warmup: int = 0):
    return replace(match2.recipe(replace(TINY_MATCH2, N=8, width=8), 0.1), warmup=warmup)


def _data():
    return Match2Data.draw(np.random.default_rng(0), 32, 8, 37)


def _state(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("warmup", [0, 5])
def test_training_resumes_to_the_same_bits(tmp_path, warmup):
    data = _data()
    straight = training.train(_recipe(warmup), data.batches, 6, None)
    training.train(_recipe(warmup), data.batches, 3, tmp_path)
    resumed = training.train(_recipe(warmup), data.batches, 6, tmp_path)
    assert resumed.resumed_from == 3
    a, b = _state(straight.model), _state(resumed.model)
    assert all(torch.equal(a[n], b[n]) for n in a) and straight.losses == resumed.losses


def test_the_warm_up_ramps_the_rate_and_changes_the_weights():
    r = _recipe(4)
    assert [r.rate(s) for s in range(6)] == [r.lr * f for f in (0.25, 0.5, 0.75, 1, 1, 1)]
    assert _recipe().rate(0) == r.lr and r.key() != _recipe().key()
    data = _data()
    a, b = (_state(training.train(x, data.batches, 3, None).model) for x in (_recipe(), r))
    assert not all(torch.equal(a[n], b[n]) for n in a)


def test_a_damaged_checkpoint_is_set_aside_and_training_restarts(tmp_path):
    data = _data()
    training.train(_recipe(), data.batches, 3, tmp_path)
    (path,) = list(_recipe().folder(tmp_path).glob("step-*.json"))
    path.write_text(path.read_text().replace('"checksum": "', '"checksum": "0'))
    again = training.train(_recipe(), data.batches, 3, tmp_path)
    assert again.resumed_from == 0 and path.with_name(path.name + ".bad").exists()


def _computed(result):
    return {k: v for k, v in result.items() if not k.endswith("seconds") and k != "from_cache"} | {
        "betas": {b: {k: v for k, v in r.items() if not k.endswith("seconds")} for b, r in result.get("betas",
                                                                                                    {}).items()}}


@pytest.mark.parametrize("module,config", [(match2, TINY_MATCH2), (induction, TINY_INDUCTION)])
def test_the_experiments_repeat_bit_for_bit(tmp_path, module, config):
    first = module.run(config, None)
    second = module.run(config, tmp_path)
    assert json.dumps(_computed(first), sort_keys=True) == json.dumps(_computed(second), sort_keys=True)
    again = module.run(config, tmp_path)
    assert again["from_cache"] and _computed(again) == _computed(json.loads(json.dumps(second)))
    other = module.run(replace(config, seed=1), None)
    assert _computed(other) != _computed(first)


def _match2_result(zero_cell: float, soft: float, best_other: float, families=("cross-polytope",)):
    ells = list(range(1, 17))
    grid = {"zs": [1, 2], "anna_mean": [[0.3] * 7 + [zero_cell] * 9, [0.2] * 16]}
    fig = {"grids": {f: grid for f in families}, "softmax_error": soft, "steps": 5}
    other = {"grids": {f: {"zs": [1], "anna_mean": [[best_other] * 16]} for f in families}, "softmax_error": soft,
             "steps": 5}
    return {"config": {"figure_beta": 0.1, "ells": ells, "families": list(families)}, "betas": {"0.1": fig, "1": other}}


def test_match2_comparison_verdicts():
    rows = compare.match2_rows(_match2_result(0.0, 0.0, 0.1))  # per family: ℓ >= 8, falls, best β, lowest cell
    assert [r.verdict for r in rows[:4]] == ["reproduced"] * 4
    rows = compare.match2_rows(_match2_result(compare.MATCH2_TOLERANCE, 0.0, 0.0))
    assert rows[0].verdict == "close" and rows[2].verdict == "differs"  # a tie goes to the smaller beta: not here
    rows = compare.match2_rows(_match2_result(0.05, 0.04, 0.1))
    assert rows[0].verdict == "differs" and "surrogate itself" in rows[0].reason
    rows = compare.match2_rows(_match2_result(0.3, 0.3, 0.4))  # beta = 0.1 lowest, but nothing learned
    assert rows[2].verdict == "differs" and "says nothing" in rows[2].reason
    assert rows[1].verdict == "differs" and "noise" in rows[1].reason  # nothing learned: no trend is read
    rows = compare.match2_rows(_match2_result(0.29, 0.3, 0.4))  # falls a hair, all far above a learned error
    assert rows[1].verdict == "differs" and "noise" in rows[1].reason
    flat = _match2_result(0.05, 0.04, 0.1)
    flat["betas"]["0.1"]["grids"]["cross-polytope"]["anna_mean"][0] = [0.05] * 16
    rows = compare.match2_rows(flat)
    assert rows[1].verdict == "differs" and "does not fall" in rows[1].reason  # a flat z = 1 line is no fall
    early = _match2_result(0.0, 0.0, 0.1)  # 0 from ℓ = 2 on: the paper's statement, though the line hardly falls
    early["betas"]["0.1"]["grids"]["cross-polytope"]["anna_mean"][0] = [0.05] + [0.0] * 15
    rows = compare.match2_rows(early)
    assert rows[1].verdict == "reproduced" and "within" in rows[1].reason
    two = _match2_result(0.0, 0.0, 0.1)
    two["config"]["ells"] = [1, 8]
    for beta in two["betas"].values():
        grid = beta["grids"]["cross-polytope"]
        grid["anna_mean"] = [[row[0], row[7]] for row in grid["anna_mean"]]
    rows = compare.match2_rows(two)
    assert rows[1].verdict == "differs" and rows[1].ours == "not measured" and "two points" in rows[1].reason


def test_match2_comparison_has_rows_for_each_family():
    rows = compare.match2_rows(_match2_result(0.0, 0.0, 0.1, families=("cross-polytope", "hyperplane")))
    assert [r.statement.endswith("[cross-polytope]") for r in rows[:4]] == [True] * 4
    assert [r.statement.endswith("[hyperplane]") for r in rows[4:8]] == [True] * 4
    assert rows[-1].statement.startswith("softmax surrogate error") and len(rows) == 9


def _induction_result(mean: np.ndarray, families=("cross-polytope",)):
    config = {"ells1": [32, 40, 48], "ells2": [4, 8], "zs": [1, 2], "families": list(families)}
    grid = {"anna_mean": mean.tolist(), "anna_best": mean.min(axis=0).tolist()}
    return {"config": config, "grids": {f: grid for f in families}, "softmax_error": 0.1, "steps": 7}


def test_induction_comparison_verdicts():
    mean = np.array([[[0.5, 0.5], [0.4, 0.4], [0.3, 0.3]], [[0.24, 0.2], [0.15, 0.1], [0.05, 0.05]]])
    rows = compare.induction_rows(_induction_result(mean))
    assert [r.verdict for r in rows[:4]] == ["reproduced", "reproduced", "reproduced", "reproduced"]
    mean[1, 0, 0] = 0.28
    rows = compare.induction_rows(_induction_result(mean))
    assert rows[0].verdict == rows[1].verdict == "close"
    mean[1, 0, 0] = 0.35
    rows = compare.induction_rows(_induction_result(mean))
    assert rows[0].verdict == rows[1].verdict == "differs" and "Algorithm 1 adds" in rows[0].reason
    noise = np.full_like(mean, 0.8) - 0.01 * np.arange(3)[None, :, None]  # falls with ell_1, all above guessing
    rows = compare.induction_rows(_induction_result(noise))
    assert rows[3].verdict == "differs" and "noise" in rows[3].reason
    flat = mean.copy()
    flat[:, :, :] = 0.45
    flat[1, :, 0] = 0.39, 0.41, 0.38  # learned, a hair lower at the largest ell_1: correlation -0.33, not a fall
    rows = compare.induction_rows(_induction_result(flat))
    assert rows[3].verdict == "differs" and "does not fall" in rows[3].reason
    two = _induction_result(mean[:, :2])
    two["config"]["ells1"] = [32, 40]
    assert compare.induction_rows(two)[3].ours == "not measured"  # two ell_1 always correlate ±1
    both = compare.induction_rows(_induction_result(mean, ("cross-polytope", "hyperplane")))
    assert len(both) == 9 and both[3].statement.endswith("[cross-polytope]") and both[7].statement.endswith(
        "[hyperplane]") and both[8].statement.startswith("softmax surrogate error")


def test_the_command_without_torch_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path):
    from attnsim.verify.cli import experiment as command
    from attnsim.verify.cli.app import main

    monkeypatch.setattr(command, "torch_missing", lambda: "torch is not installed")
    with pytest.raises(SystemExit) as exit_:
        main(["experiment", "anna.match2", "--quick", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.strip()
    assert exit_.value.code == 2 and err == "error: torch is not installed"


def test_report_sections_say_when_they_ran_the_tiny_budget(monkeypatch, tmp_path):
    from attnsim.verify.report.sections import anna_experiments

    monkeypatch.setattr(anna_experiments, "DEFAULT_OUT", tmp_path / "none-stored")
    torch.use_deterministic_algorithms(False)
    threads = torch.get_num_threads()
    for section, figure in ((anna_experiments.match2_section, "fig1a_match2.png"),
                            (anna_experiments.induction_section, "fig1b_induction.png")):
        md = section([], tmp_path / "report", True)
        assert "**Tiny budget**" in md and f"](plots/{figure})" in md and "| paper's statement |" in md
        assert (tmp_path / "report" / "plots" / figure).is_file()
    assert torch.get_num_threads() == threads and not torch.are_deterministic_algorithms_enabled()


def test_every_module_either_computes_results_or_presents_them():
    from pathlib import Path

    from attnsim.verify.experiments import store

    here = {p.stem for p in Path(store.__file__).parent.glob("*.py")}
    assert here == set(store.COMPUTES) | set(store.PRESENTS) and not set(store.COMPUTES) & set(store.PRESENTS)


def test_the_definition_checker_sees_the_gap_and_algorithm_1s_breaks():
    from attnsim.verify.experiments.definition import bound_holds, definition_rates
    from attnsim.verify.experiments.surrogate import Surrogate

    torch.manual_seed(0)
    model = Surrogate(_recipe().shape).eval()
    tokens = np.array([[0, 35, 1, 34, 2, 5, 9, 3]])  # x = 1, 36, 2, 35, ...: four partnered queries
    rates = definition_rates(model, tokens, 37, [(1, 1), (4, 2)], 2, 0)
    assert rates["partnered"] == 4 and 0 <= rates["with_gap"] <= 4
    assert all(0 <= c["query_rate"] <= 1 and 0 <= c["sequence_rate"] <= 1 for c in rates["cells"])
    if rates["with_gap"]:  # the proof's union bound: per pair never above its (p1, p2) form
        assert all(0 <= c["query_pairs"] <= c["query_proof"] + 1e-12 <= 1 + 1e-12 for c in rates["cells"])
        cell = dict(rates["cells"][0], broken_queries=10, queries=10, query_pairs=0.1)
        assert not bound_holds(cell)  # every query broken is not consistent with a predicted eta of 0.1
        assert bound_holds(dict(cell, broken_queries=0, broken_sequences=0))
        choice = rates["proof_choice"]
        assert choice is None or (choice["z"] >= 1 and choice["ell"] >= 1 and choice["p2"] < choice["p1"])
    with torch.no_grad():  # x and 37 - x embedded alike and keys = queries: a query's own key (not a partner,
        model.blocks[0].key.weight.copy_(model.blocks[0].query.weight)  # as 2x != 0 mod 37) is as near as its
        for t in range(18):  # partners' keys, so no (c, r) separates them
            model.embed.weight[35 - t] = model.embed.weight[t]
    assert definition_rates(model, tokens, 37, [], 1, 0)["with_gap"] == 0


def test_report_sections_show_a_stored_result(monkeypatch, tmp_path):
    from attnsim.verify.experiments.command import run_experiment
    from attnsim.verify.report.sections import anna_experiments

    monkeypatch.setattr(anna_experiments, "DEFAULT_OUT", tmp_path / "stored")
    run_experiment("anna.match2", TINY_MATCH2, tmp_path / "stored", None)
    md = anna_experiments.match2_section([], tmp_path / "report", True)
    assert "Read back from the verified result" in md and "not the default budget (6 steps, 2 run(s) × 8" in md
    assert "Tiny budget" not in md and (tmp_path / "report" / "plots" / "fig1a_match2.png").is_file()


def test_the_diagnosis_reads_the_surrogate_with_each_attention():
    from attnsim.verify.experiments.diagnosis import diagnose, diagnosis_lines
    from attnsim.verify.experiments.surrogate import Surrogate

    torch.manual_seed(0)
    model = Surrogate(_recipe().shape).eval()
    tokens = np.array([[0, 35, 1, 34, 2, 5, 9, 3], [4, 4, 7, 8, 30, 6, 1, 2]])
    targets = np.array([[1, 1, 1, 1, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1, 0, 0]])
    d = diagnose(model, tokens, targets, 37, 2, 0, cells=((2, 1),))
    rows = d["rows"]
    assert rows["softmax"]["where_softmax_right"] == 0  # by definition
    assert {"uniform", "partners only", "Algorithm 1, ℓ → ∞, z = 1", "Algorithm 1, ℓ = 2, z = 1"} <= set(rows)
    assert all(0 <= r["token"] <= r["sequence"] <= 1 for r in rows.values())
    assert len(diagnosis_lines(d, 0.1)) == len(rows) + 2


def test_the_hyperplane_collision_probability_matches_drawn_hyperplanes():
    from attnsim.sim.anna.lsh import HyperplaneLSH
    from attnsim.verify.experiments.diagnosis import hyperplane_probability

    x = np.array([[1.0, 0, 0, 0], [np.cos(2.0), np.sin(2.0), 0, 0]])  # an angle of 2 radians
    table = HyperplaneLSH(4).draw(np.random.default_rng(8), 20_000)
    codes = table.codes(x)
    same = float((codes[0] == codes[1]).mean())
    want = float(hyperplane_probability(np.linalg.norm(x[0] - x[1])))
    assert abs(want - (1 - 2.0 / np.pi)) < 1e-12 and abs(same - want) < 4 * np.sqrt(want * (1 - want) / 20_000)


def test_the_diagnosis_has_algorithm_1_rows_for_each_family():
    from attnsim.verify.experiments.diagnosis import diagnose
    from attnsim.verify.experiments.surrogate import Surrogate

    torch.manual_seed(0)
    model = Surrogate(_recipe().shape).eval()
    tokens = np.array([[0, 35, 1, 34, 2, 5, 9, 3]])
    d = diagnose(model, tokens, np.zeros_like(tokens), 37, 1, 0, cells=((2, 1),),
                 families=("cross-polytope", "hyperplane"))
    assert {f"Algorithm 1 [{f}], ℓ = 2, z = 1" for f in ("cross-polytope", "hyperplane")} <= set(d["rows"])


@pytest.mark.parametrize("args,says", [
    (["anna.match2", "--lsh", "simhash"], "--lsh: expected distinct names among cross-polytope, hyperplane"),
    (["anna.match2", "--lsh", "hyperplane,hyperplane"], "--lsh: expected distinct names"),
    (["anna.induction", "--lsh", "cross-polytope,simhash"], "--lsh: expected distinct names"),
])
def test_a_wrong_lsh_is_one_line_naming_it_and_exit_2(capfd, tmp_path, args, says):
    from cli_run import invoke

    code, out, err = invoke(["experiment", *args, "--quick", "--out", str(tmp_path / "out")], capfd)
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_the_quick_match2_runs_the_family_asked_for(tmp_path):
    from attnsim.verify.experiments.command import config_for, run_experiment

    config = config_for("anna.match2", quick=True, steps=None, runs=None, tests=None, seed=0, betas=(0.1,),
                        families=("hyperplane",))
    result = run_experiment("anna.match2", config, tmp_path, None)
    assert list(result["betas"]["0.1"]["grids"]) == ["hyperplane"]
    assert all(r["statement"].endswith("[hyperplane]") for r in result["comparison"][:-1])
