import json
import logging
from collections.abc import Callable

import aiohttp
import httpx2
import openai
import pytest

from application.errors import ModelNotReached
from infrastructure.models.openai_errors import ModelErrors, StatusError, is_transient, retry_after

REQUEST = httpx2.Request("POST", "http://llm.test/v1/chat/completions")
ERRORS = ModelErrors("gpt-4o-mini", "http://llm.test/v1", 30.0, secret="sk-very-secret")


def answered(status: int, message: str, headers: dict[str, str] | None = None) -> StatusError:
    """What the chat model raises for an error status, from OpenAI's error body."""
    body = {"error": {"message": message, "type": "x", "code": None}}
    return StatusError.of(status, headers or {}, json.dumps(body).encode())


def status_error(status: int, message: str, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    """What the openai SDK raises for one (the embedder's calls go through it)."""
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
        (answered(503, "overloaded"), "The model server failed to answer (HTTP 503); try again shortly."),
        (answered(429, "slow down"), "The model server is rate limiting requests (HTTP 429); try again shortly."),
        (answered(404, "no such model"),
         "The model server does not offer the configured model or endpoint (HTTP 404)."),
        (answered(403, "not yours"), "The model server denied access to the model (HTTP 403)."),
        (answered(422, "bad field"), "The model server rejected the request (HTTP 422)."),
        (answered(401, "who are you"), "The model server refused the API key (HTTP 401)."),
        (openai.APITimeoutError(REQUEST), "The model server did not answer in time."),
        (openai.APIConnectionError(request=REQUEST), "The model server could not be reached."),
        (json.JSONDecodeError("Expecting value", "{x", 1), "The model server sent an answer that is not JSON."),
        (RuntimeError("something odd\n  at line 3"), "The call to the model server failed unexpectedly."),
    ],
)
def test_each_kind_of_failure_reads_as_its_own_plain_sentence(error: Exception, message: str) -> None:
    assert ERRORS.translate(error).message == message


@pytest.mark.parametrize("failure", [status_error, answered], ids=["sdk", "ours"])
def test_the_api_key_is_scrubbed_from_a_server_message(
    failure: Callable[[int, str], Exception], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="infrastructure.models.openai_errors"):
        translated = ERRORS.translate(failure(401, "Incorrect API key provided: sk-very-secret"))
    assert "sk-very-secret" not in translated.message
    assert "sk-very-secret" not in caplog.text
    assert translated.code == "model_error"


def test_an_error_status_before_the_answer_reached_no_model() -> None:
    assert isinstance(ERRORS.translate(answered(500, "boom"), before_answer=True), ModelNotReached)
    assert not isinstance(ERRORS.translate(answered(500, "boom")), ModelNotReached)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"error": {"message": "model not found", "type": "invalid_request_error"}}', "model not found"),
        (b'{"error": "model \'llama9\' not found"}', "model 'llama9' not found"),  # Ollama's shape
        (b'{"message": "no route"}', "no route"),
        (b"<html><body>502 Bad Gateway</body></html>", "<html><body>502 Bad Gateway</body></html>"),
        (b"", ""),
    ],
)
def test_the_servers_message_is_read_from_whatever_body_it_sent(body: bytes, message: str) -> None:
    assert StatusError.of(502, {}, body).message == message


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (answered(429, "slow"), True),
        (answered(500, "boom"), True),
        (answered(503, "overloaded"), True),
        (TimeoutError(), True),
        (aiohttp.SocketTimeoutError("Timeout on reading data from socket"), True),
        (aiohttp.ServerDisconnectedError(), True),
        (aiohttp.ClientOSError(111, "Connect call failed"), True),
        (answered(400, "bad"), False),
        (answered(401, "who"), False),
        (answered(404, "where"), False),
        (json.JSONDecodeError("Expecting value", "{x", 1), False),
        (ValueError("x"), False),
    ],
)
def test_rate_limits_server_and_connection_errors_are_transient(error: Exception, transient: bool) -> None:
    assert is_transient(error) is transient


def test_retry_after_is_read_from_the_headers_whatever_their_case() -> None:
    assert retry_after(answered(429, "s", {"retry-after-ms": "250"})) == pytest.approx(0.25)
    assert retry_after(answered(429, "s", {"Retry-After": "2"})) == 2.0
    assert retry_after(answered(429, "s", {"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"})) is None
    assert retry_after(answered(429, "s")) is None
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


def payload_error(cause: BaseException) -> aiohttp.ClientPayloadError:
    dropped = aiohttp.ClientPayloadError("Response payload is not completed")
    dropped.__cause__ = cause
    return dropped


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (aiohttp.ServerDisconnectedError(), "The model server closed the connection before the answer was complete."),
        (aiohttp.ClientOSError(104, "Connection reset by peer"),
         "The model server closed the connection before the answer was complete."),
        (payload_error(ConnectionResetError(104, "Connection reset by peer")),
         "The model server closed the connection before the answer was complete."),
        (aiohttp.ClientOSError(111, "Connect call failed"), "The model server could not be reached."),
        (aiohttp.ClientConnectionError("Connection closed"), "The model server could not be reached."),
        (aiohttp.SocketTimeoutError("Timeout on reading data from socket"), "The model server did not answer in time."),
        (aiohttp.ConnectionTimeoutError("Connection timeout to host"), "The model server did not answer in time."),
        (TimeoutError(), "The model server did not answer in time."),  # a stalled upload
    ],
)
def test_aiohttps_own_errors_read_as_the_same_sentences(error: BaseException, message: str) -> None:
    assert ERRORS.translate(error).message == message


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
        answered(500, "Traceback: KeyError at http://127.0.0.1:8080/v1 with sk-very-secret"),
        aiohttp.ClientOSError(111, "Connect call failed ('127.0.0.1', 8080)"),
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
        ERRORS.translate(answered(502, "upstream gone, key sk-very-secret\nsecond line"))

    reset, overloaded, gone = (record.getMessage() for record in caplog.records)
    assert "'gpt-4o-mini'" in reset
    assert "http://llm.test/v1" in reset
    assert "ConnectionResetError: [Errno 104] Connection reset by peer" in reset
    assert "HTTP 503: overloaded" in overloaded
    assert "sk-very-secret" not in overloaded
    assert "HTTP 502: upstream gone, key ***" in gone
    assert "second line" not in gone
