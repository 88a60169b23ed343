"""When tracing is on and what it exports: MEMAGENT_TRACING__ENABLED or an OTLP endpoint turn it on,
OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none off; OTEL_TRACES_EXPORTER and the OTLP protocol pick
the exporters; without the `otel` extra installed, the service runs untraced."""

from __future__ import annotations

import sys

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.trace.export import ConsoleSpanExporter

from application.ports.tracing import NO_TRACER
from infrastructure.tracing.opentelemetry_tracer import OpenTelemetryTracer
from infrastructure.tracing.setup import exporters, service_tracer, tracing_enabled

ENDPOINT = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}


@pytest.mark.parametrize(("enabled", "environ", "on"), [
    (False, {}, False),
    (True, {}, True),
    (False, ENDPOINT, True),
    (False, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, True),
    (True, {"OTEL_SDK_DISABLED": "true"}, False),
    (False, ENDPOINT | {"OTEL_TRACES_EXPORTER": "none"}, False),
])
def test_tracing_is_on_when_asked_for_or_a_collector_is_named_unless_the_sdk_is_disabled(
    enabled: bool, environ: dict[str, str], on: bool
) -> None:
    assert tracing_enabled(enabled, environ) is on


def test_the_exporters_follow_otel_traces_exporter_and_the_otlp_protocol() -> None:
    assert [type(e) for e in exporters({})] == [HttpExporter]  # the specification's default: http/protobuf
    assert [type(e) for e in exporters({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})] == [GrpcExporter]
    assert [type(e) for e in exporters({"OTEL_TRACES_EXPORTER": "otlp,console"})] == [HttpExporter,
                                                                                    ConsoleSpanExporter]


def test_with_tracing_off_the_service_gets_the_tracer_that_records_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    assert service_tracer(enabled=False) is NO_TRACER


def test_tracing_on_gives_the_opentelemetry_tracer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    tracer = service_tracer(enabled=True)
    assert isinstance(tracer, OpenTelemetryTracer)
    tracer.shutdown()


def test_without_the_otel_extra_tracing_stays_off_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # what an absent package imports as
    assert service_tracer(enabled=True) is NO_TRACER
    assert "pip install 'memagent[otel]'" in caplog.text
