"""The HTTP edge of a real `memagent serve` with keys required: what it refuses, and how early.

Bodies of 200 MB are streamed from a generator over a raw socket (so the test sees the answer the
moment the server sends it, while it is still sending); the server's memory is read from
/proc/<pid>/status. Headers that the HTTP parser refuses are sent as raw bytes too.
"""

from __future__ import annotations

import json
import select
import socket
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.e2e.test_keys_and_owners import Key, create_key
from tests.service import Service, running_service

MB = 1024 * 1024
HUGE = 200 * MB
CHUNK = 64 * 1024
MAX_GROWTH = 50 * MB
MAX_DOCUMENT = 64 * 1024


@dataclass(frozen=True)
class Edge:
    service: Service
    key: Key

    @property
    def port(self) -> int:
        return int(self.service.base_url.rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Edge]:
    folder = tmp_path_factory.mktemp("edge")
    db_url = f"sqlite+aiosqlite:///{folder / 'memagent.db'}"
    key = create_key(db_url, "edge")
    env = {"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
           "MEMAGENT_KNOWLEDGE__MAX_DOCUMENT_BYTES": str(MAX_DOCUMENT)}
    with running_service(env, folder) as service:
        yield Edge(service, key)


def rss(service: Service) -> int:
    status = Path(f"/proc/{service.process.pid}/status").read_text()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def body_chunks(total: int) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        piece = min(CHUNK, total - sent)
        sent += piece
        yield b"x" * piece


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    sent: int  # body bytes the client got to send before the answer came
    closed: bool  # the server closed the connection after its answer, rather than read on

    def json(self) -> dict[str, str]:
        assert self.headers["content-type"].startswith("application/json"), self.headers
        data: dict[str, str] = json.loads(self.body)
        return data


