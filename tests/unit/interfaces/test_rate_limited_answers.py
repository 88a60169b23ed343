"""A turn refused by a rate limit, at the HTTP edge: 429 `rate_limited` with `Retry-After`, and under
`/v1` OpenAI's shape (`rate_limit_error`, `rate_limit_exceeded`) with the same header."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from application.errors import RateLimited
from interfaces.http.errors import install_error_handlers

MESSAGE = "This API key has reached its limit of turns per minute (5); retry in 42 s."


@pytest.fixture(scope="module")
def client() -> TestClient:
    app = FastAPI()

    @app.post("/api/chat")
    @app.post("/v1/chat/completions")
    async def refuse() -> None:
        raise RateLimited(MESSAGE, 42)

    install_error_handlers(app)
    return TestClient(app)


def test_a_refused_turn_is_429_rate_limited_with_retry_after(client: TestClient) -> None:
    response = client.post("/api/chat")
    assert response.status_code == 429
    assert response.json() == {"code": "rate_limited", "message": MESSAGE}
    assert response.headers["retry-after"] == "42"


def test_under_v1_it_takes_openais_rate_limit_shape_and_keeps_its_retry_after(client: TestClient) -> None:
    response = client.post("/v1/chat/completions")
    assert response.status_code == 429
    assert response.json() == {"error": {"message": MESSAGE, "type": "rate_limit_error", "param": None,
                                         "code": "rate_limit_exceeded"}}
    assert response.headers["retry-after"] == "42"
