"""Agents as data: an agent, its draft, and its immutable published versions.

An agent belongs to an owner (an account). Its draft is one config plus a `revision` that grows
with every save, so two editors never overwrite each other silently. Publishing snapshots the
draft as version 1, 2, 3…; a version never changes. The agent runs its *active* version: the
latest published, unless one was pinned as active (a rollback without a new version).
An archived agent can be read and unarchived, nothing else.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from domain.errors import DomainError
from domain.ids import AppId, OwnerId

if TYPE_CHECKING:
    from datetime import datetime

    from domain.agents.config import AgentConfig

MAX_NAME = 100
MAX_DESCRIPTION = 2000
MAX_NOTE = 2000
# The highest version or draft revision: both are stored as a 32-bit integer (PostgreSQL's `integer`).
MAX_VERSION = 2**31 - 1
# The agent built from MEMAGENT_AGENT__* settings: owned by the platform, runnable by every account.
PLATFORM_OWNER = OwnerId("platform")


class AgentStatus(enum.StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"


class AgentConflict(DomainError):
    """A change that the agent's state forbids: a stale draft revision, nothing new to publish,
    an archived agent."""


@dataclass(frozen=True, slots=True)
class AgentDraft:
    revision: int
    config: AgentConfig
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class AgentVersion:
    agent_id: AppId
    version: int
    note: str
    config: AgentConfig
    created_at: datetime

    def __post_init__(self) -> None:
        if self.version < 1:
            raise DomainError("a version number starts at 1")
        if len(self.note) > MAX_NOTE:
            raise DomainError(f"a note has at most {MAX_NOTE} characters")


@dataclass(frozen=True, slots=True)
class Agent:
    id: AppId
    owner: OwnerId
    name: str
    description: str
    status: AgentStatus
    draft: AgentDraft
    latest_version: int  # 0 until the first publish
    pinned_version: int | None
    created_at: datetime
    updated_at: datetime

    def __post_init__(self) -> None:
        if not self.name.strip() or len(self.name) > MAX_NAME:
            raise DomainError(f"an agent's name has 1 to {MAX_NAME} characters")
        if len(self.description) > MAX_DESCRIPTION:
            raise DomainError(f"an agent's description has at most {MAX_DESCRIPTION} characters")
        if self.pinned_version is not None and not 1 <= self.pinned_version <= self.latest_version:
            raise DomainError("the pinned version must be a published one")

    @property
    def active_version(self) -> int | None:
        """The version that runs for everyone but the debugger; None before the first publish."""
        return self.pinned_version or self.latest_version or None

    @property
    def archived(self) -> bool:
        return self.status is AgentStatus.ARCHIVED

    def _must_be_active(self) -> None:
        if self.archived:
            raise AgentConflict(f"Agent {self.id!r} is archived: unarchive it first.")

    def with_draft(self, config: AgentConfig, revision: int, at: datetime) -> Agent:
        """The draft saved over `revision`, the one the editor read; a newer one is a conflict."""
        self._must_be_active()
        if revision != self.draft.revision:
            raise AgentConflict(
                f"The draft is at revision {self.draft.revision}, not {revision}: someone saved it meanwhile."
            )
        return replace(self, draft=AgentDraft(revision + 1, config, at), updated_at=at)

    def published(self, note: str, last: AgentVersion | None, at: datetime) -> tuple[Agent, AgentVersion]:
        """The draft as the next version, which becomes the active one (a pin is released)."""
        self._must_be_active()
        if last is not None and last.config == self.draft.config:
            raise AgentConflict(f"Nothing changed since version {last.version}: there is nothing to publish.")
        version = AgentVersion(self.id, self.latest_version + 1, note.strip(), self.draft.config, at)
        return replace(self, latest_version=version.version, pinned_version=None, updated_at=at), version

    def restored(self, version: AgentVersion, at: datetime) -> Agent:
        """A version loaded into the draft (a new revision)."""
        return self.with_draft(version.config, self.draft.revision, at)

    def activated(self, version: int, at: datetime) -> Agent:
        self._must_be_active()
        if not 1 <= version <= self.latest_version:
            raise DomainError(f"version {version} was never published")
        pinned = None if version == self.latest_version else version
        return replace(self, pinned_version=pinned, updated_at=at)

    def described(self, name: str | None, description: str | None, at: datetime) -> Agent:
        self._must_be_active()
        return replace(
            self, name=self.name if name is None else name.strip(),
            description=self.description if description is None else description.strip(), updated_at=at,
        )

    def with_status(self, status: AgentStatus, at: datetime) -> Agent:
        return replace(self, status=status, updated_at=at)
