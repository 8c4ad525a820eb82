"""attnsim: run, count and check the constructions of three transformer-simulation papers.

Subpackages (README, "Layout"): ``attnsim.sim`` (machines), ``attnsim.theory`` (sympy bounds),
``attnsim.verify`` (checks, sweeps, report, CLI), ``attnsim.paper_refs`` (the claims as data).

The Python API (docs/api.md), loaded on first use so that ``import attnsim`` stays light::

    import attnsim
    r = attnsim.check("two_heads.lemma_3_1", N=64, M=8, d=4)   # a typed Record
"""

from typing import Any

__version__ = "0.1.0"

_API = {"claims": "attnsim.verify.api", "check": "attnsim.verify.api", "growth": "attnsim.verify.api",
        "teeth": "attnsim.verify.api", "prove": "attnsim.verify.api", "report": "attnsim.verify.api",
        "Record": "attnsim.verify.record_model", "record_schema": "attnsim.verify.record_model",
        "AttnsimError": "attnsim.sim.errors", "UsageError": "attnsim.verify.registry"}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    """The API's names, imported when first used (PEP 562)."""
    if name not in _API:
        raise AttributeError(f"module 'attnsim' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_API[name]), name)


def __dir__() -> list[str]:
    return sorted(__all__)
