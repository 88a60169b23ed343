"""Which tracer the service gets: OpenTelemetry's, exporting as the standard `OTEL_*` variables say,
or none (docs/operations.md "Traces and logs").

Tracing is on when `MEMAGENT_TRACING__ENABLED=true`, or when an OTLP endpoint is set
(`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`): naming a collector is
asking for traces. `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn it off whatever
else is set. The SDK is the optional `memagent[otel]` extra: it is imported only here and only when
tracing is on, so without it memagent runs as before (a warning says tracing stays off).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from application.ports.tracing import NO_TRACER, Tracer

if TYPE_CHECKING:
    from collections.abc import Mapping

    from opentelemetry.sdk.trace.export import SpanExporter

log = logging.getLogger(__name__)

SERVICE_NAME = "memagent"  # unless OTEL_SERVICE_NAME names it
ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def tracing_enabled(enabled: bool, environ: Mapping[str, str]) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if _exporters(environ) == ["none"]:
        return False
    return enabled or any(environ.get(name) for name in ENDPOINTS)


def service_tracer(enabled: bool) -> Tracer:
    """The container's tracer (`MEMAGENT_TRACING__ENABLED` is `enabled`)."""
    environ = os.environ
    if not tracing_enabled(enabled, environ):
        return NO_TRACER
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from infrastructure.tracing.opentelemetry_tracer import OpenTelemetryTracer
    except ImportError:
        log.warning("tracing is on but OpenTelemetry is not installed (pip install 'memagent[otel]'): no traces")
        return NO_TRACER
    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; the sampler, OTEL_TRACES_SAMPLER.
    named = {} if environ.get("OTEL_SERVICE_NAME") else {"service.name": SERVICE_NAME}
    provider = TracerProvider(resource=Resource.create(named))
    for exporter in exporters(environ):
        provider.add_span_processor(BatchSpanProcessor(exporter))  # OTEL_BSP_* tune it
    return OpenTelemetryTracer(provider)


def exporters(environ: Mapping[str, str]) -> list[SpanExporter]:
    """OTEL_TRACES_EXPORTER's exporters (default `otlp`; `console` too); each OTLP exporter reads its
    endpoint, headers, timeout and compression from the OTEL_EXPORTER_OTLP_* variables itself."""
    made: list[SpanExporter] = []
    for name in _exporters(environ):
        if name == "otlp":
            made.append(_otlp(environ))
        elif name == "console":
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            made.append(ConsoleSpanExporter())
        elif name != "none":
            log.warning("OTEL_TRACES_EXPORTER names %r, which memagent does not know (otlp, console, none)", name)
    return made


def _otlp(environ: Mapping[str, str]) -> SpanExporter:
    protocol = environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    if (protocol or "").strip() == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        return GrpcExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()  # http/protobuf, the specification's default


def _exporters(environ: Mapping[str, str]) -> list[str]:
    names = environ.get("OTEL_TRACES_EXPORTER", "otlp")
    return [name.strip().lower() for name in names.split(",") if name.strip()] or ["otlp"]
