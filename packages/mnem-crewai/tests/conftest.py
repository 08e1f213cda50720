"""CrewAI offline (no telemetry, no tracing, no key), and real stores in temporary directories."""

from __future__ import annotations

import os

os.environ.update(
    CREWAI_DISABLE_TELEMETRY="true", OTEL_SDK_DISABLED="true", CREWAI_TRACING_ENABLED="false"
)
os.environ.pop("OPENAI_API_KEY", None)
