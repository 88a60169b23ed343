"""Agents as data: create and change agents, their drafts and published versions, and resolve the
config a turn runs."""

from application.agents.change_agent import ChangeAgent
from application.agents.create_agent import CreateAgent
from application.agents.ensure_default_agent import EnsureDefaultAgent
from application.agents.manage_versions import ActivateVersion, RestoreVersion
from application.agents.publish_agent import PublishAgent
from application.agents.read_agents import DiffVersions, GetAgent, GetVersion, ListAgents, ListVersions
from application.agents.resolve_config import ResolveConfig
from application.agents.save_draft import SaveDraft

__all__ = [
    "ActivateVersion", "ChangeAgent", "CreateAgent", "DiffVersions", "EnsureDefaultAgent", "GetAgent", "GetVersion",
    "ListAgents", "ListVersions", "PublishAgent", "ResolveConfig", "RestoreVersion", "SaveDraft",
]
