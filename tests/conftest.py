"""Hypothesis profiles for the whole workspace: a quick default and the full CI run.

``HYPOTHESIS_PROFILE=full`` raises the hostile-input suites to 2,500 cases per property
(nine properties, 22,500 cases).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile("default", max_examples=100, deadline=None)
settings.register_profile(
    "full",
    max_examples=2_500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
