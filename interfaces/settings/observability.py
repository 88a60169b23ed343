"""MEMAGENT_LOG__*, MEMAGENT_TRACING__* and MEMAGENT_METRICS__*: what the service tells its operators."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr


class LogSettings(BaseModel):
    """`format`: `text` (a line for a person) or `json` (one object per line: time, level, logger,
    message, and the ids of the turn it is about). Secrets are masked in both."""

    format: Literal["text", "json"] = "text"


class TracingSettings(BaseModel):
    """OpenTelemetry traces (the `memagent[otel]` extra), exported as the standard OTEL_* variables
    say; on with `enabled`, or when OTEL_EXPORTER_OTLP_ENDPOINT (or its _TRACES_ form) is set."""

    enabled: bool = False


class MetricsSettings(BaseModel):
    """`GET /metrics` (Prometheus). `token`: a Bearer credential that may scrape besides an account key,
    for a Prometheus server that should hold no account's key. Several workers share their metrics
    through the library's own PROMETHEUS_MULTIPROC_DIR (an empty folder, set before they start)."""

    token: SecretStr | None = Field(None, min_length=16, description="a scrape-only Bearer token, 16+ characters")
    refresh_interval: float = Field(
        5.0, gt=0, description="seconds between a worker's updates of memagent_upkeep_lag_seconds"
    )
