"""attnsim prove: a few obligations at small cost, a plan twin's counterexample replayed, the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from attnsim.verify.cli.app import app, main
from attnsim.verify.prove.claims import obligations
from attnsim.verify.prove.identities import prove_all
from attnsim.verify.prove.run import run_obligation, run_plan_twin
from attnsim.verify.prove.status import CHECKED, PLAN_PROVED, proof_status
from attnsim.verify.twins import all_twins

ROOT = Path(__file__).resolve().parents[1]


def _pick(claim: str, name: str, variant: str) -> object:
    return next(o for o in obligations(claim) if o.name == name and o.variant == variant)


def test_two_obligations_are_proved_for_every_size():
    for name in ("coverage[fused]", "units[pair.fused]"):
        row = run_obligation(_pick("two_heads.lemma_3_1", name, "scheme=fused length=strict"))
        assert (row.status, row.scope) == ("proved", "every size"), row


def test_a_count_is_proved_against_the_formula():
    row = run_obligation(_pick("two_heads.lemma_3_3", "counts[calls]", "any"))
    assert row.status == "proved"


def test_a_plan_twin_gives_a_counterexample_whose_replay_fails():
    t = next(t for t in all_twins() if t.claim == "two_heads.lemma_3_1" and t.name == "plan_key_range_short")
    assert t.kind == "plan"
    r = run_plan_twin(t)
    assert r.caught and r.row is not None
    assert r.row.status == "counterexample" and {"N", "M"} <= set(r.row.counterexample or {})
    assert r.row.replay is not None and r.row.replay["verdict"] == "fail"
    cex = r.row.counterexample or {}
    assert cex["N"] >= 2 * cex["M"] + 1 and cex["M"] >= 3  # a size at which the bug can show
    assert len(r.rows) > 1 and all(x.replay and x.replay["verdict"] == "fail" for x in r.rows)


def test_cvc5_reads_the_exported_query():
    import z3

    from attnsim.verify.prove import cvc5kit

    n, b = z3.Ints("n b")
    text = cvc5kit.smt2([b >= 1, z3.Sum(n) >= 0], z3.And(n / b <= n))  # one-argument + and and, as z3 prints
    assert "(+ n)" not in text and cvc5kit.check(text).status == "unsat"
    assert cvc5kit.check(cvc5kit.smt2([b >= 1], n / b < n)).status == "sat"


def test_the_lemma_schemas_are_theorems_for_both_solvers():
    """Every instance cvc5 is given is a case of a schema both solvers prove for all integers."""
    import z3

    from attnsim.verify.prove import cvc5kit, hints

    for name, schema in hints.SCHEMAS.items():
        s = z3.Solver()
        s.add(z3.Not(schema))
        assert s.check() == z3.unsat, name
        assert cvc5kit.check(cvc5kit.smt2([], schema, lemmas=False)).status == "unsat", name
    wrong = z3.Implies(z3.Int("d") >= 1, z3.Int("d") * z3.Int("x") >= z3.Int("x") + 1)  # a false schema is refused
    assert cvc5kit.check(cvc5kit.smt2([], wrong, lemmas=False)).status == "sat"


def test_the_lemma_instances_let_cvc5_settle_a_ceiling_identity():
    """⌈n/(H'L')⌉ written two ways: cvc5 gives up on the bare query and proves it with the instances."""
    import z3

    from attnsim.verify.prove import cvc5kit, hints

    n, Hp, Lp = z3.Ints("n Hp Lp")
    hyps, goal = [n >= 1, Hp >= 1, Lp >= 1], (n + Hp * Lp - 1) / (Hp * Lp) == -((-n) / (Hp * Lp))
    assert cvc5kit.check(cvc5kit.smt2(hyps, goal, lemmas=False)).status == "unknown"
    assert cvc5kit.check(cvc5kit.smt2(hyps, goal)).status == "unsat"
    s = z3.Solver()
    s.add(*hints.instances(hyps, goal))
    assert s.check() == z3.sat  # the instances alone are consistent (they are true facts)


def test_per_call_identities_hold():
    assert all(i.proved for i in prove_all())


def test_status_column():
    rows = {"two_heads.lemma_3_1": [{"obligation": "index", "status": "proved", "scope": "every size"}]}
    assert proof_status("two_heads.lemma_3_1", rows).startswith(PLAN_PROVED)
    assert proof_status("two_heads.thm_4_1", rows) == CHECKED
    bad = {"two_heads.lemma_3_1": [{"obligation": "index", "status": "unknown", "scope": "every size"}]}
    assert proof_status("two_heads.lemma_3_1", bad).startswith("proof failed")


def test_cli_proves_a_claim_and_refuses_an_unknown_one(capsys):
    ok = CliRunner().invoke(app, ["prove", "two_heads.lemma_3_3", "--format", "md"])
    assert ok.exit_code == 0, ok.output
    assert "| two_heads.lemma_3_3 | packing |" in ok.output
    with pytest.raises(SystemExit) as bad:
        main(["prove", "two_heads.nothing"])
    assert bad.value.code == 2 and "error: CLAIM" in capsys.readouterr().err


def test_sim_never_imports_the_solver():
    for path in (ROOT / "sim").rglob("*.py"):
        assert not re.search(r"^\s*(import|from)\s+z3", path.read_text(encoding="utf-8"), re.M), path


def _int_seen(lay, causal: bool) -> dict[tuple[int, int], int]:
    """(query, key) → times the call sees it, counted row by row on Python ints."""
    from attnsim.sim.two_heads import plan as P

    keys = {r: t for s in lay.segs if s.what == "key" for r, t in zip(*P.seg_tokens(s))}
    out: dict[tuple[int, int], int] = {}
    for s in lay.segs:
        if s.what == "query":
            for rq, i in zip(*P.seg_tokens(s)):
                for rk, j in keys.items():
                    if not causal or rk <= rq:
                        out[(i, j)] = out.get((i, j), 0) + 1
    return out


def test_the_solver_counts_what_the_rows_hold():
    """Cross-check of the encoding: on the plan the construction enumerates (Python ints, Lemma 3.1 at
    N = 7, M = 3), every pair is seen once per step, and the solver's count agrees call by call."""
    import z3

    from attnsim.sim.two_heads import plan as P
    from attnsim.verify.prove.layouts import seen

    N, b = 7, 3
    n = P.num_blocks(P.INT, N, b)
    totals: dict[tuple[str, int, int], int] = {}
    for c in range(P.pair_count(n, False)):
        tq, tk, si = P.pair_index(P.INT, n, False, c)
        q0, k0 = P.block_start(tq, b), P.block_start(tk, b)
        lay = P.pair_layout(P.INT, P.block_len(P.INT, N, b, q0), P.block_len(P.INT, N, b, k0), q0, k0,
                            P.PAPER_STEPS[si])
        counted = _int_seen(lay, False)
        for (i, j), k in counted.items():
            totals[(P.PAPER_STEPS[si], i, j)] = totals.get((P.PAPER_STEPS[si], i, j), 0) + k
        for i, j in ((q0, k0), (N - 1, 0), (0, N - 1)):
            assert z3.simplify(seen(lay, False, z3.IntVal(i), z3.IntVal(j))).as_long() == counted.get((i, j), 0)
    assert totals == {(s, i, j): 1 for s in P.PAPER_STEPS for i in range(N) for j in range(N)}
