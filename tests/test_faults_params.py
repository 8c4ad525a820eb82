"""The fault catalogue over every claim's own parameters (docs/faults.md): each parameter of each claim gets a huge
value (10^12), a value below its domain and a garbage string, and each must be refused in one line that names
exactly that flag (``error: --flag: ...``), exit 2, no traceback, in well under a second of CPU time.

No job runs: the measurement is replaced by a stand-in that records the case as a wrong acceptance, so a value
that passes every domain, relation and cost estimate is caught here instead of being run. The summary (rows,
tracebacks, hangs, aborts, wrong names, wrong acceptances) is printed with ``-s``.
"""

from __future__ import annotations

import sys
import time
from collections import Counter

from attnsim.verify import check as check_module
from attnsim.verify.cli.app import main
from attnsim.verify.registry import Param, all_checkers

CHECKERS = all_checkers()
HUGE = 10 ** 12


class Accepted(Exception):
    """Raised in place of a measurement: the command line got past every refusal."""


def bad_values(p: Param) -> list[tuple[str, str]]:
    """(kind, value) pairs out of ``p``'s domain: huge, below its minimum, garbage."""
    if p.type is bool:
        return [("garbage", "maybe")]
    if p.type is str:
        return [("garbage", "no-such-choice")] if p.choices else [("empty", "")]
    out = [("huge", str(HUGE) if p.type is int else "1e12")]
    if p.minimum is not None:
        low = int(p.minimum) - 1 if p.type is int else p.minimum - max(1.0, abs(p.minimum))
        out.append(("below", str(low)))
    return out + [("garbage", "abc")]


ROWS = [(claim, p.flag, kind, value) for claim, chk in CHECKERS.items() for p in chk.params
        for kind, value in bad_values(p)]


def outcome(argv: list[str], flag: str, capsys) -> tuple[str, str]:
    """What the command line did: ``ok`` or the kind of fault, and the one line (or the last)."""
    sys.argv = ["attnsim", *argv]
    start = time.process_time()
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    except Accepted:
        return "wrong acceptance", ""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    last = lines[-1] if lines else ""
    if "Traceback" in err:
        return "traceback", last
    if time.process_time() - start > 2:
        return "hang", last
    if code != 2 or len(lines) != 1 or not last.startswith("error: "):
        return "abort" if code not in (1, 2) else "wrong acceptance", last
    if not last.startswith(f"error: {flag}: "):
        return "wrong name", last
    return "ok", last


def test_every_claim_parameter_refused_naming_its_flag(monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ATTNSIM_MAX_MEMORY", "50%")

    def stand_in(chk, ctx):
        raise Accepted(ctx.claim)

    monkeypatch.setattr(check_module, "_measure", stand_in)
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    faults: Counter[str] = Counter()
    bad = []
    for claim, flag, kind, value in ROWS:
        result, line = outcome(["check", claim, flag, value], flag, capsys)
        faults[result] += 1
        if result != "ok":
            bad.append((claim, flag, kind, value, result, line))
    summary = {k: faults[k] for k in ("traceback", "hang", "abort", "wrong name", "wrong acceptance")}
    print(f"\nclaim-parameter catalogue: {len(ROWS)} rows over {len(CHECKERS)} claims; "
          + ", ".join(f"{v} {k}s" for k, v in summary.items()))
    assert len(ROWS) > 500
    assert not bad, bad
