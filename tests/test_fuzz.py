"""``attnsim fuzz``: hypothesis over a claim's domains; a planted off-by-one is found, shrunk and replayed."""

from __future__ import annotations

import shlex
from functools import partial

import numpy as np
import pytest
from cli_run import invoke
from hypothesis import given
from hypothesis import strategies as st

from attnsim.verify.check import run_check
from attnsim.verify.fuzz import anchored_params, fuzz, grid_values, param_strategy
from attnsim.verify.registry import UsageError, all_checkers, get_checker
from attnsim.verify.relations import kept
from attnsim.verify.twins import all_twins

CLAIM = "two_heads.lemma_3_1"


def _block_boundary():
    return next(t for t in all_twins() if t.claim == CLAIM and t.name == "block_boundary")


def test_a_planted_block_boundary_off_by_one_is_shrunk_to_a_check_command_that_fails(tmp_path, capfd) -> None:
    twin = _block_boundary()
    with twin.breaks():
        result = fuzz(CLAIM, examples=15, derandomize=True, out=tmp_path)
        assert len(result.failures) == 1, result
        failure = result.failures[0]
        argv = shlex.split(failure.command)
        assert argv[:3] == ["attnsim", "check", CLAIM]
        assert failure.params["N"] <= 8 and failure.params["M"] <= 4, failure.command  # shrunk
        assert result.examples > 1  # the shrinker's candidates ran
        code, _, _ = invoke(argv[1:], capfd)
        assert code == 1  # the replayed command fails while the bug is in
    code, out, _ = invoke(argv[1:], capfd)
    assert code == 0, out  # ... and passes on the correct construction
    assert (tmp_path / "failures" / f"{CLAIM}-1.json").is_file()


def test_a_failure_whose_shrinking_runs_out_of_time_is_reported_as_found(tmp_path, capfd, monkeypatch) -> None:
    """Shrinking stops SHRINK_SECONDS after the first failure (here at once): hypothesis's further candidates are
    refused, and the smallest failing example reached is reported and saved, a command that fails on replay."""
    from attnsim.verify import fuzz as fuzz_module

    monkeypatch.setattr(fuzz_module, "SHRINK_SECONDS", 0.0)
    twin = _block_boundary()
    with twin.breaks():
        result = fuzz(CLAIM, examples=15, derandomize=True, out=tmp_path)
        assert len(result.failures) == 1 and result.examples == 1, result  # no candidate ran after the first
        code, _, _ = invoke(shlex.split(result.failures[0].command)[1:], capfd)
        assert code == 1
    assert (tmp_path / "failures" / f"{CLAIM}-1.json").is_file()


def test_the_command_fuzzes_a_correct_construction_and_summarises(tmp_path, capfd) -> None:
    code, out, _ = invoke(["fuzz", CLAIM, "--examples", "4", "--out", str(tmp_path), "--format", "md"], capfd)
    assert code == 0, out
    row = [line for line in out.splitlines() if line.startswith(f"| {CLAIM} ")]
    assert row and row[0].split(" | ")[3] == "4", out  # examples run; no failure
    code, _, err = invoke(["fuzz", CLAIM, "--examples", "0"], capfd)
    assert code == 2 and err.startswith("error: --examples: ")


@given(st.data())
def test_every_drawn_parameter_lies_in_its_domain(data) -> None:
    checkers = all_checkers()
    chk = checkers[data.draw(st.sampled_from(sorted(checkers)))]
    seen = grid_values(chk)
    for p in chk.params:
        value = data.draw(param_strategy(p, seen.get(p.name)))
        assert p.parse(value) == value


@given(st.data())
def test_every_parameter_drawn_near_a_grid_point_lies_in_its_domain(data) -> None:
    checkers = all_checkers()
    chk = checkers[data.draw(st.sampled_from(sorted(checkers)))]
    seen = grid_values(chk)
    params = data.draw(anchored_params(chk, {p.name: param_strategy(p, seen.get(p.name)) for p in chk.params}))
    assert sorted(params) == sorted(p.name for p in chk.params)
    assert all(p.parse(params[p.name]) == params[p.name] for p in chk.params)


