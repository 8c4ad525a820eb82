"""``attnsim check``: one claim's construction and reference, one record.

``attnsim check CLAIM --help`` lists that claim's own parameters (type, range in words, default), real options
generated from the checker's :class:`~attnsim.verify.registry.Param` list
(:mod:`attnsim.verify.cli.claim_options`); they are given as ``--name value``.
"""

from __future__ import annotations

import difflib
import math
from typing import Any, Optional

import typer

from attnsim.verify.cli.options import (
    FORMAT_KINDS,
    check_format,
    check_json_path,
    format_option,
    human_stream,
    json_option,
    max_memory_option,
    render_rows,
    seed_option,
    write_json,
)
from attnsim.verify.limits import CHECK_SECONDS
from attnsim.verify.registry import Checker, UsageError

FORMATS = FORMAT_KINDS["record"]


def parse_extra_args(args: list[str]) -> dict[str, str]:
    """``--name value`` / ``--name=value`` pairs (dashes in names become underscores)."""
    out: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("--") or a == "--":
            raise UsageError(f"unexpected argument {a!r}; parameters are given as --name value")
        name, eq, value = a[2:].partition("=")
        if not eq:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise UsageError(f"--{name}: missing value")
            value = args[i + 1]
            i += 1
        out[name.replace("-", "_")] = value
        i += 1
    return out


def find_checker(claim: str) -> Checker:
    """The checker of ``claim``; an unknown id is a :class:`UsageError` suggesting close matches."""
    from attnsim.verify.registry import all_checkers, load_checker

    found = load_checker(claim)
    if found is not None:
        return found
    checkers = all_checkers()
    close = difflib.get_close_matches(claim, list(checkers), n=4, cutoff=0.5)
    if not close:  # a bare result name such as lemma_3_1, or a paper prefix
        close = [c for c in checkers if claim and (c.endswith("." + claim) or c.startswith(claim))][:4]
    hint = f"did you mean {', '.join(close)}?" if close else "`attnsim claims` lists them"
    raise UsageError(f"CLAIM: no checker for {claim!r}; {hint}")


def numerics_line(chk: Checker) -> str:
    """The numerics the claim accepts, in one line."""
    return (f"numerics: {', '.join(chk.numerics)} (default {chk.default_numerics})" if chk.numerics
            else "numerics: none (the claim counts; --numerics is refused)")


def params_help(chk: Checker) -> str:
    """The claim's parameters as aligned plain-text lines (``--list-params``): option, type and help with the
    domain in words and the default, as in the help of ``attnsim check CLAIM``."""
    from attnsim.verify.cli.claim_options import METAVARS, param_help

    rows = [(f"{p.flag} {METAVARS.get(p.type, 'TEXT')}", param_help(p)) for p in chk.params]
    width = max((len(a) for a, _ in rows), default=0)
    lines = [f"Parameters of {chk.claim}:"]
    lines += [f"  {a.ljust(width)}  {b}" for a, b in rows] or ["  (none)"]
    lines.append(f"  {numerics_line(chk)}")
    return "\n".join(lines)


def format_params(params: dict[str, Any]) -> str:
    """``name=value`` pairs on one line (None values omitted)."""
    return ", ".join(f"{k}={v}" for k, v in params.items() if v is not None)


