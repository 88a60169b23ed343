from __future__ import annotations

import logging
import sqlite3

import asyncpg
import pytest
import sqlalchemy.exc

from application.errors import InvalidInput, StoreUnavailable
from infrastructure.errors import DatabaseNotMigrated
from infrastructure.persistence.errors import (
    BUSY,
    CONFLICTING,
    MIGRATE_HINT,
    REFUSED_VALUE,
    TIMED_OUT,
    UNAVAILABLE,
    reason,
    startup_failure_message,
    store_error,
)


def test_a_refused_parameter_is_named_without_its_value() -> None:
    refused = asyncpg.exceptions.DataError(
        "invalid input for query argument $4: '[{\"role\": \"system\", \"content\": \"the user's words' (too long)"
    )
    assert reason(refused) == "DataError: invalid input for query argument $4"


def test_a_value_the_server_refuses_is_invalid_input_and_a_failing_server_is_unavailable() -> None:
    nul = asyncpg.exceptions.CharacterNotInRepertoireError('invalid byte sequence for encoding "UTF8": 0x00')
    down = ConnectionRefusedError(111, "Connection refused")
    assert isinstance(store_error("get_conversation", nul), InvalidInput)
    assert isinstance(store_error("get_conversation", down), StoreUnavailable)


def test_an_unmigrated_database_is_a_store_unavailable_named_without_its_password() -> None:
    not_migrated = DatabaseNotMigrated(MIGRATE_HINT)
    assert isinstance(not_migrated, StoreUnavailable)
    assert not_migrated.code == "store_unavailable"
    message = startup_failure_message("postgresql+asyncpg://memagent:s3cret@db:5432/memagent", not_migrated)
    assert message.startswith(MIGRATE_HINT)
    assert "s3cret" not in message
    assert "MEMAGENT_DATABASE__URL=" in message


INTERNALS = ("postgresql", "sqlite", "127.0.0.1", ":5432", "find_api_key", "Error", "Exception", "refused (", "s3cret")


def refused_connection() -> sqlalchemy.exc.DBAPIError:
    down = ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 5432)")
    return sqlalchemy.exc.OperationalError("SELECT api_keys.id FROM api_keys", {}, down)


@pytest.mark.parametrize(
    ("failure", "sentence"),
    [
        (ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 5432)"), UNAVAILABLE),
        (refused_connection(), UNAVAILABLE),
        (sqlalchemy.exc.TimeoutError("QueuePool limit of size 20 overflow 20 reached"), BUSY),
        (sqlalchemy.exc.OperationalError("INSERT", {}, sqlite3.OperationalError("database is locked")), BUSY),
        (TimeoutError(), TIMED_OUT),
        (sqlalchemy.exc.IntegrityError("INSERT", {}, sqlite3.IntegrityError("UNIQUE constraint failed")), CONFLICTING),
        (asyncpg.exceptions.CharacterNotInRepertoireError("invalid byte sequence 0x00"), REFUSED_VALUE),
    ],
)
def test_a_database_failure_reads_as_a_plain_sentence_of_its_kind(failure: BaseException, sentence: str) -> None:
    translated = store_error("find_api_key", failure, "s3cret", where="The database at postgresql://u:***@h/x")
    assert translated.message == sentence
    assert not [word for word in INTERNALS if word in translated.message], translated.message


def test_the_log_line_names_the_database_the_operation_and_the_driver_error(caplog: pytest.LogCaptureFixture) -> None:
    where = "The database at postgresql+asyncpg://memagent:***@127.0.0.1:5432/memagent"
    with caplog.at_level(logging.WARNING, logger="infrastructure.persistence.errors"):
        store_error("find_api_key", refused_connection(), "s3cret", where=where)

    [record] = caplog.records
    logged = record.getMessage()
    assert where in logged
    assert "find_api_key" in logged
    assert "ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 5432)" in logged
    assert "SELECT" not in logged  # statements (and their parameters) stay out of logs too
