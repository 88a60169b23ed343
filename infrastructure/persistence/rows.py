"""Database rows, kept apart from the domain objects, with explicit mappings both ways.

The domain's frozen dataclasses know nothing of SQLAlchemy; these rows know nothing of
domain rules. `*_to_domain` and `*_from_domain` are the only bridges between them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from domain.accounts.keys import ApiKey, ApiKeyId
from domain.conversations.conversation import (
    Conversation,
    Message,
    MessageAgentThought,
    MessageStatus,
    Rating,
    ReviewStage,
)
from domain.conversations.messages import Usage
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId, ThoughtId

if TYPE_CHECKING:
    from sqlalchemy import Row

# Named constraints, so that migrations can refer to them identically on every backend.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

ID = String(64)
OWNER = String(255)
END_USER = String(256)
TIMESTAMP = DateTime(timezone=True)
# JSONB on PostgreSQL (binary, indexable); plain JSON text elsewhere.
JSON_DOC = JSON().with_variant(JSONB(), "postgresql")
# The same, with None stored as SQL NULL rather than the JSON `null` (a value not there yet).
OPTIONAL_JSON_DOC = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL gets a BIGSERIAL.
SEQUENCE = BigInteger().with_variant(Integer(), "sqlite")
# The partial indexes of retention (infrastructure/persistence/sqlalchemy_pruning.py, migration 0009).
HOLDS_PROMPT = text("prompt <> ''")
DELETED = text("deleted_at IS NOT NULL")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class ConversationRow(Base):
    __tablename__ = "conversations"

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    app_id: Mapped[str] = mapped_column(String(255))
    owner: Mapped[str] = mapped_column(OWNER)
    summary: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    updated_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    deleted_at: Mapped[datetime | None] = mapped_column(TIMESTAMP)
    # A debugger conversation (an agent's draft), kept apart from the published agent's.
    is_debug: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    end_user: Mapped[str] = mapped_column(END_USER, server_default="")
    title: Mapped[str] = mapped_column(String(255), default="", server_default="")
    title_by_user: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    pinned: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The newest turn's time, and the count of turns: what a conversation list sorts and shows.
    last_active_at: Mapped[datetime | None] = mapped_column(TIMESTAMP)
    message_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # A fingerprint of the completed turns, oldest first (domain.conversations.chat_completions): how /v1 finds the
    # conversation whose history a client resent. Kept by the store as turns complete.
    history_fingerprint: Mapped[str] = mapped_column(String(64), default="", server_default="")
    history_prefix: Mapped[str] = mapped_column(String(64), default="", server_default="")

    __table_args__ = (
        # The conversation list: an account's (or one end user's) conversations, newest activity first.
        Index("ix_conversations_owner_active", "owner", "last_active_at", "id"),
        Index("ix_conversations_owner_end_user_active", "owner", "end_user", "last_active_at", "id"),
        Index("ix_conversations_history", "owner", "end_user", "app_id", "history_fingerprint"),
        # Retention: deleted conversations, the oldest delete first (only those are in it).
        Index("ix_conversations_deleted", "deleted_at", postgresql_where=DELETED, sqlite_where=DELETED),
    )


class MessageRow(Base):
    __tablename__ = "messages"
    __table_args__ = (
        # list_messages: a conversation's messages oldest first.
        Index("ix_messages_conversation_created", "conversation_id", "created_at", "seq"),
        # recent_messages: a conversation's completed turns newest first, read backwards with LIMIT.
        Index("ix_messages_conversation_status_created", "conversation_id", "status", "created_at", "seq"),
        # running_messages: the sweep looks for turns still running, oldest first.
        Index("ix_messages_status_created", "status", "created_at"),
        # An agent's usage stats: its messages of a time range.
        Index("ix_messages_app_created", "app_id", "created_at"),
        # Retention: the messages that still hold a prompt snapshot, oldest first.
        Index("ix_messages_prompt_created", "created_at", postgresql_where=HOLDS_PROMPT, sqlite_where=HOLDS_PROMPT),
    )

    # Insertion order: breaks ties between equal created_at, so history order is stable.
    seq: Mapped[int] = mapped_column(SEQUENCE, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(ID, unique=True)
    conversation_id: Mapped[str] = mapped_column(ID, ForeignKey("conversations.id", ondelete="CASCADE"))
    owner: Mapped[str] = mapped_column(OWNER)
    task_id: Mapped[str] = mapped_column(ID, unique=True)
    query: Mapped[str] = mapped_column(Text)
    image_urls: Mapped[list[str]] = mapped_column(JSON_DOC)
    answer: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    error: Mapped[str] = mapped_column(Text)
    prompt: Mapped[str] = mapped_column(Text)
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)
    total_price: Mapped[float] = mapped_column(Double)
    latency: Mapped[float] = mapped_column(Double)
    created_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    updated_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    # What the turn ran: the agent's published version, or (debugger) its draft revision; where it came in.
    agent_version: Mapped[int | None] = mapped_column(Integer)
    draft_revision: Mapped[int | None] = mapped_column(Integer)
    entry_point: Mapped[str] = mapped_column(String(16), default="api", server_default="api")
    end_user: Mapped[str] = mapped_column(END_USER, server_default="")
    app_id: Mapped[str] = mapped_column(String(255), server_default="")
    parent_message_id: Mapped[str | None] = mapped_column(ID)
    superseded: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    rating: Mapped[str | None] = mapped_column(String(16))
    rating_note: Mapped[str] = mapped_column(Text, default="", server_default="")
    follow_ups: Mapped[list[str] | None] = mapped_column(OPTIONAL_JSON_DOC)
    first_token_latency: Mapped[float | None] = mapped_column(Double)
    blocked_by: Mapped[str | None] = mapped_column(String(16))  # domain.conversations.conversation.ReviewStage


class MessageAgentThoughtRow(Base):
    __tablename__ = "message_agent_thoughts"
    __table_args__ = (
        # Also the index that list_steps reads: (message_id, position).
        UniqueConstraint("message_id", "position"),
        # Retention: steps oldest first, and those that still hold a prompt snapshot.
        Index("ix_message_agent_thoughts_created", "created_at"),
        Index("ix_message_agent_thoughts_prompt_created", "created_at",
              postgresql_where=HOLDS_PROMPT, sqlite_where=HOLDS_PROMPT),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    message_id: Mapped[str] = mapped_column(ID, ForeignKey("messages.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    event: Mapped[str] = mapped_column(String(32))
    thought: Mapped[str] = mapped_column(Text)
    tool: Mapped[str] = mapped_column(String(255))
    tool_input: Mapped[dict[str, Any]] = mapped_column(JSON_DOC)
    observation: Mapped[str] = mapped_column(Text)
    prompt: Mapped[str] = mapped_column(Text)
    answer: Mapped[str] = mapped_column(Text)
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)
    price: Mapped[float] = mapped_column(Double)
    latency: Mapped[float] = mapped_column(Double)
    created_at: Mapped[datetime] = mapped_column(TIMESTAMP)


def utc(value: datetime) -> datetime:
    """UTC-aware. Everything is stored as UTC; SQLite hands it back naive."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _utc_or_none(value: datetime | None) -> datetime | None:
    return utc(value) if value is not None else None


