"""``attnsim tint-size``: TinT's parameter counts for a published auxiliary model (tint.size)."""

from __future__ import annotations

from typing import Optional

import typer

from attnsim.sim.tint.configs import LISTED
from attnsim.verify.cli.options import (
    FORMAT_KINDS,
    ascii_tex,
    bounded,
    check_format,
    check_json_path,
    emit,
    format_option,
    json_option,
    write_json,
)
from attnsim.verify.registry import INT_MAX


def register(app: typer.Typer) -> None:
    """Add the ``tint-size`` command to ``app``."""
    @app.command("tint-size")
    def tint_size(
        aux: str = typer.Option(..., help=f"auxiliary model: {', '.join(LISTED)}"),
        n_sim: int = typer.Option(0, **bounded("layers simulated (0: the TinT default)", 0, INT_MAX)),
        steps: int = typer.Option(1, **bounded("SGD steps simulated", 1, INT_MAX)),
        reuse_forward: bool = typer.Option(True, help="share forward modules across layers"),
        reuse_backward: bool = typer.Option(True, help="share backward modules across layers"),
        K: int = typer.Option(0, "--K", **bounded("number of prefix tokens (0: default)", 0, INT_MAX)),
        H_sim: int = typer.Option(0, "--H-sim", **bounded("TinT attention heads (0: default)", 0, INT_MAX)),
        fmt: str = format_option(FORMAT_KINDS["formulas"], "md"),
        verify_build: bool = typer.Option(False, help="also build the TinT network (shapes only) and count its arrays"),
        json_out: Optional[str] = json_option(),
    ) -> None:
        """TinT parameter count per module type and in total, from the sympy formulas."""
        import json

        from attnsim.verify.tint_size import tint_size_command

        check_format(fmt, FORMAT_KINDS["formulas"])
        check_json_path(json_out)
        args = (aux, n_sim, steps, reuse_forward, reuse_backward, K, H_sim)
        text = tint_size_command(*args, "md" if fmt == "table" else fmt, verify_build)  # its table is md's
        emit((ascii_tex(text) if fmt == "tex" else text).rstrip("\n"), json_out)
        if json_out is not None:
            write_json(json.loads(tint_size_command(*args, "json", verify_build)), json_out)
