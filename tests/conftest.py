"""Shared test set-up: hypothesis profiles (``ci`` is small and deterministic; select with
HYPOTHESIS_PROFILE, default ``ci``)."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=15, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
