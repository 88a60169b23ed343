"""ResumeTurn: a client's tool results resume the turn that paused for them (domain.tools.client_tools).

The paused turn is found by a call id, on whichever worker runs it (ClientToolExchange). Only its
viewers may resume it, through the agent it runs; the results must answer exactly the calls it
waits for, and only the first request to deliver them resumes it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from application.chat_turn.turn import TurnHandle
from application.errors import Conflict, InvalidParameter

if TYPE_CHECKING:
    from application.agents.list_models import ListModels
    from application.ports.client_tool_exchange import ClientToolExchange
    from domain.accounts.viewers import Viewer
    from domain.tools.client_tools import Resumption


class ResumeTurn:
    def __init__(self, exchange: ClientToolExchange, models: ListModels) -> None:
        self._exchange = exchange
        self._models = models

    async def __call__(self, viewer: Viewer, model: str, resumption: Resumption) -> tuple[TurnHandle, tuple[str, ...]]:
        """The resumed turn, and the calls it had paused for (its events after that pause are the
        answer to this request)."""
        latest = resumption.results[-1].call_id  # the latest pause's (earlier rounds may be resent too)
        waiting = [p for p in await self._exchange.find(viewer.owner, latest) if p.task.visible_to(viewer)]
        if not waiting:
            raise InvalidParameter(
                f"messages: no paused turn waits for the tool call {latest!r} (unknown, answered already, or past "
                "its wait).", "messages",
            )
        agent_id, _ = await self._models.find(viewer.owner, viewer.agent_id, model)
        if all(paused.task.agent_id != agent_id for paused in waiting):
            raise InvalidParameter(f"The tool call {latest!r} belongs to another model's turn.", "model")
        # Several turns wait for one id only when identical legacy requests paused them: any may take it.
        for paused in (p for p in waiting if p.task.agent_id == agent_id):
            answer = replace(resumption, results=tuple(r for r in resumption.results if r.call_id in paused.call_ids))
            if not answer.answers(paused.call_ids):
                wanted = ", ".join(repr(call_id) for call_id in paused.call_ids)
                raise InvalidParameter(f"messages: the paused turn waits for a result of each of {wanted}, and "
                                       "only those.", "messages")
            if await self._exchange.deliver(paused, answer):
                task = paused.task
                return TurnHandle(task.task_id, task.conversation_id, task.message_id), paused.call_ids
        raise Conflict(f"The turn that called {latest!r} was resumed already, or stopped.")
