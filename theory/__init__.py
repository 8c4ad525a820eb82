"""sympy theory: the papers' bounds and our exact counts as expressions (reads attnsim.paper_refs only)."""
