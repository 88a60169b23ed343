"""The HTTP edge's error policy (interfaces/http/errors.py), on a tiny app with the real handlers."""

from __future__ import annotations

import inspect

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import application.errors as application_errors
from application.errors import (
    ApplicationError,
    Conflict,
    InvalidInput,
    MalformedRecord,
    MalformedRequest,
    ModelError,
    NotFound,
    PayloadTooLarge,
    StoreUnavailable,
    Unauthorized,
    UnsupportedMediaType,
    UpkeepBusy,
)
from domain.errors import DomainError, MalformedHistory
from interfaces.http.errors import STATUS, install_error_handlers


class _AdapterError(ApplicationError):
    """An application error another layer defines (like infrastructure's RedisUnreachable)."""

    code = "adapter_down"


RAISED: dict[str, Exception] = {
    "domain": DomainError("the history must alternate"),
    "domain-subclass": MalformedHistory("two user messages in a row"),
    "malformed": MalformedRequest("Last-Event-ID must be a number"),
    "unauthorized": Unauthorized("An API key is required."),
    "not-found": NotFound("no such conversation"),
    "conflict": Conflict("already running"),
    "too-large": PayloadTooLarge("The document is larger than the limit of 10 bytes."),
    "media-type": UnsupportedMediaType("Send text/plain or text/markdown."),
    "invalid": InvalidInput("the document is empty"),
    "model": ModelError("the model timed out"),
    "store": StoreUnavailable("the database failed"),
    "busy": UpkeepBusy("upkeep is busy"),
    "record": MalformedRecord("The conversation's stored history is malformed."),
    "adapter": _AdapterError("the adapter is down"),
    "bug": RuntimeError("secret detail of a bug"),
}


@pytest.fixture(scope="module")
def client() -> TestClient:
    app = FastAPI()

    @app.get("/raise/{what}")
    async def raise_it(what: str) -> None:
        raise RAISED[what]

    install_error_handlers(app)
    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize(
    ("what", "status", "code"),
    [
        ("domain", 422, "invalid_input"),
        ("domain-subclass", 422, "invalid_input"),
        ("malformed", 400, "malformed_request"),
        ("unauthorized", 401, "unauthorized"),
        ("not-found", 404, "not_found"),
        ("conflict", 409, "conflict"),
        ("too-large", 413, "payload_too_large"),
        ("media-type", 415, "unsupported_media_type"),
        ("invalid", 422, "invalid_input"),
        ("model", 503, "model_error"),
        ("store", 503, "store_unavailable"),
        ("busy", 503, "memory_busy"),
        ("record", 500, "history_format_error"),
        ("adapter", 503, "adapter_down"),
    ],
)
def test_each_error_answers_its_status_code_and_message(client: TestClient, what: str, status: int, code: str) -> None:
    response = client.get(f"/raise/{what}")
    assert (response.status_code, response.json()) == (status, {"code": code, "message": str(RAISED[what])})
    assert ("www-authenticate" in response.headers) == (status == 401)


def test_a_domain_error_in_a_route_is_invalid_input_not_a_500(client: TestClient) -> None:
    response = client.get("/raise/domain")
    assert response.status_code == 422
    assert response.json() == {"code": "invalid_input", "message": "the history must alternate"}


def test_a_401_names_the_bearer_scheme(client: TestClient) -> None:
    assert client.get("/raise/unauthorized").headers["www-authenticate"] == "Bearer"


def test_an_unexpected_error_is_a_500_without_details(client: TestClient) -> None:
    response = client.get("/raise/bug")
    assert (response.status_code, response.json()) == (
        500, {"code": "internal_error", "message": "An internal error occurred."}
    )


def test_http_exceptions_and_validation_keep_their_codes(client: TestClient) -> None:
    assert client.get("/no/such/route").json()["code"] == "not_found"
    assert client.post("/raise/domain").json()["code"] == "method_not_allowed"


def test_every_application_error_class_has_its_status_in_the_table() -> None:
    classes = [
        kind for _, kind in inspect.getmembers(application_errors, inspect.isclass)
        if issubclass(kind, ApplicationError) and kind.__module__ == application_errors.__name__
    ]
    assert classes
    assert [kind.__name__ for kind in classes if kind not in STATUS] == []
