from __future__ import annotations

from datetime import UTC, datetime

from domain.conversation import Message
from domain.ids import ConversationId, MessageId, OwnerId, TaskId
from infrastructure.persistence.rows import OUTCOME_COLUMNS, message_outcome_values

AT = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_finish_statement_sets_every_outcome_column() -> None:
    message = Message(MessageId("m"), ConversationId("c"), OwnerId("o"), TaskId("t"), "q", AT, AT)
    assert set(OUTCOME_COLUMNS) == set(message_outcome_values(message))
