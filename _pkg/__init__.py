"""attnsim: run, count and check the constructions of three transformer-simulation papers.

Subpackages (README, "Layout"): ``attnsim.sim`` (machines), ``attnsim.theory`` (sympy bounds),
``attnsim.verify`` (checks, sweeps, report, CLI), ``attnsim.paper_refs`` (the claims as data).
"""

__version__ = "0.1.0"
