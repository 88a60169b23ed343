import json

import aiohttp
import httpx2
import openai
import pytest

from infrastructure.models.openai_errors import ModelErrors, is_transient, retry_after

REQUEST = httpx2.Request("POST", "http://llm.test/v1/chat/completions")
ERRORS = ModelErrors("gpt-4o-mini", "http://llm.test/v1", 30.0, secret="sk-very-secret")


def status_error(status: int, message: str, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    body = {"message": message, "type": "x", "code": None}
    response = httpx2.Response(status, headers=headers, json={"error": body}, request=REQUEST)
    classes = {429: openai.RateLimitError, 400: openai.BadRequestError, 401: openai.AuthenticationError}
    cls = classes.get(status, openai.InternalServerError if status >= 500 else openai.APIStatusError)
    return cls(f"Error code: {status}", response=response, body=body)


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (status_error(503, "overloaded\nretry later"), "the server answered HTTP 503: overloaded"),
        (openai.APITimeoutError(REQUEST), "no answer within 30 s."),
        (openai.APIConnectionError(request=REQUEST), "could not connect to http://llm.test/v1."),
        (json.JSONDecodeError("Expecting value", "{x", 1), "the server sent a chunk that is not JSON."),
        (RuntimeError("something odd\n  at line 3"), "RuntimeError: something odd"),
    ],
)
def test_failures_read_as_one_plain_line(error: Exception, message: str) -> None:
    assert ERRORS.translate(error).message == f"Model 'gpt-4o-mini' failed: {message}"


def test_the_api_key_is_scrubbed_from_a_server_message() -> None:
    translated = ERRORS.translate(status_error(401, "Incorrect API key provided: sk-very-secret"))
    assert "sk-very-secret" not in translated.message
    assert translated.code == "model_error"


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (status_error(429, "slow"), True),
        (status_error(500, "boom"), True),
        (openai.APITimeoutError(REQUEST), True),
        (openai.APIConnectionError(request=REQUEST), True),
        (status_error(400, "bad"), False),
        (status_error(401, "who"), False),
        (ValueError("x"), False),
    ],
)
def test_rate_limits_server_and_connection_errors_are_transient(error: Exception, transient: bool) -> None:
    assert is_transient(error) is transient


def test_retry_after_is_read_from_the_headers() -> None:
    assert retry_after(status_error(429, "s", {"retry-after-ms": "250"})) == pytest.approx(0.25)
    assert retry_after(status_error(429, "s", {"retry-after": "2"})) == 2.0
    assert retry_after(status_error(429, "s", {"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"})) is None
    assert retry_after(ValueError("x")) is None


def caused_by(cause: BaseException) -> openai.APITimeoutError:
    """What the SDK raises when its aiohttp transport fails: every aiohttp connection error reaches
    it as httpx's ConnectTimeout."""
    error = openai.APITimeoutError(REQUEST)
    transport = httpx2.ConnectTimeout(str(cause))
    transport.__cause__ = cause
    error.__cause__ = transport
    return error


@pytest.mark.parametrize(
    ("cause", "message"),
    [
        (ConnectionRefusedError(111, "Connection refused"), "could not connect to http://llm.test/v1."),
        (aiohttp.ServerDisconnectedError(), "could not connect to http://llm.test/v1."),
        (aiohttp.SocketTimeoutError("Timeout on reading data from socket"), "no answer within 30 s."),
    ],
)
def test_a_transport_failure_is_told_by_its_cause_not_by_the_class_the_sdk_gave_it(
    cause: BaseException, message: str
) -> None:
    assert ERRORS.translate(caused_by(cause)).message == f"Model 'gpt-4o-mini' failed: {message}"
