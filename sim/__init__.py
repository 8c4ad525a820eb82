"""The machines: everything that runs a construction and counts what it spends, and nothing that knows a bound.

* ``model``, ``masks``, ``token_maps``, ``rope`` -- the large transformer of Two Heads Defs 2.1–2.5 (the reference);
* ``oracle`` -- the small transformer that runs calls, refuses calls outside its spec, and counts them;
* ``ledger`` -- the append-only record of calls, rounds, hash evaluations, parameters and processing;
* ``numerics`` -- arithmetic backends (exact rationals, mpmath, fixed bit width, float64);
* ``engine`` -- batched float64 rounds of oracle calls; ``torch`` -- the optional PyTorch wing;
* ``two_heads``, ``anna``, ``tint`` -- the constructions of the three papers;
* ``errors`` -- the project's error classes.

Imports stay inside ``attnsim.sim``: no construction imports ``attnsim.theory`` or ``attnsim.verify``.
"""
