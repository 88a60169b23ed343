"""What a Redis failure tells a client (a plain sentence per store) and what it logs (the details)."""

from __future__ import annotations

import logging

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from application.errors import ApplicationError, EventStoreUnavailable, MemoryUnavailable
from infrastructure.redis_client import RedisClient

URL = "redis://:s3cret-pass@127.0.0.1:1/0"  # nothing listens on port 1
REFUSED = RedisConnectionError("Error 111 connecting to 127.0.0.1:1. Connection refused.")
INTERNALS = ("redis://", "Redis at", "127.0.0.1", ":1", "s3cret", "Error", "Exception", "registering task", "t-42")


def translated(error: type[ApplicationError], exc: BaseException) -> ApplicationError:
    client = RedisClient(URL)
    with pytest.raises(error) as caught, client.translate(error, "registering task t-42"):
        raise exc
    return caught.value


@pytest.mark.parametrize(
    ("error", "exc", "sentence"),
    [
        (EventStoreUnavailable, REFUSED, "The event store is unavailable; try again shortly."),
        (EventStoreUnavailable, ConnectionResetError(104, "Connection reset by peer"),
         "The event store is unavailable; try again shortly."),
        (MemoryUnavailable, REFUSED, "The memory store is unavailable; try again shortly."),
        (MemoryUnavailable, RedisTimeoutError("Timeout reading from 127.0.0.1:1"),
         "The memory store did not answer in time; try again shortly."),
        (EventStoreUnavailable, ResponseError("OOM command not allowed when used memory > 'maxmemory'."),
         "The event store refused the operation; try again shortly."),
    ],
)
def test_a_redis_failure_tells_the_client_which_store_failed_in_a_plain_sentence(
    error: type[ApplicationError], exc: BaseException, sentence: str
) -> None:
    failure = translated(error, exc)
    assert failure.message == sentence
    assert not [word for word in INTERNALS if word in failure.message], failure.message
    assert failure.__cause__ is exc  # the true cause stays on the chain


def test_the_log_line_names_the_address_the_action_and_the_exception_but_not_the_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="infrastructure.redis_client"):
        translated(EventStoreUnavailable, REFUSED)

    [record] = caplog.records
    logged = record.getMessage()
    assert "redis://:***@127.0.0.1:1/0" in logged
    assert "registering task t-42" in logged
    assert "ConnectionError: Error 111 connecting to 127.0.0.1:1. Connection refused." in logged
    assert "s3cret-pass" not in logged


async def test_a_refused_connection_to_redis_is_an_unavailable_event_store_named_plainly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = RedisClient(URL, retries=0, socket_timeout=1.0)
    try:
        with (
            caplog.at_level(logging.WARNING, logger="infrastructure.redis_client"),
            pytest.raises(EventStoreUnavailable) as caught,
            client.translate(EventStoreUnavailable, "registering task t-42"),
        ):
            await client.commands.get(client.key("task", "t-42"))
    finally:
        await client.close()

    assert caught.value.message == "The event store is unavailable; try again shortly."
    assert "127.0.0.1:1" in caplog.records[-1].getMessage()
