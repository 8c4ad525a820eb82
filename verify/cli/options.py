"""The option vocabulary every command shares, so that one name means one thing everywhere.

* ``--format NAME``: only which printed format a command uses. The names are the same in every
  command: ``table`` (a terminal table; tab-separated lines when stdout is not a terminal), ``md``,
  ``tex``, ``csv`` and ``json``, each where it applies (:data:`FORMATS`).
* ``--json PATH|-``: write the command's full record as JSON to PATH. With ``-`` the JSON goes to
  stdout and nothing else does: the printed format goes to stderr (:func:`human_stream`).
* ``--seeds K``: how many independent seeded runs (a claim parameter wherever a check repeats);
  ``--seed S``: the seed of every random choice.
* ``--scheduler WHERE``: where independent work runs (:data:`SCHEDULERS`): ``serial`` in this process,
  ``processes`` a local process pool, ``local`` a Dask LocalCluster, or ``tcp://HOST:PORT`` a running
  Dask scheduler; ``--workers K`` says how many tasks run at once (threads in this process under
  ``serial``, worker processes otherwise).
* ``--quick``: the command's small size (a flag; there is no ``--no-quick``).
* ``--out DIR``: the folder a command writes into.
* ``--max-memory SIZE``: refuse work estimated to need more.

:data:`VOCABULARY` holds the help of each shared option; every command builds them with the
functions below, and a test walks every command and fails on a name used with another meaning or a
record-producing command without ``--json``.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Any, Optional, Sequence, TextIO

import typer

from attnsim.verify.registry import UsageError

FORMATS = ("table", "md", "tex", "csv", "json")
FORMAT_KINDS: dict[str, tuple[str, ...]] = {
    "rows": ("table", "md", "csv", "tex", "json"),
    "record": ("table", "md", "json"),
    "formulas": ("table", "md", "tex", "json"),
    "study": ("table", "json"),
}
"""One ``--format`` set per kind of output (README, "Output formats"): ``rows`` (a table of rows: claims, growth,
prove, fuzz, bench), ``record`` (one check record: check), ``formulas`` (bounds and counts as formulas: bounds,
tint-size), ``study`` (a study's report of several parts: run, precision)."""
SCHEDULERS = ("serial", "processes", "local", "tcp://HOST:PORT")
VOCABULARY = {
    "--json": "write the full record as JSON to PATH; with -, to stdout and nothing else (the printed "
              "format goes to stderr)",
    "--workers": "how many tasks run at once: threads under --scheduler serial, worker processes otherwise "
                 "(default: {default})",
    "--seed": "seed of every random choice",
    "--quick": "small sizes: {what}",
    "--max-memory": "refuse work estimated to need more (e.g. 4G, 25%; default: half the available memory)",
    "--out": "the folder written",
}
"""The help of every option that more than one command takes (``{...}``: filled per command)."""


def range_words(low: float | None, high: float | None) -> str:
    """A number's range in words: ``0 to 1000``, ``at least 1`` (the :data:`INT_MAX` cap goes unsaid)."""
    from attnsim.verify.registry import INT_MAX

    if high is None or high >= INT_MAX:
        return "any" if low is None else f"at least {low}"
    return f"at most {high}" if low is None else f"{low} to {high}"


def bounded(help: str, low: int | None, high: int | None) -> dict[str, Any]:
    """Keywords of a ``typer.Option`` for an integer in ``low..high``: the range said in words in its help (the
    CLI library would print ``[1<=x<=9007199254740992]``) and checked by a callback that names the flag."""

    def check(param: typer.CallbackParam, value: Optional[int]) -> Optional[int]:
        if value is not None and ((low is not None and value < low) or (high is not None and value > high)):
            name = max(param.opts, key=len)
            raise UsageError(f"{name}: must be {range_words(low, high)}, got {value}")
        return value

    return {"callback": check, "metavar": "INT", "help": f"{help} ({range_words(low, high)})"}


def format_option(choices: Sequence[str], default: str) -> Any:
    """A ``--format`` option offering ``choices`` (one of the sets of :data:`FORMAT_KINDS`)."""
    assert tuple(choices) in FORMAT_KINDS.values() and default in choices
    return typer.Option(default, "--format", help="output format, one of: " + ", ".join(choices))


def check_format(value: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``, else a :class:`UsageError` naming ``--format``."""
    if value not in choices:
        raise UsageError(f"--format: must be one of {', '.join(choices)}; got {value!r}")
    return value


def json_option() -> Any:
    """The ``--json PATH|-`` option (``-``: stdout, and the printed format moves to stderr)."""
    return typer.Option(None, "--json", metavar="PATH|-", help=VOCABULARY["--json"])


def paper_option() -> Any:
    """The ``--paper ID`` option; its help names the papers ``attnsim.paper_refs`` knows."""
    from attnsim.paper_refs import papers

    return typer.Option(None, "--paper", help=f"one of: {', '.join(papers())} (default: all)")


def workers_option(default: Any, default_text: str) -> Any:
    """The ``--workers K`` option: how many tasks run at once under the chosen scheduler."""
    return typer.Option(default, "--workers", help=VOCABULARY["--workers"].format(default=default_text))


def seed_option() -> Any:
    """The ``--seed S`` option."""
    return typer.Option(0, "--seed", **bounded(VOCABULARY["--seed"], 0, 2 ** 32 - 1))


def quick_option(what: str) -> Any:
    """The ``--quick`` flag (no ``--no-quick``); ``what`` says what the small size is."""
    return typer.Option(False, "--quick", help=VOCABULARY["--quick"].format(what=what))


def max_memory_option() -> Any:
    """The ``--max-memory SIZE`` option."""
    return typer.Option(None, "--max-memory", help=VOCABULARY["--max-memory"])


def human_stream(json_out: Optional[str]) -> TextIO:
    """Where the printed format goes: stderr when ``--json -`` owns stdout, else stdout."""
    return sys.stderr if json_out == "-" else sys.stdout


def emit(text: str, json_out: Optional[str]) -> None:
    """Print ``text`` (the printed format) on :func:`human_stream`."""
    print(text, file=human_stream(json_out))


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
        return ascii_tex("\n".join(lines + [r"\bottomrule", r"\end{tabular}"]))
    return "\n".join("\t".join(r) for r in [list(header)] + cells)


def ascii_tex(text: str) -> str:
    """LaTeX with every non-ASCII character written as its command (``ψ`` as ``\\ensuremath{\\psi}``, ``§`` as
    ``\\textsection``), so that it compiles without a Unicode engine or inputenc (pylatexenc's table)."""
    from pylatexenc.latexencode import unicode_to_latex

    return unicode_to_latex(text, non_ascii_only=True, unknown_char_policy="keep")


def is_terminal() -> bool:
    """Whether stdout is a terminal (tables are drawn there; plain lines otherwise)."""
    return sys.stdout.isatty()
