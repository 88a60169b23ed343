"""Rows of agents as data: an agent with its draft, and its immutable published versions.

A config is stored as JSON text in the plain form of `domain.agents.config_codec` (the same form
the API speaks), so that a config field added later reads back from an old row with its default.
`agents.draft_revision` and `agents.latest_version` are the compare-and-set guards of a draft save
and of a publish; `agent_versions` is keyed by (agent_id, version), which also serves its reads.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from application.errors import MalformedRecord
from domain.agents.agent import Agent, AgentDraft, AgentStatus, AgentVersion
from domain.agents.config_codec import InvalidConfig, config_from_dict, config_to_dict
from domain.ids import AppId, OwnerId
from infrastructure.persistence.rows import ID, OWNER, TIMESTAMP, Base, utc

if TYPE_CHECKING:
    from domain.agents.config import AgentConfig


class AgentRow(Base):
    __tablename__ = "agents"
    # list_agents: an owner's agents, newest first.
    __table_args__ = (Index("ix_agents_owner_created", "owner", "created_at"),)

    id: Mapped[str] = mapped_column(ID, primary_key=True)
    owner: Mapped[str] = mapped_column(OWNER)
    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    draft_config: Mapped[str] = mapped_column(Text)  # JSON text
    draft_revision: Mapped[int] = mapped_column(Integer)
    draft_updated_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    latest_version: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    pinned_version: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    updated_at: Mapped[datetime] = mapped_column(TIMESTAMP)


class AgentVersionRow(Base):
    __tablename__ = "agent_versions"

    agent_id: Mapped[str] = mapped_column(ID, ForeignKey("agents.id", ondelete="CASCADE"), primary_key=True)
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    note: Mapped[str] = mapped_column(Text)
    config: Mapped[str] = mapped_column(Text)  # JSON text
    created_at: Mapped[datetime] = mapped_column(TIMESTAMP)


def config_text(config: AgentConfig) -> str:
    return json.dumps(config_to_dict(config), ensure_ascii=False, sort_keys=True)


def config_of(agent_id: str, text: str) -> AgentConfig:
    """A stored config; one this release cannot read is broken data (`MalformedRecord`), not bad input."""
    try:
        return config_from_dict(AppId(agent_id), json.loads(text))
    except (InvalidConfig, ValueError) as broken:
        raise MalformedRecord(f"The stored config of agent {agent_id!r} cannot be read.") from broken


def agent_to_domain(row: AgentRow) -> Agent:
    return Agent(
        id=AppId(row.id), owner=OwnerId(row.owner), name=row.name, description=row.description,
        status=AgentStatus(row.status),
        draft=AgentDraft(row.draft_revision, config_of(row.id, row.draft_config), utc(row.draft_updated_at)),
        latest_version=row.latest_version, pinned_version=row.pinned_version,
        created_at=utc(row.created_at), updated_at=utc(row.updated_at),
    )


def agent_header_values(agent: Agent) -> dict[str, Any]:
    """What `update_agent` writes: never the draft nor the latest version, which have their guards."""
    return {
        "name": agent.name, "description": agent.description, "status": agent.status.value,
        "pinned_version": agent.pinned_version, "updated_at": utc(agent.updated_at),
    }


def agent_draft_values(agent: Agent) -> dict[str, Any]:
    """What a draft save writes."""
    return {
        "draft_config": config_text(agent.draft.config), "draft_revision": agent.draft.revision,
        "draft_updated_at": utc(agent.draft.updated_at), "updated_at": utc(agent.updated_at),
    }


def agent_values(agent: Agent) -> dict[str, Any]:
    return {
        "id": agent.id, "owner": agent.owner, "created_at": utc(agent.created_at),
        "latest_version": agent.latest_version, **agent_header_values(agent), **agent_draft_values(agent),
    }


def version_to_domain(row: AgentVersionRow) -> AgentVersion:
    return AgentVersion(
        agent_id=AppId(row.agent_id), version=row.version, note=row.note,
        config=config_of(row.agent_id, row.config), created_at=utc(row.created_at),
    )


def version_values(version: AgentVersion) -> dict[str, Any]:
    return {
        "agent_id": version.agent_id, "version": version.version, "note": version.note,
        "config": config_text(version.config), "created_at": utc(version.created_at),
    }