def conversation_to_domain(row: ConversationRow | Row[Any]) -> Conversation:
    """From the mapped row, or a Core row of the table's columns (a RETURNING clause's)."""
    return Conversation(
        id=ConversationId(row.id), app_id=AppId(row.app_id), owner=OwnerId(row.owner),
        created_at=utc(row.created_at), updated_at=utc(row.updated_at),
        summary=row.summary, deleted_at=_utc_or_none(row.deleted_at), is_debug=bool(row.is_debug),
        end_user=EndUserId(row.end_user), title=row.title, title_by_user=bool(row.title_by_user),
        pinned=bool(row.pinned), last_active_at=_utc_or_none(row.last_active_at), message_count=row.message_count,
        history_prefix=row.history_prefix,
    )


def conversation_values(conversation: Conversation) -> dict[str, Any]:
    # SQLite stores the wall-clock digits and drops the offset, so everything is stored as UTC.
    return {
        "id": conversation.id, "app_id": conversation.app_id, "owner": conversation.owner,
        "summary": conversation.summary, "created_at": utc(conversation.created_at),
        "updated_at": utc(conversation.updated_at), "deleted_at": _utc_or_none(conversation.deleted_at),
        "is_debug": conversation.is_debug, "end_user": conversation.end_user, "title": conversation.title,
        "title_by_user": conversation.title_by_user, "pinned": conversation.pinned,
        "last_active_at": _utc_or_none(conversation.last_active_at), "message_count": conversation.message_count,
        # A new conversation's fingerprint starts from the history its client brought.
        "history_prefix": conversation.history_prefix, "history_fingerprint": conversation.history_prefix,
    }


def conversation_from_domain(conversation: Conversation) -> ConversationRow:
    return ConversationRow(**conversation_values(conversation))