def test_joint_conditions_of_the_grid_hold_for_most_examples() -> None:
    """Thm B.10's check wants N a power of two that P divides: drawn one parameter at a time, about one example
    in three thousand met that; drawn near the grid's point most do, and N and P are drawn as powers of two (their
    domain), so ten examples run with under two dozen draws refused (17 or 18 when this was written; 10 since the
    fuzz keeps P dividing N)."""
    result = fuzz("anna.thm_b_10", examples=10, derandomize=True)
    assert result.ok and result.examples == 10 and result.rejected <= 24, result
    # every rejection is tallied by what refused it, its numbers left out
    assert sum(result.rejected_by.values()) == result.rejected and not any(c.isdigit() for c in "".join(
        result.rejected_by)), result.rejected_by


def test_a_value_that_breaks_a_relation_is_moved_to_the_nearest_that_keeps_it() -> None:
    """Lemma 3.3's heads H must divide the width d: drawn apart, the two met in fewer than two examples in three
    (727 of 1872 rejected in a half-minute fuzz); moved to a divisor, none is rejected for it."""
    chk = get_checker("two_heads.lemma_3_3")
    base = {p.name: p.default for p in chk.params}
    assert kept(chk, {**base, "d": 12, "H": 5})["H"] == 4
    assert kept(chk, {**base, "d": 12, "H": 6})["H"] == 6
    assert kept(chk, {**base, "d": 3, "H": 8})["H"] == 3
    relay = get_checker("anna.lemma_b_12")  # P a power of two at most N: moved to N, which divides N
    assert kept(relay, {**{p.name: p.default for p in relay.params}, "N": 64, "P": 128})["P"] == 64
    result = fuzz("two_heads.lemma_3_3", examples=20, derandomize=True)
    assert result.ok and result.examples == 20 and result.rejected <= 1, result.rejected_by


def test_a_value_exact_numerics_cannot_compute_is_refused_there_and_moved_by_the_fuzz() -> None:
    """Real RoPE angles have irrational entries: in exact numerics (and fraction) the check refuses them before any
    work, naming --rope, and the fuzz moves them to the quarter turns; in mp they run. The fuzz drew them a third of
    the time and had 35 of 200 examples refused for them in exact numerics, none once moved."""
    from attnsim.verify.relations import check_relations

    chk = get_checker("two_heads.rebuttal_rope")
    params = chk.resolve({"N": 9, "M": 3, "d": 2, "rope": "real"})
    for numerics in ("exact", "fraction"):
        with pytest.raises(UsageError) as refusal:
            run_check("two_heads.rebuttal_rope", params, numerics)
        assert refusal.value.param == "rope" and "--rope quarter" in str(refusal.value)
        assert kept(chk, params, numerics) == {**params, "rope": "quarter"}
    check_relations("two_heads.rebuttal_rope", params, "mp:64")
    assert kept(chk, params, "mp:64") == params and kept(chk, params) == params
    result = fuzz("two_heads.rebuttal_rope", examples=12, numerics="exact", derandomize=True)
    assert result.ok and result.examples == 12 and result.rejected == 0, result.rejected_by


def test_tint_heads_are_moved_to_a_count_that_splits_the_width() -> None:
    """The MLP rebuttal's H_sim heads must split the width (D/K + 1) D into heads whose dimension divides D: drawn
    on their own they did so in 8 of 308 draws of a one-minute fuzz (the fuzz moves drawn values by ``kept``, as
    the test above shows for Lemma 3.3)."""
    chk = get_checker("tint.rebuttal_mlp_aux")
    base = {p.name: p.default for p in chk.params}
    assert [kept(chk, {**base, "D": 8, "K": 2, "H_sim": h})["H_sim"] for h in (1, 7, 10, 33, 90)] == [5, 5, 10, 40, 40]
    assert kept(chk, {**base, "D": 12, "K": 3, "H_sim": 14})["H_sim"] == 15  # (4 + 1) 12 / 4


