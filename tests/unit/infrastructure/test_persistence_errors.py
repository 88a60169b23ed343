from __future__ import annotations

import asyncpg

from application.errors import InvalidInput, StoreUnavailable
from infrastructure.errors import DatabaseNotMigrated
from infrastructure.persistence.errors import MIGRATE_HINT, reason, startup_failure_message, store_error


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
