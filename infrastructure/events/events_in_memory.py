"""One task's events held in memory, and the readers waiting for more: the in-process event log's
record and the Redis log's local tail both keep them so."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from application.ports.event_log import LoggedEvent

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.conversations.thoughts import AgentThought


@dataclass(slots=True)
class EventsInMemory:
    events: list[LoggedEvent] = field(default_factory=list)
    grew: asyncio.Event = field(default_factory=asyncio.Event)  # await it to wait for the next change

    def add(self, thoughts: Sequence[AgentThought]) -> int:
        """The events with the ids that follow, readers woken; the last one's id."""
        first_id = len(self.events) + 1
        self.events.extend(LoggedEvent(first_id + n, t) for n, t in enumerate(thoughts))
        self.wake()
        return len(self.events)

    def wake(self) -> None:
        # Waiters hold the old Event: setting it wakes them, and later waiters get a fresh one.
        self.grew.set()
        self.grew = asyncio.Event()