def test_an_example_still_running_when_the_time_is_up_is_stopped() -> None:
    import time

    import pytest

    from attnsim.verify.fuzz import OutOfTime, _time_box

    began = time.monotonic()
    with pytest.raises(OutOfTime):
        with _time_box(began + 0.2):
            time.sleep(30)
    assert time.monotonic() - began < 5
    with _time_box(None):  # no limit: the block runs to its end
        time.sleep(0.01)
    began = time.monotonic()
    with pytest.raises(OutOfTime):  # a first alarm swallowed (as in a gc callback): the next one stops the block
        with _time_box(began + 0.2):
            try:
                time.sleep(30)
            except OutOfTime:
                pass
            time.sleep(30)
    assert time.monotonic() - began < 10


def test_no_draw_is_moved_into_its_relations_after_the_time_is_up(monkeypatch) -> None:
    """Moving a draw into its relations can cost a search (sympy evaluates the claim's memory at each step), and
    hypothesis keeps drawing, and rejecting, until a chunk gives up: a draw after the time is up is left as drawn,
    so a fuzz ends on time (a one-minute fuzz of anna.khop took 116 s while every draw was moved)."""
    import time

    from attnsim.verify import fuzz as fuzz_module

    moved_at: list[float] = []
    real = fuzz_module.kept

    def slow_kept(chk, params, numerics=None):
        moved_at.append(time.monotonic())
        time.sleep(0.02)
        return real(chk, params, numerics)

    stops: list[float] = []
    real_chunk = fuzz_module._run_chunk

    def chunk(chk, result, budget, stop, *rest):
        stops.append(stop)
        return real_chunk(chk, result, budget, stop, *rest)

    monkeypatch.setattr(fuzz_module, "kept", slow_kept)
    monkeypatch.setattr(fuzz_module, "_run_chunk", chunk)
    fuzz("two_heads.lemma_3_3", minutes=0.02)
    assert moved_at and sum(t > stops[0] for t in moved_at) <= 1, [t - stops[0] for t in moved_at[-5:]]


