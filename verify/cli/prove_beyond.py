"""``attnsim prove anna``: the relay's integer plan and Lemma B.4's code proved for every size (z3, cvc5)."""

from __future__ import annotations

import sys
import time
from collections import Counter
from typing import Any, Optional

from attnsim.verify.cli.options import render_rows, write_json


def _cex(row: Any) -> str:
    return " ".join(f"{k}={v}" for k, v in (row.counterexample or {}).items())


def prove_paper(paper: str, twins: bool, rlimit: int, fmt: str, json_path: Optional[str]) -> int:
    """Print one row per obligation (or per twin) and exit 0 iff all are proved (every twin caught)."""
    from attnsim.verify.prove import beyond

    start = time.perf_counter()
    if twins:
        results = beyond.run_twins(paper, rlimit)
        ok = bool(results) and all(r.caught if r.twin.observable else r.found for r in results)
        record: dict[str, Any] = {"twins": [r.as_dict() for r in results], "all_caught": ok}
        header = ("claim", "twin", "verdict", "obligations with a counterexample (rows)", "first counterexample",
                  "replay")
        body = [(r.twin.claim, r.twin.name, ("caught" if r.caught else "NOT CAUGHT") if r.twin.observable else
                 ("prover only" if r.found else "NOT FOUND"),
                 ", ".join(f"{o} ({n})" for o, n in Counter(x.obligation for x in r.rows).items()) or "-",
                 _cex(r.rows[0]) if r.rows else "-",
                 f"{r.replay['verdict']} at {r.replay['params']}" if r.replay else "-") for r in results]
    else:
        def note(row: Any) -> None:
            print(f"prove: {row.claim} {row.obligation} {row.status} ({row.seconds:.2f}s)", file=sys.stderr, flush=True)
        rows = beyond.run(paper, rlimit, note)
        for c, st in beyond.status(rows).items():
            print(f"  {c}: {st}", file=sys.stderr)
        ok = bool(rows) and all(r.status == "proved" for r in rows)
        status = beyond.status(rows)
        record = {"proved": ok, "status": status, "obligations": [r.as_dict() for r in rows]}
        header = ("claim", "obligation", "variant", "status", "cvc5", "seconds", "scope", "counterexample")
        body = [(r.claim, r.obligation, r.variant, r.status, r.cvc5 or "-", f"{r.seconds:.3f}", r.scope, _cex(r))
                for r in rows]
        body += [(c, "(claim)", "", st, "", "", "", "") for c, st in status.items()]
    seconds = time.perf_counter() - start
    record["seconds"] = round(seconds, 1)
    if fmt == "json" or json_path == "-":
        write_json(record, "-")
    else:
        print(render_rows(header, body, "md" if fmt == "md" else fmt))
        print(f"{'all caught' if ok and twins else 'all proved' if ok else 'NOT all'} ({len(body)} rows), "
              f"{seconds:.1f}s", file=sys.stderr)
        write_json(record, json_path)
    return 0 if ok else 1
