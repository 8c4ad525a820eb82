"""``attnsim prove``: the Two Heads call plans proved for every size; counterexamples replayed as checks."""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Optional

import typer

from attnsim.verify.cli.options import (
    FORMAT_KINDS,
    check_format,
    check_json_path,
    format_option,
    json_option,
    render_rows,
    write_json,
)

FORMATS = FORMAT_KINDS["rows"]


def _cex(row: Any) -> str:
    if row.counterexample is None:
        return ""
    text = " ".join(f"{k}={v}" for k, v in row.counterexample.items())
    if row.replay:
        text += f"; replay {row.replay['verdict']} at {row.replay['params']}"
    return text


def _proof_rows(claims: list[str], rlimit: int, fmt: str, json_path: Optional[str]) -> int:
    from attnsim.verify.prove.run import OUTPUT, all_proved, run
    from attnsim.verify.prove.status import summary

    start, cpu = time.perf_counter(), time.process_time()

    def note(row: Any) -> None:
        print(f"prove: {row.claim} {row.obligation} [{row.variant}] {row.status} ({row.seconds:.2f}s)",
              file=sys.stderr, flush=True)

    rows = run(claims, rlimit, note)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    ok = all_proved(rows)
    by_claim = {c: [r.as_dict() for r in rows if r.claim == c] for c in claims}
    status = summary(by_claim)
    plan = [r for r in rows if r.obligation != OUTPUT and not r.obligation.startswith("identity")]
    both = sum(r.status == "proved" and r.cvc5 == "unsat" for r in plan)
    record = {"seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
              "load_average": None if load is None else [round(x, 2) for x in load], "proved": ok,
              "plan_rows": len(plan), "plan_rows_both_solvers": both, "status": status,
              "obligations": [r.as_dict() for r in rows]}
    if fmt == "json" or json_path == "-":
        write_json(record, "-")
    else:
        header = ("claim", "obligation", "variant", "status", "cvc5", "seconds", "scope", "counterexample")
        body = [(r.claim, r.obligation, r.variant, r.status, r.cvc5 or "-", f"{r.seconds:.3f}", r.scope, _cex(r))
                for r in rows]
        body += [(c, "(claim)", "", st, "", "", "", "") for c, st in status.items()]
        print(render_rows(header, body, "md" if fmt == "md" else fmt))
        proved = sum(r.status == "proved" for r in rows)
        print(f"{proved}/{len(rows)} obligations proved (call plans, per-call and output identities); "
              f"{both}/{len(plan)} plan rows unsat for both z3 and cvc5; {seconds:.1f}s wall, {cpu:.1f}s CPU"
              + ("" if load is None else f", load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"),
              file=sys.stderr)
        for c, st in status.items():
            print(f"  {c}: {st}", file=sys.stderr)
        write_json(record, json_path)
    return 0 if ok else 1


def _twin_rows(claims: list[str], rlimit: int, fmt: str, json_path: Optional[str]) -> int:
    from attnsim.verify.prove.run import run_plan_twin
    from attnsim.verify.twins import all_twins

    twins = [t for t in all_twins() if t.kind == "plan" and t.claim in claims]
    results = []
    for t in twins:
        r = run_plan_twin(t, rlimit)
        print(f"prove --twins: {t.claim} {t.name} {'caught' if r.caught else 'NOT CAUGHT'} ({r.seconds:.1f}s)",
              file=sys.stderr, flush=True)
        results.append(r)
    ok = bool(results) and all(r.caught for r in results)
    record = {"twins": [r.as_dict() for r in results], "all_caught": ok}
    if fmt == "json" or json_path == "-":
        write_json(record, "-")
    else:
        header = ("claim", "twin", "caught", "counterexamples (replays failing)", "first obligation", "counterexample")
        body = [(r.claim, r.name, "caught" if r.caught else "NOT CAUGHT",
                 f"{len(r.rows)} ({sum(x.replay is not None and x.replay['verdict'] == 'fail' for x in r.rows)})",
                 r.row.obligation if r.row else "-", _cex(r.row) if r.row else "no counterexample") for r in results]
        print(render_rows(header, body, "md" if fmt == "md" else fmt))
        write_json(record, json_path)
    return 0 if ok else 1


def register(app: typer.Typer) -> None:
    """Add the ``prove`` command to ``app``."""
    @app.command()
    def prove(claims: Optional[list[str]] = typer.Argument(None, help="claim ids or the paper two_heads, "
                                                                     "or anna (the relay's plan and Lemma B.4's "
                                                                     "code), or tint (the stream layout) "
                                                                     "(default: every proved plan)"),
              twins: bool = typer.Option(False, "--twins", help="prove each broken plan twin instead: each must "
                                         "give a counterexample whose replay fails the ordinary check"),
              rlimit: Optional[int] = typer.Option(None, "--rlimit", help="z3 resource units per query "
                                                   "(deterministic, unlike seconds; over it a query is unknown; "
                                                   "default: verify/prove/run.py's RLIMIT)"),
              fmt: str = format_option(FORMATS, "table"),
              json_path: Optional[str] = json_option()) -> int:
        """Prove the call plans of the exact Two Heads constructions for every N and M (and window r,
        sinks s) with z3, and their per-call identities with sympy; exit 0 iff all are proved."""
        from attnsim.verify.prove.run import select
        from attnsim.verify.registry import UsageError

        check_format(fmt, FORMATS)
        check_json_path(json_path)
        from attnsim.verify.prove.run import RLIMIT

        rlimit = RLIMIT if rlimit is None else rlimit
        if not 0 < rlimit <= 100 * RLIMIT:  # RLIMIT is ten times the largest query's use: past 100x it bounds nothing
            raise UsageError(f"--rlimit: must be a number of resource units in 1..{100 * RLIMIT} (100 times the "
                             f"default), got {rlimit}")
        if claims and claims[0] in ("anna", "tint"):
            from attnsim.verify.cli.prove_beyond import prove_paper

            return prove_paper(claims[0], twins, rlimit, fmt, json_path)
        selected = select(claims)
        return (_twin_rows if twins else _proof_rows)(selected, rlimit, fmt, json_path)