def print_record(r: dict[str, Any], file: Any = None, fmt: str = "table") -> None:
    """The record as a short text block and a resource table (counts, exact formula, bound, ratio), on
    ``file`` (default stdout); formulas in the notation of :mod:`attnsim.theory.notation`."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from attnsim.theory.notation import at, bound_text, number
    from attnsim.verify.regime import outside_stated_range

    console = Console(file=file, soft_wrap=True)  # a long reference name stays on its line
    paper = r["claim"].split(".")[0]
    values = {**r["params"], **((r.get("extra") or {}).get("derived") or {})}
    bits = r["error_bits"]
    extra = r.get("extra") or {}
    need, decode_loss = r.get("min_bits"), extra.get("decode_allowance_bits")
    kept, precision = extra.get("direct_bits"), extra.get("precision_bits")
    floor = extra.get("floor_allowance_bits")
    asked = "" if need is None else f"; {need:.1f} asked" + (
        f", {decode_loss:.1f} allowed for {extra.get('decode_allowance_for', 'the decode')}" if decode_loss else "") + (
        f", {floor:.1f} for the format's smallest numbers" if floor else "") + (
        f"; the model itself keeps {kept:.1f} evaluated directly" if kept is not None and precision is not None
        and kept < precision else "")
    bits_s = "" if bits is None else (" (exact)" if bits == math.inf else f" ({bits:.1f} bits{asked})")
    agree = {True: "exact" if bits == math.inf else f"yes{bits_s}", False: f"NO{bits_s}", None: "n/a"}[r["agree"]]
    console.print(f"[bold]{escape(r['claim'])}[/bold] ({escape(r['label'])})  numerics={escape(r['numerics'])}  "
                  f"seed={r['seed']}"
                  + (f"  length={escape(r['length_convention'])}" if r["length_convention"] else ""))
    console.print(f"  params: {format_params(r['params'])}", markup=False, highlight=False)
    for line in (r.get("extra") or {}).get("summary", []):
        console.print(f"  {line}", markup=False, highlight=False)
    ref = f"; reference: {r['reference']}" if r.get("reference") else ""
    console.print(f"  agreement: {agree}  (evidence: {r.get('evidence')}{ref})", markup=False)
    header = ("resource", "measured", "exact count", "bound", "measured / bound", "leading constant", "containment")
    rows = []
    for name in sorted(set(r["counts"]) | set(r["predicted"]) | set(r["bounds"])):
        b = r["bounds"].get(name, {})
        cont = r["containment"].get(name, {})
        measured = r["counts"].get(name)
        bound = f"{bound_text(b['formula'], paper)} = {number(b.get('value'))}" if b.get("formula") else "—"
        value = b.get("value")
        ratio = number(measured / value) if isinstance(measured, (int, float)) and value else "—"
        general = cont.get("leading_constant")  # "leading_constant_here" is already evaluated and printed: not reparsed
        lead = cont.get("leading_constant_here") or (at(general, values, paper) if general else "—")
        rows.append([str(c) for c in (name, number(measured), number(r["predicted"].get(name)), bound, ratio,
                                      lead, cont.get("verdict") or "—")])
    if fmt == "md":  # a Markdown table between the text lines (paste into a page)
        print("\n" + render_rows(header, rows, "md") + "\n", file=console.file, flush=True)
    elif console.is_terminal:
        table = Table(show_header=True, caption="measured / bound: the constant the paper's O(·) hides at this size")
        for col in header:
            table.add_column(col)
        for row in rows:
            table.add_row(*(escape(c) for c in row))
        console.print(table)
    else:  # off a terminal: tab-separated lines, as every command prints its tables there
        # rich would expand the tabs and wrap the lines; the printed format's stream, stderr under --json -
        print(render_rows(header, rows, "table"), file=console.file, flush=True)
    if r["calls_by_tag"]:
        console.print("  by tag: " + ", ".join(f"{k}={v}" for k, v in r["calls_by_tag"].items()), markup=False)
    notes = (r.get("extra") or {}).get("notes")
    for note in ([notes] if isinstance(notes, str) else notes or []):
        console.print(f"  note: {note}", markup=False)
    colour = "green" if r["verdict"] == "pass" else "red"
    regime = (r.get("extra") or {}).get("regime") or "outside the statement's range"
    outside = f" (partial: {regime})" if r["verdict"] == "pass" and outside_stated_range(r) else ""
    console.print(f"  verdict: [{colour}]{escape(r['verdict'])}[/{colour}]" + escape(outside))
    for reason in r["reasons"]:
        console.print(f"   - {reason}", markup=False)


def register(app: typer.Typer) -> None:
    """Add the ``check`` command to ``app``; the claim's parameters are options generated from its checker
    (:class:`~attnsim.verify.cli.claim_options.ClaimCommand`)."""
    from attnsim.verify.cli.claim_options import VALUES, ClaimCommand, complete_claim

    # Unknown options still reach the callback (ctx.args): a name the claim does not take is refused there,
    # in the claim's words (which parameters it takes), after the cost pre-check, as every bad value is.
    @app.command(cls=ClaimCommand, context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def check(ctx: typer.Context,
              claim: Optional[str] = typer.Argument(None, metavar="CLAIM", autocompletion=complete_claim,
                                                    help="claim id, e.g. two_heads.lemma_3_1 (attnsim claims)"),
              numerics: Optional[str] = typer.Option(None, help="exact, fraction, symbolic, mp:BITS, float64, ..."),
              seed: int = seed_option(),
              min_bits: Optional[float] = typer.Option(None, help="bits of agreement required (approximate numerics)"),
              fmt: str = format_option(FORMATS, "table"),
              json_out: Optional[str] = json_option(),
              list_params: bool = typer.Option(False, "--list-params", help="list the claim's parameters and exit"),
              max_memory: Optional[str] = max_memory_option(),
              max_time: Optional[str] = typer.Option(
                  None, "--max-time", help="refuse runs estimated to take longer (e.g. 600, 10min, 2h; default 10min)"),
              ) -> None:
        """Run one claim's construction and reference; exit 0 iff the verdict is pass.

        The claim's own parameters are options too (attnsim check CLAIM -h lists them), e.g.
        attnsim check two_heads.lemma_3_1 --N 64 --M 8 --d 4 --numerics exact
        """
        if claim is None:
            raise UsageError("CLAIM: missing claim id (e.g. attnsim check two_heads.lemma_3_1; "
                             "attnsim claims lists them)")
        from attnsim.verify import guards

        guards.set_memory_limit(max_memory)
        guards.set_time_limit(max_time, CHECK_SECONDS)
        raw = {**ctx.meta.get(VALUES, {}), **parse_extra_args(list(ctx.args))}
        if list_params:
            print(params_help(find_checker(claim)))
            raise typer.Exit(0)
        guards.precheck(claim, raw, numerics)
        from attnsim.verify.relations import check_relations

        # every parameter's domain, choices and relations before the progress line starts (loading every claim
        # for the run can take seconds)
        chk = find_checker(claim)
        check_relations(claim, chk.resolve(raw), (numerics or chk.default_numerics) if chk.numerics else None)
        check_format(fmt, FORMATS)
        check_json_path(json_out)
        from rich.console import Console

        from attnsim.verify.check import run_check
        from attnsim.verify.progress import progress
        from attnsim.verify.records import dumps

        with progress(Console(stderr=True), f"check {claim}", 1) as bar:  # a line every few seconds off a terminal
            record = run_check(claim, raw, numerics, seed, min_bits)
            bar.advance()
        text = dumps(record, indent=2)
        if fmt == "json" and json_out != "-":
            print(text)
        elif fmt != "json":
            print_record(record, human_stream(json_out), fmt)
        write_json(record, json_out, text)
        raise typer.Exit(0 if record["verdict"] == "pass" else 1)
