"""Typed identifiers. They are plain strings at run time; the types keep them apart."""

from typing import NewType

AppId = NewType("AppId", str)
OwnerId = NewType("OwnerId", str)
ConversationId = NewType("ConversationId", str)
MessageId = NewType("MessageId", str)
TaskId = NewType("TaskId", str)
ThoughtId = NewType("ThoughtId", str)
