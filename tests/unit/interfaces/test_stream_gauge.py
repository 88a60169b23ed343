"""`memagent_active_streams`: an answer sent as text/event-stream is open from its headers until it
ends, however it ends; any other answer is no stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from infrastructure.metrics.inprocess_metrics import InProcessMetrics
from interfaces.http.stream_gauge import StreamGauge

METRICS = InProcessMetrics()
SEEN_WHILE_STREAMING: list[int] = []


async def events(_: Request) -> Response:
    async def frames() -> AsyncIterator[bytes]:
        yield b"event: agent_message\ndata: {}\n\n"
        await asyncio.sleep(0)
        SEEN_WHILE_STREAMING.append(METRICS.active_streams)
        yield b"event: done\ndata: {}\n\n"

    return StreamingResponse(frames(), media_type="text/event-stream")


async def broken(_: Request) -> Response:
    async def frames() -> AsyncIterator[bytes]:
        yield b"event: agent_message\ndata: {}\n\n"
        raise RuntimeError("the stream broke")

    return StreamingResponse(frames(), media_type="text/event-stream")


async def plain(_: Request) -> Response:
    return JSONResponse({"ok": True})


def client() -> httpx.AsyncClient:
    app = Starlette(routes=[Route("/events", events), Route("/broken", broken), Route("/plain", plain)])
    gauged = StreamGauge(app, metrics=lambda: METRICS)
    return httpx.AsyncClient(transport=httpx.ASGITransport(gauged), base_url="http://test")


@pytest.fixture(autouse=True)
def fresh() -> None:
    METRICS.recorded.clear()
    METRICS.active_streams = 0
    SEEN_WHILE_STREAMING.clear()


async def test_an_event_stream_counts_as_open_while_it_streams_and_closed_after() -> None:
    async with client() as http:
        response = await http.get("/events")
    assert response.text.endswith("event: done\ndata: {}\n\n")
    assert SEEN_WHILE_STREAMING == [1]
    assert METRICS.active_streams == 0
    assert [name for name, _ in METRICS.recorded] == ["stream_opened", "stream_closed"]


async def test_a_stream_that_breaks_is_closed_all_the_same() -> None:
    async with client() as http:
        with pytest.raises(RuntimeError):
            await http.get("/broken")
    assert METRICS.active_streams == 0
    assert [name for name, _ in METRICS.recorded] == ["stream_opened", "stream_closed"]


async def test_an_answer_that_is_not_an_event_stream_is_no_stream() -> None:
    async with client() as http:
        assert (await http.get("/plain")).json() == {"ok": True}
    assert METRICS.recorded == []
