"""attnsim package."""
