"""Typed identifiers. They are plain strings at run time; the types keep them apart."""

from typing import NewType

AppId = NewType("AppId", str)
OwnerId = NewType("OwnerId", str)
ConversationId = NewType("ConversationId", str)
MessageId = NewType("MessageId", str)
TaskId = NewType("TaskId", str)
ThoughtId = NewType("ThoughtId", str)
# Who chats, under an account: the request's `user` (a front end's own id for its user), or the
# account itself when a request names none. Opaque to the platform.
EndUserId = NewType("EndUserId", str)

# The platform's agent, every account's: the MEMAGENT_AGENT__* settings (a turn naming no agent runs it).
DEFAULT_AGENT = AppId("default")
