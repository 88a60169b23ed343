"""`memagent serve` configured only by the standard OTEL_* variables exports its spans over OTLP/HTTP to
a collector: here a tiny local receiver that decodes what arrives at /v1/traces (protobuf). The turn
continues the request's `traceparent`; the resource names the service OTEL_SERVICE_NAME gives."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.integration.streaming_helpers import serving, wait_until

pytestmark = pytest.mark.integration

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
TRACEPARENT = f"00-{TRACE_ID}-b7ad6b7169203331-01"


@dataclass
class Received:
    span: str
    trace_id: str
    parent: str
    service: str
    attributes: dict[str, str | int | float | bool]


@dataclass
class Collector:
    """An OTLP/HTTP trace receiver on 127.0.0.1 (a stand-in for an OpenTelemetry Collector)."""

    spans: list[Received] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def take(self, body: bytes) -> None:
        request = ExportTraceServiceRequest.FromString(body)
        for resource in request.resource_spans:
            service = next((a.value.string_value for a in resource.resource.attributes if a.key == "service.name"), "")
            for scope in resource.scope_spans:
                for span in scope.spans:
                    attributes = {a.key: _value(a.value) for a in span.attributes}
                    self.spans.append(Received(span.name, span.trace_id.hex(), span.parent_span_id.hex(), service,
                                               attributes))


def _value(value: object) -> str | int | float | bool:
    kind = value.WhichOneof("value")  # type: ignore[attr-defined]
    return getattr(value, kind) if kind else ""  # type: ignore[no-any-return]


@pytest.fixture
def collector() -> Iterator[tuple[Collector, str]]:
    found = Collector()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 -- the name http.server calls
            found.paths.append(self.path)
            found.take(self.rfile.read(int(self.headers["content-length"])))
            body = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 -- the signature http.server calls
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield found, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_otel_variables_alone_send_a_turns_spans_to_the_collector_in_the_callers_trace(
    collector: tuple[Collector, str], tmp_path: Path
) -> None:
    received, endpoint = collector
    env = {
        "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}",
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_SERVICE_NAME": "memagent-under-test",
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # milliseconds between the batch processor's exports
    }
    with serving(env, tmp_path) as service:
        response = httpx.post(f"{service.base_url}/api/chat", json={"query": 'add [[tool:calculator {"expression": '
                              '"2+3"}]]'}, headers={"traceparent": TRACEPARENT}, timeout=30)
        assert response.status_code == 200, response.text
        task_id = response.json()["task_id"]

        def turn() -> Received | None:
            return next((s for s in received.spans if s.span == "memagent.turn"
                         and s.attributes.get("memagent.task_id") == task_id), None)

        span = wait_until(turn, 30, "the turn's span at the collector", every=0.1)
        wanted = {"memagent.recall", "memagent.model_call", "memagent.tool_call", "memagent.save"}
        wait_until(lambda: {s.span for s in received.spans} >= wanted, 30, "the turn's child spans")
    assert set(received.paths) == {"/v1/traces"}
    assert (span.trace_id, span.parent, span.service) == (TRACE_ID, "b7ad6b7169203331", "memagent-under-test")
    assert span.attributes["memagent.status"] == "normal"
    assert {s.trace_id for s in received.spans} == {TRACE_ID}  # the only turn: every span is of its trace
