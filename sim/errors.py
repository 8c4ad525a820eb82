"""Errors that mean "bad input", each with one message naming the parameter at fault.

An error about one parameter carries its name as data (``param="window"``): ``str(error)`` reads
``window: r must be >= 1, got 0`` in the library's terms, and only the command line turns the name
into its flag (``--window: ...``). The CLI prints ``error: <message>`` and exits 2 for any
:class:`AttnsimError`; nothing else should reach a user as a traceback.
"""

from typing import Sequence


class AttnsimError(ValueError):
    """Base of every user-facing error in attnsim; ``param`` names the parameter at fault, if one is
    (several joined by ``/``), and ``message`` is what is wrong with it."""

    def __init__(self, message: str = "", *, param: str | None = None) -> None:
        """``message`` about ``param`` (None: about no one parameter)."""
        super().__init__(message)
        self.message = message
        self.param = param

    def __str__(self) -> str:
        return f"{self.param}: {self.message}" if self.param else self.message


class PreconditionError(AttnsimError):
    """A construction's preconditions do not hold (the message lists the reasons)."""


def require(reasons: Sequence[tuple[str, str]]) -> None:
    """Raise one :class:`PreconditionError` listing every (parameter, why) reason; none: return."""
    if reasons:
        raise PreconditionError("; ".join(f"{what}: {why}" for what, why in reasons))


class OracleSpecError(AttnsimError):
    """A call that breaks the oracle's spec (too long, too wide, wrong number of heads or layers)."""
