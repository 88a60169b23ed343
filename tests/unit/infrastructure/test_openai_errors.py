import json
import logging

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
        (status_error(503, "overloaded\nretry"), "The model server failed to answer (HTTP 503); try again shortly."),
        (status_error(429, "slow down"), "The model server is rate limiting requests (HTTP 429); try again shortly."),
        (status_error(400, "context too long"), "The model server rejected the request (HTTP 400)."),
        (status_error(401, "who are you"), "The model server refused the API key (HTTP 401)."),
        (openai.APITimeoutError(REQUEST), "The model server did not answer in time."),
        (openai.APIConnectionError(request=REQUEST), "The model server could not be reached."),
        (json.JSONDecodeError("Expecting value", "{x", 1), "The model server sent an answer that is not JSON."),
        (RuntimeError("something odd\n  at line 3"), "The call to the model server failed unexpectedly."),
    ],
)
def test_each_kind_of_failure_reads_as_its_own_plain_sentence(error: Exception, message: str) -> None:
    assert ERRORS.translate(error).message == message


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
        (ConnectionRefusedError(111, "Connection refused"), "The model server could not be reached."),
        (aiohttp.ServerDisconnectedError(), "The model server closed the connection before the answer was complete."),
        (ConnectionResetError(104, "Connection reset by peer"),
         "The model server closed the connection before the answer was complete."),
        (aiohttp.ClientOSError(104, "Connection reset by peer"),
         "The model server closed the connection before the answer was complete."),
        (aiohttp.SocketTimeoutError("Timeout on reading data from socket"), "The model server did not answer in time."),
    ],
)
def test_a_transport_failure_is_told_by_its_cause_not_by_the_class_the_sdk_gave_it(
    cause: BaseException, message: str
) -> None:
    assert ERRORS.translate(caused_by(cause)).message == message


def test_a_stream_dropped_mid_answer_is_a_closed_connection() -> None:
    dropped = httpx2.ReadError("Response payload is not completed")
    dropped.__cause__ = aiohttp.ClientPayloadError("Response payload is not completed")
    error = openai.APIConnectionError(request=REQUEST)
    error.__cause__ = dropped

    assert ERRORS.translate(error).message == "The model server closed the connection before the answer was complete."


def test_an_embedding_server_is_named_as_such() -> None:
    embeddings = ModelErrors("text-embedding-3-small", "http://llm.test/v1", 30.0, server="embedding server")
    assert embeddings.translate(openai.APIConnectionError(request=REQUEST)).message == (
        "The embedding server could not be reached."
    )


INTERNALS = ("http", "llm.test", "127.0.0.1", ":8080", "/v1", "Error", "Exception", "Timeout", "errno", "sk-")


@pytest.mark.parametrize(
    "error",
    [
        caused_by(ConnectionRefusedError(111, "Connection refused to 127.0.0.1:8080")),
        caused_by(aiohttp.ServerDisconnectedError()),
        openai.APITimeoutError(REQUEST),
        status_error(500, "Traceback: KeyError at http://127.0.0.1:8080/v1 with sk-very-secret"),
        RuntimeError("boom at 127.0.0.1:8080"),
    ],
)
def test_a_client_message_names_no_url_host_port_class_or_key(error: Exception) -> None:
    message = ERRORS.translate(error).message
    assert not [word for word in INTERNALS if word in message], message


def test_the_log_line_carries_the_url_the_exception_chain_and_the_server_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="infrastructure.models.openai_errors"):
        ERRORS.translate(caused_by(ConnectionResetError(104, "Connection reset by peer")))
        ERRORS.translate(status_error(503, "overloaded, key sk-very-secret"))

    reset, overloaded = (record.getMessage() for record in caplog.records)
    assert "'gpt-4o-mini'" in reset
    assert "http://llm.test/v1" in reset
    assert "ConnectionResetError: [Errno 104] Connection reset by peer" in reset
    assert "HTTP 503: overloaded" in overloaded
    assert "sk-very-secret" not in overloaded
