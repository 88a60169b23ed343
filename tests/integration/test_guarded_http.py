"""GuardedHttp: a workflow's HTTP requests reach public addresses only (unless the operator allows
private ones), with bounded bodies and time, against a real local server."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from application.errors import NodeFailed
from application.ports.outbound_http import OutboundRequest
from infrastructure.workflows.guarded_http import GuardedHttp

pytestmark = pytest.mark.integration


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/slow":
            time.sleep(3)
        body = b"x" * 5000 if self.path == "/big" else f"hello {self.headers.get('X-Name')}".encode()
        self.send_response(302 if self.path == "/moved" else 200)
        if self.path == "/moved":
            self.send_header("Location", "http://127.0.0.1:1/")
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        return


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        return  # a client that stops reading (the body limit, a timeout) is what these tests do


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = _QuietServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("url", [
    "http://127.0.0.1/", "http://localhost/", "http://[::1]/", "http://10.0.0.1/", "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/", "http://0.0.0.0/", "http://2130706433/", "http://0x7f.1/",
    "http://[::ffff:127.0.0.1]/", "http://[2002:7f00:1::]/", "http://100.64.0.1/", "http://224.0.0.1/",
])
async def test_a_non_public_address_is_refused_by_default(url: str) -> None:
    http = GuardedHttp()
    try:
        with pytest.raises(NodeFailed) as raised:
            await http.send(OutboundRequest("GET", url, timeout=5))
    finally:
        await http.aclose()
    assert "is not allowed: it is not on the public internet" in raised.value.message


async def test_a_local_server_is_reached_when_private_networks_are_allowed(server: str) -> None:
    http = GuardedHttp(allow_private_networks=True)
    try:
        response = await http.send(OutboundRequest("get", f"{server}/hi", headers=(("X-Name", "Ada"),)))
        moved = await http.send(OutboundRequest("GET", f"{server}/moved"))
    finally:
        await http.aclose()
    assert (response.status, response.body) == (200, "hello Ada")
    assert ("Content-Type", "text/plain; charset=utf-8") in response.headers
    assert moved.status == 302  # returned as is: a redirect is never followed


async def test_a_body_over_the_limit_is_refused(server: str) -> None:
    http = GuardedHttp(allow_private_networks=True, max_body_bytes=4096)
    try:
        with pytest.raises(NodeFailed) as raised:
            await http.send(OutboundRequest("GET", f"{server}/big"))
    finally:
        await http.aclose()
    assert raised.value.message == "The response from '127.0.0.1' is larger than 4,096 bytes."


async def test_a_slow_server_times_out(server: str) -> None:
    http = GuardedHttp(allow_private_networks=True)
    started = time.monotonic()
    try:
        with pytest.raises(NodeFailed) as raised:
            await http.send(OutboundRequest("GET", f"{server}/slow", timeout=0.5))
    finally:
        await http.aclose()
    assert raised.value.message == "The request to '127.0.0.1' took more than 0.5 s."
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize(("request_", "sentence"), [
    (OutboundRequest("GET", "file:///etc/passwd"), "'file:///etc/passwd' is not an http or https URL."),
    (OutboundRequest("GET", "gopher://example.com/"), "'gopher://example.com/' is not an http or https URL."),
    (OutboundRequest("TRACE", "http://example.com/"),
     "The method 'TRACE' is not one of DELETE, GET, HEAD, OPTIONS, PATCH, POST, PUT."),
    (OutboundRequest("GET", "http://example.com/", headers=(("X-A", "1\r\nX-B: 2"),)),
     "The header 'X-A' is not a valid HTTP header."),
    (OutboundRequest("GET", "http://example.com/", headers=(("Host", "internal"),)),
     "The header 'Host' is set by the request itself and cannot be given."),
    (OutboundRequest("GET", "http://user:pw@example.com/"),
     "A URL with a user name or password is not allowed; send an Authorization header."),
])
async def test_a_malformed_request_is_refused_before_any_connection(request_: OutboundRequest,
                                                                    sentence: str) -> None:
    http = GuardedHttp()
    try:
        with pytest.raises(NodeFailed) as raised:
            await http.send(request_)
    finally:
        await http.aclose()
    assert raised.value.message == sentence
