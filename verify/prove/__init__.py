"""Proofs for every size: the exact Two Heads constructions' call plans proved with z3, their per-call
identities with sympy, every counterexample replayed as an ordinary exact check (``attnsim prove``)."""