def message_to_domain(row: MessageRow | Row[Any]) -> Message:
    """From the mapped row, or a Core row of the table's columns."""
    return Message(
        id=MessageId(row.id), conversation_id=ConversationId(row.conversation_id),
        owner=OwnerId(row.owner), task_id=TaskId(row.task_id), query=row.query,
        created_at=utc(row.created_at), updated_at=utc(row.updated_at),
        image_urls=tuple(row.image_urls or ()), answer=row.answer, status=MessageStatus(row.status),
        error=row.error, prompt=row.prompt,
        usage=Usage(row.prompt_tokens, row.completion_tokens, row.total_price), latency=row.latency,
        agent_version=row.agent_version, draft_revision=row.draft_revision, entry_point=row.entry_point,
        end_user=EndUserId(row.end_user), agent_id=AppId(row.app_id),
        parent_message_id=_id_or_none(row.parent_message_id),
        superseded=bool(row.superseded), rating=Rating(row.rating) if row.rating else None, rating_note=row.rating_note,
        follow_ups=tuple(row.follow_ups) if row.follow_ups is not None else None,
        first_token_latency=row.first_token_latency,
        blocked_by=ReviewStage(row.blocked_by) if row.blocked_by else None,
    )


def _id_or_none(value: str | None) -> MessageId | None:
    return MessageId(value) if value else None


def message_outcome_values(message: Message) -> dict[str, Any]:
    """The columns a finished turn changes; the query side of the row never changes."""
    return {
        "answer": message.answer, "status": message.status.value, "error": message.error,
        "prompt": message.prompt, "prompt_tokens": message.usage.prompt_tokens,
        "completion_tokens": message.usage.completion_tokens, "total_price": message.usage.price,
        "latency": message.latency, "first_token_latency": message.first_token_latency,
        "blocked_by": message.blocked_by.value if message.blocked_by else None, "updated_at": utc(message.updated_at),
    }


OUTCOME_COLUMNS = (
    "answer", "status", "error", "prompt", "prompt_tokens", "completion_tokens", "total_price", "latency",
    "first_token_latency", "blocked_by", "updated_at",
)


def message_values(message: Message) -> dict[str, Any]:
    return {
        "id": message.id, "conversation_id": message.conversation_id, "owner": message.owner,
        "task_id": message.task_id, "query": message.query, "image_urls": list(message.image_urls),
        "created_at": utc(message.created_at), "agent_version": message.agent_version,
        "draft_revision": message.draft_revision, "entry_point": str(message.entry_point),
        "end_user": message.end_user, "app_id": message.agent_id, "parent_message_id": message.parent_message_id,
        "superseded": message.superseded, "rating": message.rating.value if message.rating else None,
        "rating_note": message.rating_note,
        "follow_ups": list(message.follow_ups) if message.follow_ups is not None else None,
        **message_outcome_values(message),
    }


def message_from_domain(message: Message) -> MessageRow:
    return MessageRow(**message_values(message))


def step_to_domain(row: MessageAgentThoughtRow) -> MessageAgentThought:
    return MessageAgentThought(
        id=ThoughtId(row.id), message_id=MessageId(row.message_id), position=row.position,
        event=row.event, created_at=utc(row.created_at), thought=row.thought, tool=row.tool,
        tool_input=dict(row.tool_input or {}), observation=row.observation, prompt=row.prompt,
        answer=row.answer, usage=Usage(row.prompt_tokens, row.completion_tokens, row.price),
        latency=row.latency,
    )


def step_values(step: MessageAgentThought) -> dict[str, Any]:
    return {
        "id": step.id, "message_id": step.message_id, "position": step.position, "event": str(step.event),
        "thought": step.thought, "tool": step.tool, "tool_input": dict(step.tool_input),
        "observation": step.observation, "prompt": step.prompt, "answer": step.answer,
        "prompt_tokens": step.usage.prompt_tokens, "completion_tokens": step.usage.completion_tokens,
        "price": step.usage.price, "latency": step.latency, "created_at": utc(step.created_at),
    }


class ApiKeyRow(Base):
    """An account's API key: only its SHA-256 is stored, looked up through a unique index."""

    __tablename__ = "api_keys"
    __table_args__ = (
        Index("ix_api_keys_key_hash", "key_hash", unique=True),
        Index("ix_api_keys_owner", "owner"),
        Index("ix_api_keys_agent_id", "agent_id"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    owner: Mapped[str] = mapped_column(OWNER)
    name: Mapped[str] = mapped_column(String(255))
    key_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    revoked_at: Mapped[datetime | None] = mapped_column(TIMESTAMP)
    agent_id: Mapped[str | None] = mapped_column(String(255))  # a key bound to one agent (for its end users)


def api_key_to_domain(row: ApiKeyRow) -> ApiKey:
    return ApiKey(
        id=ApiKeyId(row.id), owner=OwnerId(row.owner), name=row.name, key_hash=row.key_hash,
        created_at=utc(row.created_at), revoked_at=_utc_or_none(row.revoked_at),
        agent_id=AppId(row.agent_id) if row.agent_id else None,
    )


def api_key_from_domain(key: ApiKey) -> ApiKeyRow:
    return ApiKeyRow(
        id=key.id, owner=key.owner, name=key.name, key_hash=key.key_hash,
        created_at=utc(key.created_at), revoked_at=_utc_or_none(key.revoked_at), agent_id=key.agent_id,
    )
