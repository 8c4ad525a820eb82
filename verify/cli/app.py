"""The ``attnsim`` application: every command module's ``register(app)``, and the entry point.

Every user-facing error is printed as one line ``error: ...`` naming the parameter, with exit status 2
— never a traceback. That covers the project's :class:`~attnsim.sim.errors.AttnsimError` and the CLI
library's own usage errors (unknown command or option, missing argument, a value of the wrong type).
Typer vendors its own copy of click, so both its exception classes and click's are recognised.
"""

from __future__ import annotations

import errno
import sys
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Callable, Optional

import typer

from attnsim.sim.errors import AttnsimError
from attnsim.verify.cli import (
    bench,
    bounds,
    check,
    claims,
    experiment,
    fuzz,
    growth,
    precision,
    prove,
    report,
    run,
    teeth,
    tint_size,
)
from attnsim.verify.cli.guard import check_argv, fail_os, prepare_streams
from attnsim.verify.cli.interrupt import (
    INTERRUPTED_EXIT,
    Terminated,
    exit_interrupted,
    exit_terminated,
    mark_interrupted,
    signal_inside,
)
from attnsim.verify.limits import failed_allocation, failed_import, import_failure, out_of_memory
from attnsim.verify.registry import RESUMABLE_EXIT, ResumableError, flag
from attnsim.verify.signal_latch import deliver_until_settled

# ``-h`` and ``--help`` on every command; plain help (the rich panels print ``<bool>`` beside every flag).
app = typer.Typer(add_completion=True, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})


def package_version() -> str:
    """The installed version of attnsim (``unknown`` when run from a bare source tree)."""
    try:
        return version("attnsim")
    except PackageNotFoundError:
        return "unknown"


def _print_version(value: bool) -> None:
    if value:
        print(f"attnsim {package_version()}")
        raise typer.Exit(0)


@app.callback()
def _root(show_version: Optional[bool] = typer.Option(None, "--version", callback=_print_version, is_eager=True,
                                                      help="print the version and exit")) -> None:
    """Run the constructions of three transformer-simulation papers, count what they spend, and hold the
    counts against the papers' bounds."""


# The order of ``attnsim --help``.
for command in (claims, check, report, bounds, growth, teeth, prove, fuzz, precision, run, bench, tint_size,
                experiment):
    command.register(app)


METAVARS = {"<int>": "INT", "<str>": "TEXT", "<float>": "NUMBER", "<path>": "PATH", "<int range>": "INT",
            "<float range>": "NUMBER"}


def plain_metavars(command: Any) -> Any:
    """``command`` (and its subcommands) with every value-taking option shown as ``--name TYPE`` (``INT``, ``TEXT``,
    ``NUMBER``, ``PATH``), as click shows them, instead of the CLI library's ``<int>`` and ``<str>``."""
    from typer import _click

    ctx = _click.Context(command)
    for param in getattr(command, "params", []):
        if param.param_type_name == "option" and param.metavar is None and not getattr(param, "is_flag", False):
            shown = param.display_type(ctx) if hasattr(param, "display_type") else None
            if isinstance(shown, str) and shown.startswith("<"):
                param.metavar = METAVARS.get(shown, shown.strip("<>").upper())
    for sub in getattr(command, "commands", {}).values():
        plain_metavars(sub)
    return command


@lru_cache(maxsize=1)
def _command() -> Any:
    """The click command of :data:`app`, built once per process: typer builds it from every command's signature
    (about 30 ms), and a process that runs :func:`main` many times (the tests do, hundreds of times) would pay it
    on every call. The command holds no state of a run: each call parses into a context of its own."""
    return plain_metavars(typer.main.get_command(app))


def _click_exception_types() -> tuple[tuple[type, ...], tuple[type, ...], tuple[type, ...]]:
    """(usage errors, other click errors, aborts) from typer's vendored click and from click itself."""
    usage: list[type] = []
    other: list[type] = []
    abort: list[type] = [typer.Abort]
    for module in ("typer._click.exceptions", "click.exceptions"):
        try:
            mod = __import__(module, fromlist=["UsageError"])
        except ImportError:
            continue
        usage.append(mod.UsageError)
        other.append(mod.ClickException)
        abort += [getattr(mod, "Abort")] if hasattr(mod, "Abort") else []
    return tuple(usage), tuple(other), tuple(abort)


def one_line(message: str) -> str:
    """``message`` with its whitespace (newlines included) collapsed, so an error is one line."""
    return " ".join(str(message).split())


def cli_message(e: AttnsimError) -> str:
    """The error in the command line's words: the parameter it names becomes its flag (``--window: ...``)."""
    if e.param:
        return one_line(f"{'/'.join(flag(p) for p in e.param.split('/'))}: {e.message}")
    return one_line(str(e))


def _usage_message(e: Exception) -> str:
    """Click's usage error in one line; a bad or missing option value leads with its flag (``--M: ...``)."""
    param = getattr(e, "param", None)
    opts = getattr(param, "opts", None) or []
    if opts and str(opts[0]).startswith("--") and type(e).__name__ in ("BadParameter", "MissingParameter"):
        why = "missing (this command needs it)" if type(e).__name__ == "MissingParameter" else e.message  # type: ignore[attr-defined]
        text = one_line(f"{opts[0]}: {why}")
    else:
        text = one_line(e.format_message())  # type: ignore[attr-defined]
    ctx = getattr(e, "ctx", None)
    if ctx is not None and ctx.command_path:
        text += f" (see '{ctx.command_path} --help')"
    return text


