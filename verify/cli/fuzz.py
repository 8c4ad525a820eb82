"""``attnsim fuzz CLAIM``: hypothesis over the claim's parameter domains and inputs (:mod:`attnsim.verify.fuzz`).

Prints each shrunk failure as the ``attnsim check ...`` command that replays it (saved with its record under
``OUT/failures/``), and a summary: examples run and rejected, the worst bits of agreement and the worst
measured / bound found, and the failures. Exit 0 iff nothing failed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from attnsim.verify.cli.options import (
    FORMAT_KINDS,
    check_format,
    check_json_path,
    emit,
    format_option,
    json_option,
    render_rows,
    write_json,
)

FORMATS = FORMAT_KINDS["rows"]
HEADER = ("claim", "target", "numerics", "examples", "rejected", "worst bits", "worst measured / bound", "failures",
          "seconds")
REJECTIONS_SHOWN = 3
"""The most frequent reasons for rejected examples printed under the summary (JSON carries them all)."""


def _num(v: Optional[float]) -> str:
    return "—" if v is None else f"{v:.4g}"


def register(app: typer.Typer) -> None:
    """Add the ``fuzz`` command to ``app``."""
    @app.command()
    def fuzz(claim: str = typer.Argument(..., help="claim id (attnsim claims lists them)"),
             minutes: Optional[float] = typer.Option(None, "--minutes", metavar="T",
                                                     help="fuzz for T minutes of wall time (default 1 unless "
                                                          "--examples is given)"),
             examples: Optional[int] = typer.Option(None, "--examples", metavar="K", help="fuzz K examples"),
             target: str = typer.Option("error", "--target", help="climb toward the worst error (bits lost) or "
                                                                  "the worst count / bound: error or cost"),
             numerics: Optional[str] = typer.Option(None, help="the numerics of every example (default: the "
                                                               "claim's)"),
             out: Path = typer.Option(Path("attnsim-fuzz"), "--out", help="the folder written: the example "
                                      "database (hypothesis-db/) and the failing records (failures/)"),
             fmt: str = format_option(FORMATS, "table"),
             json_out: Optional[str] = json_option()) -> int:
        """Fuzz CLAIM's check with hypothesis over its parameter domains and inputs; print each failure, shrunk,
        as the attnsim check command that replays it; exit 0 iff none failed."""
        from attnsim.verify import guards
        from attnsim.verify.cli.check import find_checker
        from attnsim.verify.fuzz import fuzz as run_fuzz

        check_format(fmt, FORMATS)
        check_json_path(json_out)
        guards.output_folder(out, "--out")
        find_checker(claim)
        if minutes is None and examples is None:
            minutes = 1.0
        err = Console(stderr=True)

        def note(r) -> None:  # a line every 10 examples: the run may take minutes
            if r.examples and r.examples % 10 == 0:
                err.print(f"fuzz {claim}: {r.examples} examples, {r.rejected} rejected, worst bits "
                          f"{_num(r.worst_bits)}, worst measured / bound {_num(r.worst_ratio)}", highlight=False)

        result = run_fuzz(claim, examples=examples, minutes=minutes, target_kind=target, numerics=numerics,
                          out=out, on_example=note)
        for f in result.failures:
            emit(f"FAILED (shrunk): {f.command}", json_out)
            for reason in f.reasons[:5]:
                emit(f"  - {reason}", json_out)
        row = (claim, target, result.numerics or "none", result.examples, result.rejected, _num(result.worst_bits),
               _num(result.worst_ratio), len(result.failures), f"{result.seconds:.0f}")
        if fmt == "json" and json_out != "-":
            import json

            print(json.dumps(result.as_dict(), indent=2, default=str))
        elif fmt != "json":
            emit(render_rows(HEADER, [row], fmt), json_out)
            if result.cut:
                emit(f"{result.cut} example(s) still running when the time was up were stopped (among the rejected)",
                     json_out)
            for why, count in sorted(result.rejected_by.items(), key=lambda kv: -kv[1])[:REJECTIONS_SHOWN]:
                emit(f"rejected {count}: {why}", json_out)
            if result.worst_bits_at:
                emit(f"worst bits at: {result.worst_bits_at}", json_out)
            if result.worst_ratio_at:
                emit(f"worst measured / bound at: {result.worst_ratio_at}", json_out)
        write_json(result.as_dict(), json_out)
        return 0 if result.ok else 1
