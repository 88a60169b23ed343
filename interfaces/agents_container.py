"""The agents' use cases, as a container of their own inside the main one (`Container.agents`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dependency_injector import containers, providers

from application.agents.change_agent import ChangeAgent
from application.agents.check_config import ConfigCheck
from application.agents.create_agent import CreateAgent
from application.agents.ensure_default_agent import EnsureDefaultAgent
from application.agents.manage_versions import ActivateVersion, RestoreVersion
from application.agents.publish_agent import PublishAgent
from application.agents.read_agents import DiffVersions, GetAgent, GetVersion, ListAgents, ListVersions
from application.agents.resolve_config import ResolveConfig
from application.agents.save_draft import SaveDraft

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from application.ports.chat_models import ChatModels
    from application.ports.knowledge_base import KnowledgeBase
    from application.ports.runtime import Clock, IdGenerator
    from application.ports.tools import ToolBox


class AgentsContainer(containers.DeclarativeContainer):
    store: providers.Dependency[AgentStore] = providers.Dependency()
    models: providers.Dependency[ChatModels] = providers.Dependency()
    toolbox: providers.Dependency[ToolBox] = providers.Dependency()
    knowledge: providers.Dependency[KnowledgeBase] = providers.Dependency()
    clock: providers.Dependency[Clock] = providers.Dependency()
    ids: providers.Dependency[IdGenerator] = providers.Dependency()

    check = providers.Singleton(ConfigCheck, toolbox=toolbox, knowledge=knowledge, models=models)
    resolve_config = providers.Singleton(ResolveConfig, store=store, models=models)
    ensure_default = providers.Singleton(EnsureDefaultAgent, store=store, clock=clock)

    create_agent = providers.Singleton(CreateAgent, store=store, clock=clock, ids=ids)
    list_agents = providers.Singleton(ListAgents, store=store)
    get_agent = providers.Singleton(GetAgent, store=store)
    change_agent = providers.Singleton(ChangeAgent, store=store, clock=clock)
    save_draft = providers.Singleton(SaveDraft, store=store, clock=clock)
    publish_agent = providers.Singleton(PublishAgent, store=store, check=check, clock=clock)
    list_versions = providers.Singleton(ListVersions, store=store)
    get_version = providers.Singleton(GetVersion, store=store)
    restore_version = providers.Singleton(RestoreVersion, store=store, clock=clock)
    activate_version = providers.Singleton(ActivateVersion, store=store, clock=clock)
    diff_versions = providers.Singleton(DiffVersions, store=store)
