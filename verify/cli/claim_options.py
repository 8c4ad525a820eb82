"""The options of ``attnsim check CLAIM``: each claim's own parameters as real command-line options.

The options are generated from the checker's :class:`~attnsim.verify.registry.Param` list when the command
line names the claim (:class:`ClaimCommand`), so ``attnsim check two_heads.lemma_3_1 -h`` shows ``--N``,
``--M``, ``--scheme`` ... with their types, ranges in words and defaults inside the help, and the shell
completes their names and choices. Only the claim's own checker module is imported to build them
(:func:`attnsim.verify.registry.load_checker`), so the help stays quick.

An option hands on the text as typed: the claim's :class:`Param` parses and checks it after the cost
pre-check, the one place where a value is read (so the command line and ``attnsim.check`` refuse a value
with the same words, ``--M: must be >= 2, got 1`` here and ``M: ...`` in Python).
"""

from __future__ import annotations

import inspect
from typing import Any, Optional, Sequence

import typer
from typer.core import TyperCommand

from attnsim.verify.cli.options import range_words
from attnsim.verify.registry import Checker, Param, UsageError

OPTIONS = "attnsim.claim_options"
"""Where a context keeps the options generated for its claim."""
VALUES = "attnsim.claim_values"
"""Where a context keeps the claim parameters given (name -> text as typed), in the order given."""
CHECKER = "attnsim.claim_checker"
"""Where a context keeps the checker of the claim named on its command line."""
PREFIX = "claim__"
"""The prefix of a generated option's name, apart from the command's own option names."""
METAVARS = {int: "INT", float: "NUMBER", str: "TEXT", bool: "BOOL"}


def param_help(p: Param) -> str:
    """A parameter's help with its domain in words (``oracle length (at least 2)``, ``one of: paper, fused``)."""
    if p.choices is not None:
        domain = "one of: " + ", ".join(map(str, p.choices))
    elif p.type is bool:
        domain = "true or false"
    elif p.type in (int, float):
        domain = range_words(_plain(p.minimum), _plain(p.upper))
        domain = f"a power of two, {domain}" if p.power_of_two else domain
    else:
        domain = ""
    shown = "none" if p.default is None else str(p.default).lower() if p.type is bool else p.default
    return f"{p.help}" + (f" ({domain})" if domain and domain != "any" else "") + f"  [default: {shown}]"


def _plain(x: float | None) -> Any:
    """``2.0`` as ``2`` in help text."""
    return int(x) if isinstance(x, float) and x.is_integer() and abs(x) < 2 ** 63 else x


def _completion(p: Param) -> Any:
    """The shell completion of ``p``'s values: its choices, true/false, or files for a path."""
    words = [str(c) for c in p.choices] if p.choices is not None else ["true", "false"] if p.type is bool else None
    if words is not None:
        def complete(incomplete: str) -> list[str]:
            return [w for w in words if w.startswith(incomplete)]
        return complete
    return None


def complete_claim(incomplete: str) -> list[str]:
    """The claim ids that start with ``incomplete`` (read from paper_refs: no checker is imported)."""
    from attnsim.paper_refs import load, papers

    return [c.id for p in papers() for c in load(p).claims if c.implemented and c.id.startswith(incomplete)]


def _as_text(value: str) -> str:
    """The value as typed (the claim's Param parses it, after the cost pre-check)."""
    return value


def build_options(chk: Checker) -> list[Any]:
    """The claim's parameters as typer options (their annotations carry the types; values pass on as text)."""
    params = []
    for p in chk.params:
        annotation = Optional[str] if p.type is bool else Optional[p.type]  # a bool typed as a flag would take no value
        info = typer.Option(None, p.flag, help=param_help(p), metavar=METAVARS.get(p.type, "TEXT"),
                            parser=_as_text, autocompletion=_completion(p), show_default=False)
        params.append(inspect.Parameter(PREFIX + p.name, inspect.Parameter.KEYWORD_ONLY, default=info,
                                        annotation=annotation))

    def claim(**values: Any) -> None:
        """Carries the generated signature."""

    claim.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    claim.__annotations__ = {q.name: q.annotation for q in params}
    app = typer.Typer(add_completion=False)
    app.command()(claim)
    options = list(typer.main.get_command(app).params)
    for option, p in zip(options, chk.params):
        option.claim_param = p  # what the option stands for (the vocabulary test reads its declared type)
    return options


