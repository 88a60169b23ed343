"""The rows of the model-call ledger: one row per call to a model, with what it cost.

A chat call is tied to its message; upkeep, titles, follow-ups and embeddings to the conversation
alone (`message_id` NULL). No foreign key on either: the ledger is the account's bill and outlives
the conversation it was spent on, until its own retention removes it (by `created_at`).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Boolean, Double, Index, Integer, String
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Mapped, mapped_column

from infrastructure.persistence.rows import ID, OWNER, TIMESTAMP, Base, utc

if TYPE_CHECKING:
    from domain.billing.model_calls import ModelCall


class ModelCallRow(Base):
    __tablename__ = "model_calls"
    __table_args__ = (
        # Budgets and the account's spend: an owner's calls of a time range.
        Index("ix_model_calls_owner_created", "owner", "created_at"),
        # Agent budgets and agent stats: an agent's calls of a time range.
        Index("ix_model_calls_agent_created", "agent_id", "created_at"),
        # GET /api/conversations/{id}/usage.
        Index("ix_model_calls_conversation", "conversation_id"),
        # Retention: the oldest calls first.
        Index("ix_model_calls_created", "created_at"),
    )

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    owner: Mapped[str] = mapped_column(OWNER)
    agent_id: Mapped[str] = mapped_column(String(255))
    conversation_id: Mapped[str | None] = mapped_column(ID)
    message_id: Mapped[str | None] = mapped_column(ID)
    # The agent's published version the turn ran (None: a draft, or no turn); a debugger conversation's
    # calls are the builder's own, left out of the agent's stats like its turns.
    agent_version: Mapped[int | None] = mapped_column(Integer)
    debug: Mapped[bool] = mapped_column(Boolean)
    purpose: Mapped[str] = mapped_column(String(32))
    profile: Mapped[str] = mapped_column(String(255))
    model: Mapped[str] = mapped_column(String(255))
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)
    cost_usd: Mapped[float] = mapped_column(Double)
    latency: Mapped[float] = mapped_column(Double)
    # True when the server gave no usage and the tokens were counted locally.
    estimated: Mapped[bool] = mapped_column(Boolean)
    status: Mapped[str] = mapped_column(String(16))


# Built once: the ledger's writer and a turn's save (its own calls) insert rows this way, by the
# database's dialect (True: SQLite). A call already there is left as it is: a save whose commit was
# lost with its connection hands its calls to the writer, which must not fail the batch on them.
INSERT_MODEL_CALLS = {
    True: sqlite_insert(ModelCallRow).on_conflict_do_nothing(index_elements=["id"]),
    False: pg_insert(ModelCallRow).on_conflict_do_nothing(index_elements=["id"]),
}


def model_call_values(call: ModelCall) -> dict[str, Any]:
    usage = call.usage
    return {
        "id": call.id, "created_at": utc(call.created_at), "owner": call.owner, "agent_id": call.agent_id,
        "conversation_id": call.conversation_id, "message_id": call.message_id,
        "agent_version": call.agent_version, "debug": call.debug, "purpose": call.purpose,
        "profile": call.profile[:255], "model": call.model[:255], "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens, "cost_usd": usage.price, "latency": call.latency,
        "estimated": usage.estimated, "status": call.status,
    }
