"""The one error type of ``attnsim.sim.anna``: bad input, named by its parameter.

:class:`AnnaInputError` is an :class:`~attnsim.sim.errors.AttnsimError` (a ``ValueError``), so the CLI
turns it into a one-line message.
"""

from __future__ import annotations

import numpy as np

from attnsim.sim.errors import AttnsimError


class AnnaInputError(AttnsimError):
    """Bad input to an ANNA construction; the message starts with the parameter's name."""


def require(condition: bool, param: str, message: str) -> None:
    """Raise :class:`AnnaInputError` ``"<param>: <message>"`` unless ``condition`` holds."""
    if not condition:
        raise AnnaInputError(f"{param}: {message}")


def as_matrix(x: object, param: str, *, rows: int | None = None) -> np.ndarray:
    """``x`` as a finite 2-D array (a 1-D array becomes one column); NaN, inf and wrong sizes raise."""
    arr = np.asarray(x)
    if arr.ndim == 1:
        arr = arr[:, None]
    require(arr.ndim == 2, param, f"expected a 2-D array, got shape {arr.shape}")
    if arr.dtype != object and arr.dtype.kind not in "iu":  # integers are finite numbers
        if arr.dtype.kind not in "fcm":  # the other kinds of np.number (the message is formatted only here)
            raise AnnaInputError(f"{param}: expected numbers, got dtype {arr.dtype}")
        require(bool(np.isfinite(arr).all()), param, "contains NaN or inf")
    if rows is not None:
        require(arr.shape[0] == rows, param, f"expected {rows} rows, got {arr.shape[0]}")
    return arr
