"""OpenAIChatModel when the connection fails: what the client is told, and what the log keeps.

Each kind of transport failure reads as its own plain sentence (a reset is not "could not be
reached"), naming no address; the log line at the translation point names the server's URL and
the exception chain. A failure before the answer's first chunk reached no model (`ModelNotReached`,
billed nothing); one after it did.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import struct
from collections.abc import Callable
from typing import Any

import pytest

from application.errors import ModelError, ModelNotReached
from tests.integration.test_openai_chat_model import (  # noqa: F401  (fixtures are used by name)
    API_KEY,
    Factory,
    collect,
    make,
    models,
    read_into,
)

pytestmark = pytest.mark.integration


ERRORS_LOGGER = "infrastructure.models.openai_errors"
CLOSED = "The model server closed the connection before the answer was complete."
FIRST_CHUNK = b"data: " + json.dumps(
    {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o-mini",
     "choices": [{"index": 0, "delta": {"content": "Half"}, "finish_reason": None}]}
).encode() + b"\n\n"


def resetting_server(after_first_chunk: bool) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Any]:
    """Reads the request, optionally starts a streamed answer, then resets the connection (RST)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        if after_first_chunk:
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            writer.write(head + f"{len(FIRST_CHUNK):x}\r\n".encode() + FIRST_CHUNK + b"\r\n")
            await writer.drain()
            await asyncio.sleep(0.2)
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()

    return handle


@pytest.mark.parametrize("after_first_chunk", [False, True], ids=["before_the_answer", "mid_answer"])
async def test_a_connection_reset_is_reported_as_closed_not_as_unreachable_and_logged_with_detail(
    make: Factory, after_first_chunk: bool, caplog: pytest.LogCaptureFixture  # noqa: F811
) -> None:
    listener = await asyncio.start_server(resetting_server(after_first_chunk), "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    seen: list[str] = []
    try:
        model = make(base_url=f"http://127.0.0.1:{port}/v1", timeout=3.0, max_retries=0)
        with caplog.at_level(logging.WARNING, logger=ERRORS_LOGGER), pytest.raises(ModelError) as failed:
            await asyncio.wait_for(read_into(model, seen), 30)
    finally:
        listener.close()
        await listener.wait_closed()

    assert failed.value.message == CLOSED
    assert seen == (["Half"] if after_first_chunk else [])
    assert isinstance(failed.value, ModelNotReached) is not after_first_chunk
    [record] = [r.getMessage() for r in caplog.records if r.name == ERRORS_LOGGER]
    assert f"http://127.0.0.1:{port}/v1" in record
    assert "Connection reset by peer" in record or "ServerDisconnected" in record


async def test_an_unreachable_server_names_no_address_to_the_client_but_logs_it(
    make: Factory, caplog: pytest.LogCaptureFixture  # noqa: F811
) -> None:
    model = make(base_url="http://127.0.0.1:1/v1", max_retries=0)
    with caplog.at_level(logging.WARNING, logger=ERRORS_LOGGER), pytest.raises(ModelError) as failed:
        await collect(model)

    assert not [word for word in ("127.0.0.1", ":1/", "http", "Error", API_KEY) if word in failed.value.message]
    assert isinstance(failed.value, ModelNotReached)
    [record] = [r.getMessage() for r in caplog.records if r.name == ERRORS_LOGGER]
    assert "http://127.0.0.1:1/v1" in record
    assert "Connect" in record  # the exception chain: ClientConnectorError, ConnectionRefusedError…
    assert API_KEY not in record
