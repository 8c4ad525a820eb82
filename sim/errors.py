"""Errors that mean "bad input", each with one message naming the parameter at fault.

The CLI prints ``error: <message>`` and exits 2 for any :class:`AttnsimError`; nothing else should
reach a user as a traceback.
"""

from typing import Sequence


class AttnsimError(ValueError):
    """Base of every user-facing error in attnsim."""


class PreconditionError(AttnsimError):
    """A construction's preconditions do not hold (the message lists the reasons)."""


def require(reasons: Sequence[tuple[str, str]]) -> None:
    """Raise one :class:`PreconditionError` listing every (parameter, why) reason; none: return."""
    if reasons:
        raise PreconditionError("; ".join(f"{what}: {why}" for what, why in reasons))


class OracleSpecError(AttnsimError):
    """A call that breaks the oracle's spec (too long, too wide, wrong number of heads or layers)."""
