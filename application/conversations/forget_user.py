"""ForgetUser ("forget me"): everything memory holds of one end user, and with `conversations` their
conversations, messages and workflow runs too, in the record (SQL) and the cache (Redis or in-process).

Memory first: every fact and history entry, every summary, archive entry, entity and cached window
of each of the user's conversations. With `conversations`, each conversation is then deleted as a
user would delete it (no turn opens in it, a running one is stopped and awaited), and the rows are
removed for good with their steps and the user's workflow runs, and the event logs of their turns
and streamed runs are expired. It answers the counts.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from application.errors import NotFound
from application.ports.conversation_reader import ConversationFilter, ListPosition
from domain.accounts.viewers import Viewer
from domain.ids import TaskId
from domain.memory.user_facts import ForgetCounts

if TYPE_CHECKING:
    from application.conversations.delete_conversation import DeleteConversation
    from application.ports.conversation_cleanup import MemoryEraser
    from application.ports.conversation_purge import ConversationPurge
    from application.ports.conversation_reader import ConversationReader
    from application.ports.event_log import EventLog
    from application.ports.memory_record import MemoryForgetting
    from domain.conversations.conversation import Conversation
    from domain.ids import EndUserId, OwnerId

PAGE = 200
EXPIRE_AT_ONCE = 0.001  # seconds: an event log's retention, so that it is gone now


class ForgetUser:
    def __init__(
        self,
        store: ConversationReader,
        memory: MemoryEraser,
        forgetting: MemoryForgetting,
        delete: DeleteConversation,
        purge: ConversationPurge,
        events: EventLog,
    ) -> None:
        self._store = store
        self._memory = memory
        self._forgetting = forgetting
        self._delete = delete
        self._purge = purge
        self._events = events

    async def __call__(self, owner: OwnerId, end_user: EndUserId, *, conversations: bool = False) -> ForgetCounts:
        theirs = await self._conversations(owner, end_user)
        counts = await self._forgetting.forget_user(owner, end_user)
        # Each erase waits for the conversation's running upkeep and keeps later ones from applying
        # what came before; what such an upkeep wrote meanwhile goes with a second sweep.
        windows = sum([await self._memory.erase(conversation.id) for conversation in theirs])
        counts = _added(counts, await self._forgetting.forget_user(owner, end_user), windows=windows)
        if not conversations:
            return counts
        viewer = Viewer(owner, end_user)
        for conversation in theirs:
            try:
                await self._delete(conversation.id, viewer)
            except NotFound:  # deleted meanwhile
                continue
        purged = await self._purge.purge_end_user(owner, end_user)
        # A streamed run's event log is keyed by the run's id (`run_log`, application/workflows/logged_run.py).
        for task_id in (*purged.task_ids, *(TaskId(run_id) for run_id in purged.run_ids)):
            await self._events.close(task_id, EXPIRE_AT_ONCE)
        return replace(counts, conversations=purged.conversations, messages=purged.messages,
                       workflow_runs=len(purged.run_ids))

    async def _conversations(self, owner: OwnerId, end_user: EndUserId) -> list[Conversation]:
        found: list[Conversation] = []
        query = ConversationFilter(Viewer(owner, end_user), include_debug=True, limit=PAGE)
        while True:
            page = await self._store.list_conversations(query)
            found.extend(listing.conversation for listing in page)
            if len(page) < PAGE:
                return found
            last = page[-1].conversation
            query = replace(query, after=ListPosition(last.last_active_at or last.created_at, last.id))


def _added(first: ForgetCounts, second: ForgetCounts, *, windows: int) -> ForgetCounts:
    return ForgetCounts(
        facts=first.facts + second.facts,
        conversation_entities=first.conversation_entities + second.conversation_entities,
        archive_entries=first.archive_entries + second.archive_entries,
        summaries=first.summaries + second.summaries,
        windows=windows,
    )
