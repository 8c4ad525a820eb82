"""The ``attnsim`` application: every command module's ``register(app)``, and the entry point.

Every user-facing error (an :class:`~attnsim.sim.errors.AttnsimError`) is printed as one line
``error: ...`` naming the parameter, with exit status 2 — never a traceback.
"""

from __future__ import annotations

import sys

import typer

from attnsim.sim.errors import AttnsimError
from attnsim.verify.cli import bench, bounds, check, claims, precision, report, run, teeth, tint_size, torch_bench
from attnsim.verify.cli.guard import check_argv, fail_os
from attnsim.verify.registry import RESUMABLE_EXIT, ResumableError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Run the constructions of three transformer-simulation papers, count what they spend, "
                       "and hold the counts against the papers' bounds.")

# The order of ``attnsim --help``.
for command in (claims, check, report, bounds, teeth, precision, run, bench, tint_size, torch_bench):
    command.register(app)


def main() -> None:
    """Entry point: one clear line and exit 2 for bad input, never a traceback."""
    try:
        check_argv(sys.argv[1:])
        # Without standalone mode click returns a command's exit code instead of exiting with it.
        rc = app(standalone_mode=False)
        if rc == 130:  # typer turns Ctrl-C into exit status 130 without a word
            print("interrupted", file=sys.stderr)
        sys.stdout.flush()  # a full or closed stdout fails here, inside the handlers below
        sys.exit(rc if isinstance(rc, int) else 0)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except ResumableError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(RESUMABLE_EXIT)
    except OSError as e:  # the file system or a stream refused; one line naming the path
        fail_os(e)
    except (AttnsimError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as e:  # click usage errors and friends
        import click

        if isinstance(e, click.exceptions.ClickException):
            e.show()
            sys.exit(e.exit_code)
        if isinstance(e, click.exceptions.Abort):
            sys.exit(1)
        raise


if __name__ == "__main__":
    main()
