"""Who may see what: an account, one of its end users, or an agent key's end user.

Everything a turn makes belongs to an owner (the account) and, under it, to an end user. An
account key without `user` acts for the whole account; with `user` it acts for that end user
only; an agent key always names its `user` and is bound to one agent as well.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.conversations.conversation import EntryPoint
from domain.errors import DomainError
from domain.ids import AppId, EndUserId, OwnerId
from domain.text import text_problem

if TYPE_CHECKING:
    from domain.conversations.conversation import Conversation, Message

MAX_END_USER_CHARS = 256
# The end user of what an account does without naming one: the account itself. No `user` can be
# empty, so no end user's id is ever taken for it (nor the owner's id, which a front end may use).
ACCOUNT_ITSELF = EndUserId("")


# In a path (`/api/users/me/memory`) it means the caller's own end user, so no end user is named so.
RESERVED_END_USER = "me"


def check_end_user(value: str) -> EndUserId:
    """A request's `user`: 1 to 256 characters that can be stored (no NUL, no half surrogate), and
    not the reserved `me`."""
    if not value or len(value) > MAX_END_USER_CHARS:
        raise DomainError(f"user must be 1 to {MAX_END_USER_CHARS} characters")
    if value == RESERVED_END_USER:
        raise DomainError(f"user {RESERVED_END_USER!r} is reserved: it names the caller's own end user")
    problem = text_problem(value)
    if problem:
        raise DomainError(f"user: {problem}")
    return EndUserId(value)


@dataclass(frozen=True, slots=True)
class Viewer:
    """One request's reach. `end_user` None: every end user of the account; `agent_id`: only
    that agent's conversations (an agent key)."""

    owner: OwnerId
    end_user: EndUserId | None = None
    agent_id: AppId | None = None

    def __post_init__(self) -> None:
        if not self.owner:
            raise DomainError("a viewer needs an owner")
        if self.agent_id is not None and self.end_user is None:
            raise DomainError("an agent key acts for one end user")

    @property
    def speaker(self) -> EndUserId:
        """Whom a new conversation belongs to: the named end user, else the account itself."""
        return self.end_user if self.end_user is not None else ACCOUNT_ITSELF

    def sees(self, conversation: Conversation) -> bool:
        # An agent key never reaches the debugger's conversations: they run the unpublished draft.
        return (
            conversation.is_visible_to(self.owner)
            and (self.end_user is None or conversation.end_user == self.end_user)
            and (self.agent_id is None or (conversation.app_id == self.agent_id and not conversation.is_debug))
        )

    def sees_message(self, message: Message) -> bool:
        return (
            message.owner == self.owner
            and (self.end_user is None or message.end_user == self.end_user)
            and (
                self.agent_id is None
                or (message.agent_id == self.agent_id and message.entry_point != EntryPoint.DEBUGGER)
            )
        )