def test_a_replay_refused_after_the_time_ran_out_ends_the_fuzz_quietly(monkeypatch) -> None:
    """Hypothesis may run an example's choices again after the time is up; the fuzz refuses every example then,
    and hypothesis calls the changed outcome flaky. That ends the chunk like the time itself, never in a
    traceback; the same complaint before the time is up is a real inconsistency and is raised."""
    import pytest
    from hypothesis.errors import FlakyReplay

    from attnsim.verify import fuzz as fuzz_module

    clock = [0.0]

    def replayed_after(*args, **kwargs):
        def wrap(test):
            def run():
                clock[0] += 120  # two minutes pass inside the run
                raise FlakyReplay("Inconsistent results from replaying a test case!")
            return run
        return wrap

    monkeypatch.setattr(fuzz_module.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(fuzz_module, "given", replayed_after)
    result = fuzz(CLAIM, minutes=1)
    assert result.ok and result.examples == 0, result
    with pytest.raises(FlakyReplay):
        fuzz(CLAIM, minutes=10)


def test_a_check_that_draws_its_own_inputs_is_fuzzed_without_a_nested_search() -> None:
    """Thm 5.2's check drew its inputs by a hypothesis search inside the check, which a fuzz (itself a search)
    cannot nest: one example in 360 crashed with "Inconsistent data generation". It draws them seeded now."""
    import numpy as np

    from attnsim.verify.claims.anna import match2_inputs

    result = fuzz("anna.thm_5_2", examples=4, derandomize=True)
    assert result.ok and result.examples == 4, result
    xs = match2_inputs(np.random.default_rng(0), 9, 6, 5)
    assert xs[:4] == [[0] * 6, [5] * 6, [10] * 6, [0, 10] * 3] and len(xs) == 9
    assert all(len(x) == 6 and all(0 <= v <= 10 for v in x) for x in xs)


def test_an_example_estimated_longer_than_the_whole_fuzz_is_not_run(monkeypatch) -> None:
    """A five-minute fuzz of TinT's SGD step in exact numerics, whose quick grid (in float64) holds the gpt2-d64 and
    gpt2-d96 cases, so the fuzz draws them: in exact they are estimated at 17 and 19 minutes (gpt2-d64 ran for more
    than 15), so they are rejected without running and tallied as such, while the small cases run. The check is a
    stand-in that notes the case and advances a simulated clock by the case's estimate, so the test takes seconds."""
    from attnsim.verify import check as check_module
    from attnsim.verify import fuzz as fuzz_module
    from attnsim.verify.cost import estimate
    from attnsim.verify.fuzz import TOO_LONG

    claim = "tint.sgd_step"
    chk = get_checker(claim)
    cost = {c: estimate(claim, chk.resolve({"case": c}), "exact").seconds for c in chk.param("case").choices}
    clock, ran = [0.0], []

    def noted(claim, params, numerics, seed):
        ran.append(params["case"])
        clock[0] += cost[params["case"]]
        return {"verdict": "pass", "error_bits": None, "bounds": {}, "reasons": []}

    def monotonic() -> float:  # a draw itself takes a little time too, so the clock also runs between examples
        clock[0] += 0.05
        return clock[0]

    monkeypatch.setattr(fuzz_module.time, "monotonic", monotonic)
    monkeypatch.setattr(check_module, "run_check", noted)
    result = fuzz(claim, minutes=5, numerics="exact", derandomize=True)
    wide = {c for c in cost if cost[c] > 300}
    assert wide == {"gpt2-d64", "opt-d64", "gpt2-d96", "gpt2-d128"}, cost
    assert result.ok and ran and not wide & set(ran) and result.rejected_by.get(TOO_LONG, 0) >= 1, (result, ran)


@pytest.mark.parametrize("claim, given", [
    ("anna.thm_4_1", {"protocol": "sort", "N": 256, "P": 64}), ("anna.thm_4_1", {"protocol": "sum", "N": 256, "P": 16}),
    ("anna.thm_4_1", {"protocol": "khop", "N": 256, "P": 32}),
    ("anna.thm_4_1", {"protocol": "samplesort", "N": 4096, "P": 16}),
    ("anna.thm_4_4", {"N": 256, "P": 16, "d": 1, "rank": 1}), ("anna.thm_4_4", {"N": 1024, "P": 32, "d": 3, "rank": 2}),
    ("anna.thm_4_1", {"protocol": "samplesort", "N": 256, "P": 8}),  # s = 512 >= N on any P: no eps' < 1 fits
    ("anna.thm_4_4", {"N": 256, "P": 2, "d": 3, "rank": 2})])  # s = 1024 >= N on 2 machines, 128 on 16
def test_eps1_is_held_above_the_eps_of_the_memory_the_protocol_takes(claim, given) -> None:
    """eps' must exceed eps = log s / log N of the protocol's memory s, which the run picks: the memory planned
    before the run is the one the protocol takes, eps' below eps is refused before any work naming --eps1, and the
    fuzz moves it just above eps (drawn freely it fell at or below eps in 465 of 466 draws of Thm 4.4)."""
    from fractions import Fraction

    from attnsim.sim.anna.mpc_protocols import (
        khop_protocol,
        lowrank_protocol,
        prefix_sum_protocol,
        samplesort_protocol,
        sort_protocol,
    )
    from attnsim.verify.claims.anna_mpc_to_anna import _lowrank_layers, planned_memory
    from attnsim.verify.relations import check_relations

    chk = get_checker(claim)
    params = chk.resolve(given)
    N, P = params["N"], params["P"]
    x = np.arange(N)[::-1].copy()
    if claim == "anna.thm_4_4":
        layers = _lowrank_layers(np.random.default_rng(0), 1, params["d"], params["rank"])
        run = lowrank_protocol(np.ones((N, params["d"]), dtype=np.int64), layers, modulus=97, machines=P)
    else:
        run = {"sort": sort_protocol, "samplesort": samplesort_protocol, "sum": prefix_sum_protocol,
               "khop": partial(khop_protocol, hops=2)}[params["protocol"]](x % 4, machines=P)
    assert planned_memory(params) == run.memory
    eps = Fraction(run.memory.bit_length() - 1, N.bit_length() - 1)
    fits = eps + Fraction(1, 64) < 1
    at_fault = rf"^P: on {P} machines" if claim == "anna.thm_4_4" else rf"^N: on {P} to {N} machines"
    with pytest.raises(UsageError, match=r"^eps1: must exceed eps" if fits else at_fault):
        check_relations(claim, {**params, "eps1": min(float(eps) - 1e-9, 1.0)})
    moved = kept(chk, {**params, "eps1": 0.5})
    if fits:
        assert moved == {**params, "eps1": float(eps) + 1 / 64}
    elif claim == "anna.thm_4_4":  # more machines leave room: the fewest that do, then eps' above their eps
        assert (moved["P"], moved["eps1"]) == (16, 7 / 8 + 1 / 64)
    else:  # the sample sort's P^2 words leave no room on any count at N = 256: N moves to the least size with room
        assert (moved["N"], moved["P"]) == (4096, 16)
    check_relations(claim, moved)


@pytest.mark.parametrize("claim, given, flag, moved, beyond", [
    ("anna.lemma_b_13", {"N": 64, "P": 8, "fan": 40}, "fan", 28, 29),  # 8 + 2 * 28 - 1 = 63 < 64
    ("anna.lemma_b_13", {"N": 51, "P": 1, "fan": 5}, "P", 3, 1),  # one machine leaves no room for a fan
    ("anna.khop", {"N": 4096, "s_scale": 1.0}, "s_scale", 1.31055, 1.31054),  # s = 512 -> 672 words
    ("anna.khop", {"eps1": 1.0}, "eps1", 1 - 1 / 64, 1.0),
    ("anna.lemma_c_2", {"N": 16, "eps1": 0.5, "s_scale": 1.0}, "s_scale", 3.75001, 3.75),  # s = 4 -> 16
    ("anna.lemma_c_2", {"eps": 0.25, "eps1": 0.2, "s_scale": 64.0}, "eps1", 0.25 + 1 / 64, 0.25),
    ("anna.lemma_d_2", {"N": 100, "mv": 40}, "s_scale", 32.3001, 32.3),  # s = 64 -> 324 = 2 * 2 (1 + 2 * 40) words
    ("tint.rebuttal_fd_end_to_end", {"samples": 10}, "samples", 773, 772),  # the SPSA interval resolves +-25%
    ("two_heads.thm_4_2", {"N": 29, "M": 4}, "N", 28, 27),  # N/M whole instances
    ("anna.prop_e_3", {"N": 70, "B": 2, "L": 3}, "N", 64, 63),  # the butterfly's digits
    ("anna.prop_e_3", {"N": 81, "B": 3, "L": 9}, "L", 4, 5),  # B^L <= N
    ("anna.lemma_b_12", {"eps": 0.3}, "eps", 0.8, 0.7),  # s = 8 -> 256, what the sum needs on 32 machines
    ("anna.lemma_b_12", {"k": 40}, "k", 22, 23),  # rho < eps/2: k^2 < s = 512
    ("anna.lemma_b_12", {"N": 1024, "P": 2, "eps": 1.0}, "P", 4, 2),  # 2048 words a machine on 2 machines
    ("anna.lemma_b_12", {"N": 64, "P": 8, "eps": 1.0}, "N", 128, 64),  # the sum needs 128 words on 8 machines
    ("anna.thm_5_6", {"N": 4096, "eps": 0.5}, "eps", 10 / 12, 9 / 12),  # s = 64 -> 1024 (the splitter's fans)
    ("anna.thm_5_4", {"N": 512, "eps": 0.2, "sort": "letter"}, "eps", 5 / 9, 4 / 9),  # s = 4 -> 32
    ("anna.thm_5_6", {"N": 4096, "eps": 0.9, "eps1": 0.8}, "eps1", 11 / 12 + 1 / 64, 11 / 12),
    ("anna.thm_5_6", {"N": 1024, "eps": 0.9}, "N", 2048, 1024),  # no s below 1024 holds the splitter's fans
    ("two_heads.thm_1_4", {"M": 6, "window": 5, "sinks": 1}, "window", 4, 5),  # s + r < b = 6
    ("two_heads.thm_5_1", {"M": 4, "window": 3, "sinks": 3}, "sinks", 0, 1),  # no window fits beside 3 sinks
    ("two_heads.thm_4_1", {"N": 64, "M": 100}, "M", 64, 65),  # M tokens sampled of the N
    ("two_heads.thm_4_1", {"d": 1, "input": "needle"}, "d", 2, 1),  # a constant coordinate and the needle's
    ("two_heads.lower_bound", {"N": 8, "M": 16, "input": "needle"}, "M", 8, 9),
    ("two_heads.rebuttal_kv_memory", {"N": 64, "M": 64, "points": 7}, "points", 6, 7),  # N/2^(points-1) >= 2
    ("anna.rebuttal_linear_memory", {"N": 8, "points": 4}, "points", 3, 4),
    ("anna.thm_c_1", {"N": 4096, "eps1": 0.5, "s_scale": 1.0}, "s_scale", 17.4844, 17.48),  # s = 64 -> 1120
    ("anna.thm_4_2", {"N": 4096, "eps1": 0.5, "s_scale": 1.0}, "s_scale", 17.4844, 17.48),  # the splitter's fans
    ("tint.rebuttal_size_growth", {"layers": 9}, "layers", 2, 3),  # the tiny model's two layers
    ("tint.rebuttal_size_growth", {"layers": 1, "steps": 1}, "steps", 3, 2),  # three values of n_sim * steps
    ("anna.lemma_b_4", {"q": 4, "alpha": 8}, "alpha", 4, 5),  # distinct senders
    ("anna.alg_1", {"c": 2.0}, "c", 2.781, 2.78),  # rho < 1/3 at r = 0.2 from c = 2.7806 on
    ("anna.rebuttal_linear_memory", {"c": 20.0}, "c", 9.99999, 10.0),  # c r below 2 at r = 0.2
])
def test_a_value_a_run_cannot_take_is_refused_before_it_and_moved_by_the_fuzz(claim, given, flag, moved,
                                                                               beyond) -> None:
    """A memory too small for the run (or, for Lemma B.13, not below N), an eps' not above eps, too few SPSA directions
    to resolve the claim's tolerance, sizes that hold no whole number of instances or butterfly digits, a window and
    sinks that leave no query in an oracle block, a sampled block longer than the input, an input kind short of
    coordinates, or a doubling sweep that starts below 2, is refused before any work, naming the flag that sets it, and
    the fuzz moves that value to the nearest that runs (the least s_scale to six digits, the nearest exponent eps, the
    largest fan, eps + 1/64, the fewest directions, the nearest multiple or power, the widest window, fewer sinks, M =
    N, the least d, the most points or the model's layers), while the value a step short of it (``beyond``) is still
    refused. Drawn freely, such values were refused in 504 of 1229 draws of a one-minute fuzz of Lemma B.13, 115 of 200
    of anna.khop and 136 of 160 of Thm 5.6, and in 241 of 356 draws of a 20-second fuzz of Lemma B.12, 93 of 304 of
    Lemma D.2, 84 of 166 of the TinT finite-difference rebuttal, 63 of 176 of Two Heads' Thm 4.2, 3,816 of 5,590 of
    Prop. E.3, 25 of 61 of Two Heads' Thm 1.4, 6 of 16 of its Thm 4.1, 2 of 12 of its key-value memory rebuttal,
    23 of 43 of ANNA's Thm C.1, 162 of 429 of TinT's size growth, 12 of 318 of Lemma B.4 and 7 of 22 of ANNA's
    linear-memory rebuttal."""
    from attnsim.verify.relations import check_relations

    chk = get_checker(claim)
    params = chk.resolve(given)
    with pytest.raises(UsageError) as refusal:
        check_relations(claim, params)
    assert refusal.value.param == flag
    after = kept(chk, params)
    assert after == {**params, flag: moved}
    check_relations(claim, after)
    with pytest.raises(UsageError):
        check_relations(claim, {**after, flag: beyond})