def exchange(port: int, head: bytes, chunks: Iterable[bytes] = (), chunked: bool = False) -> Answer:
    """Send `head`, then the body piece by piece until the server answers; read that answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head)
        sent, reply = 0, b""
        for piece in chunks:
            if select.select([sock], [], [], 0)[0]:
                break  # the server has answered already
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(piece)
        try:
            while b"\r\n\r\n" not in reply or len(reply) < _expected_length(reply):
                data = sock.recv(65536)
                if not data:
                    break
                reply += data
        except ConnectionResetError:
            pass
        return _parse(reply, sent, _closes(sock))


def _closes(sock: socket.socket) -> bool:
    """Whether the server ends the connection (it waits for the rest of the body if it does not)."""
    sock.settimeout(3)
    try:
        return sock.recv(65536) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _expected_length(reply: bytes) -> int:
    head, _, _ = reply.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(head) + 4 + int(value)
    return len(reply) + 1


def _parse(reply: bytes, sent: int, closed: bool) -> Answer:
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return Answer(int(lines[0].split()[1]), headers, body, sent, closed)


def chat_head(length: int | None, key: Key | None) -> bytes:
    lines = ["POST /api/chat HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    lines.append(f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked")
    if key is not None:
        lines.append(f"Authorization: Bearer {key.raw}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_a_huge_body_without_a_key_is_refused_before_it_is_read(edge: Edge) -> None:
    before = rss(edge.service)
    for length in (HUGE, None):  # declared, and chunked
        answer = exchange(edge.port, chat_head(length, None), body_chunks(HUGE), chunked=length is None)
        assert answer.status == 401
        assert answer.json()["code"] == "unauthorized"
        assert answer.sent < HUGE
    assert rss(edge.service) - before < MAX_GROWTH


# Requests answered without their body being read: each answer closes the connection, so the server
# reads no more of a body it will never use (it would otherwise read and discard all of it).
UNREAD = {
    "MCP without a key": ("POST /mcp/", False, 401, "unauthorized"),
    "MCP at /mcp without a key": ("POST /mcp", False, 401, "unauthorized"),
    "no such path": ("POST /nowhere", False, 404, "not_found"),
    "no such path under /api/": ("POST /api/nowhere", True, 404, "not_found"),
    "a method the path lacks": ("POST /healthz", False, 405, "method_not_allowed"),
}


@pytest.mark.parametrize(("line", "keyed", "status", "code"), UNREAD.values(), ids=UNREAD.keys())
def test_a_request_answered_without_its_body_is_refused_before_the_body_is_read(
    edge: Edge, line: str, keyed: bool, status: int, code: str,
) -> None:
    auth = f"Authorization: Bearer {edge.key.raw}\r\n" if keyed else ""
    head = f"{line} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Transfer-Encoding: chunked\r\n\r\n".encode()
    answer = exchange(edge.port, head, body_chunks(HUGE), chunked=True)
    assert (answer.status, answer.json()["code"]) == (status, code)
    assert answer.closed
    assert answer.sent < HUGE


def test_a_declared_length_over_the_limit_is_refused_at_once(edge: Edge) -> None:
    before = rss(edge.service)
    answer = exchange(edge.port, chat_head(HUGE, edge.key), body_chunks(HUGE))
    assert answer.status == 413
    assert answer.json()["code"] == "payload_too_large"
    assert answer.headers["connection"] == "close"
    assert rss(edge.service) - before < MAX_GROWTH


def test_a_chunked_body_is_refused_once_its_bytes_pass_the_limit(edge: Edge) -> None:
    before = rss(edge.service)
    answer = exchange(edge.port, chat_head(None, edge.key), body_chunks(HUGE), chunked=True)
    assert answer.status == 413
    assert answer.json()["code"] == "payload_too_large"
    assert answer.sent < 10 * MB
    assert rss(edge.service) - before < MAX_GROWTH


def test_an_upload_may_be_larger_than_a_json_body_up_to_the_document_limit(edge: Edge) -> None:
    with httpx.Client(base_url=edge.service.base_url, headers=edge.key.headers, timeout=30) as http:
        dataset = http.post("/api/datasets", json={"name": "edge"}).json()["id"]
        documents = f"/api/datasets/{dataset}/documents"
        accepted = http.post(documents, files={"file": ("big.txt", b"word " * (MAX_DOCUMENT // 5), "text/plain")})
        assert accepted.status_code == 201, accepted.text
        too_big = http.post(documents, files={"file": ("huge.txt", b"a" * (MAX_DOCUMENT * 8), "text/plain")})
        assert too_big.status_code == 413
        assert too_big.json()["code"] == "payload_too_large"


def test_a_multipart_upload_is_checked_by_its_name_and_its_part_type_alike(edge: Edge) -> None:
    with httpx.Client(base_url=edge.service.base_url, headers=edge.key.headers, timeout=30) as http:
        documents = f"/api/datasets/{http.post('/api/datasets', json={'name': 'types'}).json()['id']}/documents"
        script = http.post(documents, files={"file": ("x.sh", b"echo hi", "text/plain")})
        as_json = http.post(documents, json={"name": "x.sh", "text": "echo hi", "media_type": "text/plain"})
        assert (script.status_code, as_json.status_code) == (415, 415)
        assert script.json()["code"] == as_json.json()["code"] == "unsupported_media_type"


@pytest.mark.parametrize("name", ["a\r\nX-Injected: 1.txt", "a\nb.txt", "a\rb.md"])
def test_a_file_name_holding_cr_or_lf_is_refused(edge: Edge, name: str) -> None:
    with httpx.Client(base_url=edge.service.base_url, headers=edge.key.headers, timeout=30) as http:
        documents = f"/api/datasets/{http.post('/api/datasets', json={'name': 'names'}).json()['id']}/documents"
        in_form = http.post(documents, files={"file": ("doc.txt", b"text", "text/plain")}, data={"name": name})
        in_json = http.post(documents, json={"name": name, "text": "text"})
        assert (in_form.status_code, in_json.status_code) == (422, 422), (in_form.text, in_json.text)


def test_a_405_lists_every_method_of_the_path(edge: Edge) -> None:
    answer = httpx.post(f"{edge.service.base_url}/api/conversations/c1/memory", headers=edge.key.headers)
    assert answer.status_code == 405
    assert answer.json()["code"] == "method_not_allowed"
    assert answer.headers["allow"] == "DELETE, GET"


# What the HTTP parser (uvicorn's, before the app runs) makes of headers RFC 9112 forbids: each is
# refused with 400 and a plain-text body, which the app never sees (docs/http-api.md: "What the HTTP edge
# guarantees").
MALFORMED_HEADERS = {
    "bare LF": b"GET /healthz HTTP/1.1\nHost: 127.0.0.1\n\n",
    "NUL in a value": b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\x00b\r\n\r\n",
    "obs-fold": b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\r\n  folded\r\n\r\n",
    "space before colon": b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A : a\r\n\r\n",
    "bad Content-Length": b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1x\r\n\r\n",
}


@pytest.mark.parametrize("request_bytes", MALFORMED_HEADERS.values(), ids=MALFORMED_HEADERS.keys())
def test_a_header_the_parser_refuses_gets_its_plain_400(edge: Edge, request_bytes: bytes) -> None:
    answer = exchange(edge.port, request_bytes)
    assert answer.status == 400
    assert answer.headers["content-type"].startswith("text/plain")
    assert answer.body == b"Invalid HTTP request received."
