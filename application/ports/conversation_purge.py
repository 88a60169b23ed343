"""What forgetting an end user with their conversations asks of the record: remove them for good,
with the end user's workflow runs."""

from dataclasses import dataclass
from typing import Protocol

from domain.ids import EndUserId, OwnerId, TaskId


@dataclass(frozen=True, slots=True)
class Purged:
    conversations: int
    messages: int
    task_ids: tuple[TaskId, ...]  # of the removed messages, whose event logs go too
    run_ids: tuple[str, ...] = ()  # of the removed workflow runs, whose event logs (a streamed run's) go too


class ConversationPurge(Protocol):
    async def purge_end_user(self, owner: OwnerId, end_user: EndUserId) -> Purged:
        """Delete every conversation of the end user (deleted ones too), their messages and steps, and
        every workflow run of theirs (direct or called by a turn) with its node runs."""
        ...