def _quiet_finalizers() -> None:
    """An interrupt can land inside a constructor (z3's ``Context`` between its C call and its first field): the
    half-built object's finalizer then fails as it is collected, and Python prints that as "Exception ignored"
    with a traceback. After an interrupt the one line is the whole answer, so such reports are dropped."""
    sys.unraisablehook = lambda _unraisable: None


def _unraisable_hook(default: Callable[[Any], None]) -> Callable[[Any], None]:
    """The unraisable hook. A Ctrl-C or SIGTERM that landed in a finalizer (z3 frees its terms and contexts in
    ``__del__``, all the time) raised there, and Python drops an exception raised in a finalizer: the command
    would go on as if it had never come. Such a signal is delivered again. The hook is also quiet about the
    finalizer of a z3 object that a Ctrl-C left half built (its ``__del__`` reads a field its ``__init__`` never
    set: AttributeError). Everything else is reported."""
    import signal

    def hook(u: Any) -> None:
        if isinstance(u.exc_value, (KeyboardInterrupt, Terminated)):
            deliver_until_settled(signal.SIGINT if isinstance(u.exc_value, KeyboardInterrupt) else signal.SIGTERM)
            return
        where = getattr(u.object, "__module__", None) or type(u.object).__module__ or ""
        if isinstance(u.exc_value, AttributeError) and where.startswith("z3"):
            return
        default(u)
    return hook


def entry() -> None:
    """The ``attnsim`` program once its signal handlers are set (:func:`attnsim.verify.cli.entry`): :func:`main`
    with the address-space backstop armed, for this process and its workers."""
    import os

    from attnsim.verify.limits import BACKSTOP_ENV, arm_backstop

    os.environ[BACKSTOP_ENV] = "1"
    main(arm=arm_backstop)


def main(argv: Optional[list[str]] = None, arm: Optional[Callable[[], None]] = None) -> None:
    """Entry point: one clear line and exit 2 for bad input, never a traceback. ``arm``: run first, inside the
    same handling (the backstop, which reads ``$ATTNSIM_MAX_MEMORY``)."""
    try:  # a signal that lands while click loads, before the handlers below are in place
        usage, other, abort = _click_exception_types()
    except (KeyboardInterrupt, Terminated) as e:
        _end_if_signalled(e)
    try:
        prepare_streams()
        sys.unraisablehook = _unraisable_hook(sys.unraisablehook)
        if arm is not None:
            arm()
        check_argv(sys.argv[1:] if argv is None else argv)
        # Without standalone mode click returns a command's exit code instead of exiting with it.
        command = _command()
        rc = command.main(args=argv, prog_name="attnsim", standalone_mode=False)
        if rc == INTERRUPTED_EXIT:  # typer turns Ctrl-C into exit status 130 without a word
            mark_interrupted()
        sys.stdout.flush()  # a full or closed stdout fails here, inside the handlers below
        sys.exit(rc if isinstance(rc, int) else 0)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except SystemExit:
        if type(sys.stdout).__name__ == "PacifyFlushWrapper":  # click met a broken pipe: the reader stopped
            fail_os(BrokenPipeError(errno.EPIPE, "Broken pipe"))
        raise
    except ResumableError as e:
        print(f"error: {cli_message(e)}", file=sys.stderr)
        sys.exit(RESUMABLE_EXIT)
    except OSError as e:  # the file system or a stream refused; one line naming the path
        fail_os(e)
    except AttnsimError as e:
        print(f"error: {cli_message(e)}", file=sys.stderr)
        sys.exit(2)
    except usage as e:
        if type(e).__name__ == "NoArgsIsHelpError":  # ``attnsim`` alone, or a group without a command
            print(e.format_message())  # type: ignore[attr-defined]
            sys.exit(0)
        print(f"error: {_usage_message(e)}", file=sys.stderr)
        sys.exit(2)
    except other as e:
        print(f"error: {one_line(e.format_message())}", file=sys.stderr)  # type: ignore[attr-defined]
        sys.exit(getattr(e, "exit_code", 1) or 1)
    except abort:
        print("aborted", file=sys.stderr)
        sys.exit(1)
    except (KeyboardInterrupt, Terminated) as e:
        _end_if_signalled(e)
    except MemoryError:  # the backstop: an allocation past --max-memory that the estimate did not foresee
        print(out_of_memory(), file=sys.stderr)
        sys.exit(2)
    except (ImportError, SystemError) as e:  # a library that cannot even be loaded under a tiny --max-memory
        _end_if_signalled(e)  # a Ctrl-C or SIGTERM that landed inside a C module's initialisation
        if failed_import(e):
            print(f"error: {import_failure(e)}", file=sys.stderr)
        elif failed_allocation(e):
            print(out_of_memory(), file=sys.stderr)
        else:
            raise
        sys.exit(2)
    except ValueError as e:  # a bad value that reached a library before our own checks
        print(f"error: {one_line(str(e))}", file=sys.stderr)
        sys.exit(2)
    except Exception as e:
        _end_if_signalled(e)
        raise


def _end_if_signalled(e: BaseException) -> None:
    """End the command as its signal would, where ``e`` wraps a Ctrl-C (130) or a SIGTERM (143)."""
    signalled = signal_inside(e)
    if signalled is None:
        return
    _quiet_finalizers()
    if signalled is Terminated:
        exit_terminated()
    exit_interrupted()
