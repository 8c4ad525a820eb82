"""The option vocabulary every command shares, so that one name means one thing everywhere.

* ``--format NAME``: what a command prints on stdout. The names are the same in every command:
  ``table`` (a terminal table; tab-separated lines when stdout is not a terminal), ``md``, ``tex``,
  ``csv`` and ``json``, each where it applies (:data:`FORMATS`).
* ``--json PATH``: also write the command's full record as JSON to PATH (``-``: to stdout, which is the
  same as ``--format json``).
* ``--seeds K``: how many independent seeded runs (a claim parameter wherever a check repeats).
* ``--scheduler WHERE``: where independent work runs (:data:`SCHEDULERS`): ``serial`` in this process,
  ``processes`` a local process pool, ``local`` a Dask LocalCluster, or ``tcp://HOST:PORT`` a running
  Dask scheduler; ``--workers`` says how many.
* ``--out DIR``: the folder a command writes into.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

import typer

from attnsim.verify.registry import UsageError

FORMATS = ("table", "md", "tex", "csv", "json")
SCHEDULERS = ("serial", "processes", "local", "tcp://HOST:PORT")


def format_option(choices: Sequence[str], default: str) -> Any:
    """A ``--format`` option offering ``choices`` (a subset of :data:`FORMATS`, in that order)."""
    assert set(choices) <= set(FORMATS) and default in choices
    return typer.Option(default, "--format", help="output format, one of: " + ", ".join(choices))


def check_format(value: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``, else a :class:`UsageError` naming ``--format``."""
    if value not in choices:
        raise UsageError(f"--format: must be one of {', '.join(choices)}; got {value!r}")
    return value


def json_option() -> Any:
    """The ``--json PATH`` option (``-`` for stdout)."""
    return typer.Option(None, "--json", metavar="PATH|-",
                        help="also write the full record as JSON to PATH (- : stdout)")


def scheduler_option(default: str, choices: Sequence[str] = SCHEDULERS) -> Any:
    """A ``--scheduler`` option with the shared meaning (:data:`SCHEDULERS`)."""
    return typer.Option(default, "--scheduler", help="where the work runs, one of: " + ", ".join(choices))


def check_scheduler(value: str, choices: Sequence[str] = SCHEDULERS) -> str:
    """``value`` if it names one of ``choices`` (``tcp://HOST:PORT`` matches any tcp address)."""
    ok = value in choices or ("tcp://HOST:PORT" in choices and value.startswith("tcp://") and len(value) > 6)
    if not ok:
        raise UsageError(f"--scheduler: must be one of {', '.join(choices)}; got {value!r}")
    return value


def check_json_path(path: Optional[str]) -> None:
    """Refuse a ``--json`` path that cannot be written, before any work (``-`` and None pass)."""
    if path is not None and path != "-":
        from attnsim.verify import guards

        guards.output_file(path, "--json")


def write_json(obj: Any, path: Optional[str], text: Optional[str] = None) -> None:
    """Write ``obj`` as JSON to ``path`` (``-``: stdout; None: nowhere). ``text``: an encoding done already."""
    if path is None:
        return
    body = text if text is not None else json.dumps(obj, indent=2, default=str)
    if path == "-":
        print(body)
        return
    try:
        Path(path).write_text(body + "\n")
    except OSError as e:
        raise UsageError(f"--json: cannot write {path}: {e.strerror or e}") from None


def render_rows(header: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str) -> str:
    """``rows`` under ``header`` as ``md``, ``csv``, ``tex`` or tab-separated text (``table`` off a terminal)."""
    cells = [[str(c) for c in r] for r in rows]
    if fmt == "md":
        esc = [[c.replace("|", r"\|") for c in r] for r in cells]
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in esc])
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(header)
        w.writerows(cells)
        return buf.getvalue().rstrip("\n")
    if fmt == "tex":
        from attnsim.verify.report.latex import tex_escape

        lines = [r"\begin{tabular}{" + "l" * len(header) + "}", r"\toprule", " & ".join(map(tex_escape, header))
                 + r" \\", r"\midrule"]
        lines += [" & ".join(map(tex_escape, r)) + r" \\" for r in cells]
        return "\n".join(lines + [r"\bottomrule", r"\end{tabular}"])
    return "\n".join("\t".join(r) for r in [list(header)] + cells)


def pretty_formula(formula: Any) -> str:
    """A sympy string as a reader writes it: ``n**2*H`` becomes ``n^2·H``."""
    return str(formula).replace("**", "^").replace("*", "·")


def is_terminal() -> bool:
    """Whether stdout is a terminal (tables are drawn there; plain lines otherwise)."""
    return sys.stdout.isatty()
