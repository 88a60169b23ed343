"""Whom a model call serves: the account, agent, conversation and message, carried by a contextvar.

The metered model decorators see every call but not what it is for; threading an owner and a
conversation through every port that calls a model (the turn's loop, the summariser, the entity
extractor, the titler, the follow-up writer, the embedders) would change all of them for a concern
none has. So a turn sets its scope once, around its whole run (`RunChatTurn`), and everything it
starts inherits it: asyncio copies the context into each task it creates, and the title, follow-up
and upkeep jobs are spawned from inside the turn. A call with no scope (a document embedded for a
knowledge base) is recorded all the same, billed to no account.

The scope also adds up the turn's own calls as the recorder prices them (`chat`), so the message's
total is what its calls cost, a stopped or timed-out one's included; and it can keep those calls
for the transaction that saves the turn's outcome (`keep_calls`).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from domain.conversations.messages import Usage

if TYPE_CHECKING:
    from collections.abc import Iterator

    from application.chat_turn.turn import Turn
    from domain.billing.model_calls import ModelCall


@dataclass(slots=True)
class CallScope:
    owner: str
    agent_id: str
    conversation_id: str | None = None
    message_id: str | None = None
    agent_version: int | None = None
    debug: bool = False
    chat_calls: int = 0
    chat_usage: Usage = field(default_factory=Usage)
    # The turn's own calls, kept to be saved with its outcome (None: the turn saves none of them).
    kept: list[ModelCall] | None = None

    def add_chat(self, usage: Usage) -> None:
        self.chat_calls += 1
        self.chat_usage = self.chat_usage + usage

    def keep(self, call: ModelCall) -> bool:
        """Keep one of the turn's own calls for its outcome's transaction; False when it keeps none."""
        if self.kept is None:
            return False
        self.kept.append(call)
        return True

    def take_kept(self) -> list[ModelCall]:
        """The calls kept so far; calls made after this go to the ledger's writer."""
        kept, self.kept = self.kept or [], None
        return kept


_SCOPE: ContextVar[CallScope | None] = ContextVar("memagent_model_call_scope", default=None)


def current_scope() -> CallScope | None:
    return _SCOPE.get()


@contextmanager
def calls_for(scope: CallScope) -> Iterator[CallScope]:
    """Model calls made inside (and in tasks started inside) serve `scope`."""
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)


def turn_scope(turn: Turn, keep_calls: bool = False) -> CallScope:
    """`keep_calls`: the turn's own (chat) calls are kept to be written with its outcome, in the
    transaction that saves it, rather than by the ledger's writer beside it (on SQLite the two
    would wait on each other's write lock)."""
    message = turn.message
    return CallScope(
        owner=message.owner, agent_id=turn.config.app_id, conversation_id=message.conversation_id,
        message_id=message.id, agent_version=message.agent_version, debug=turn.conversation.is_debug,
        kept=[] if keep_calls else None,
    )


def kept_calls() -> list[ModelCall]:
    """The current turn's kept calls, taken (none outside a turn, or once taken)."""
    scope = _SCOPE.get()
    return scope.take_kept() if scope is not None else []


def spent_by_turn(counted: Usage) -> Usage:
    """What the turn's calls cost as the ledger priced them; `counted` (the loop's own count) when
    no call of the turn went through the ledger (a refused query, a turn outside any scope)."""
    scope = _SCOPE.get()
    if scope is None or scope.chat_calls == 0:
        return counted
    return scope.chat_usage