def claim_in(args: Sequence[str], takes_value: set[str], known: set[str]) -> Optional[str]:
    """The claim named on the command line: the first bare word that is not the value of an option. An option
    the command does not know yet (a claim parameter given before the claim) takes a value, as they all do."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return args[i + 1] if i + 1 < len(args) else None
        if a.startswith("-") and len(a) > 1:
            name, eq, _ = a.partition("=")
            if not eq and (name in takes_value or name not in known):
                i += 1
        else:
            return a
        i += 1
    return None


def missing_values(args: Sequence[str], flags: set[str]) -> None:
    """Refuse a claim option with no value after it (the end of the line, or another ``--option``), in words
    that name it, as a value-less parameter always was."""
    for i, a in enumerate(args):
        if a == "--":
            return
        if a in flags and (i + 1 >= len(args) or args[i + 1].startswith("--")):
            raise UsageError(f"{a}: missing value")


class ClaimCommand(TyperCommand):
    """``attnsim check``: its own options plus, once the command line names a claim, that claim's parameters."""

    def own_params(self, ctx: Any) -> list[Any]:
        """The command's own parameters (the claim's left out)."""
        return super().get_params(ctx)

    def get_params(self, ctx: Any) -> list[Any]:
        """The command's own parameters and those generated for the claim on this command line."""
        return [*super().get_params(ctx), *ctx.meta.get(OPTIONS, ())]

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Find the claim, generate its options, refuse a claim option left without a value, then parse."""
        own = [p for p in self.own_params(ctx) if p.param_type_name == "option"]
        known = {o for p in own for o in (*p.opts, *p.secondary_opts)}
        takes_value = {o for p in own if not p.is_flag for o in p.opts}
        claim = claim_in(args, takes_value, known)
        chk = None
        if claim is not None:
            from attnsim.verify.cli.check import find_checker

            try:
                chk = find_checker(claim)
            except UsageError:
                if not ctx.resilient_parsing:  # completing a word: no claim yet, no options
                    raise
        options = build_options(chk) if chk is not None else []
        ctx.meta[CHECKER], ctx.meta[OPTIONS] = chk, options
        if not ctx.resilient_parsing:
            missing_values(args, {o for p in options for o in p.opts})
        return super().parse_args(ctx, args)

    def invoke(self, ctx: Any) -> Any:
        """The claim parameters move out of the callback's keywords into :data:`VALUES` (those given only)."""
        given = {}
        for key in [k for k in ctx.params if k.startswith(PREFIX)]:
            value = ctx.params.pop(key)
            if value is not None:
                given[key[len(PREFIX):]] = value
        ctx.meta[VALUES] = given
        return super().invoke(ctx)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """The command's options, then the claim's parameters in a section of their own."""
        own, claim = [], []
        for p in self.get_params(ctx):
            record = p.get_help_record(ctx)
            if record is not None and p.param_type_name == "option":
                (claim if hasattr(p, "claim_param") else own).append(record)
        args = [r for p in self.own_params(ctx) if p.param_type_name == "argument"
                for r in [p.get_help_record(ctx)] if r is not None]
        for title, rows in (("Arguments", args), ("Options", own)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
        chk = ctx.meta.get(CHECKER)
        if chk is not None:
            from attnsim.verify.cli.check import numerics_line

            with formatter.section(f"Parameters of {chk.claim}"):
                formatter.write_dl(claim or [("(none)", "")])
                formatter.write_paragraph()
                formatter.write_text(numerics_line(chk))
