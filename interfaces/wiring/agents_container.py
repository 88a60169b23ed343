"""The agents' use cases, as a container of their own inside the main one (`Container.agents`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dependency_injector import containers, providers

from application.agents.change_agent import ChangeAgent
from application.agents.check_config import ConfigCheck
from application.agents.create_agent import CreateAgent
from application.agents.ensure_default_agent import EnsureDefaultAgent
from application.agents.list_models import ListModels
from application.agents.list_tools import ListTools
from application.agents.manage_versions import ActivateVersion, RestoreVersion
from application.agents.publish_agent import PublishAgent
from application.agents.read_agents import DiffVersions, GetAgent, GetVersion, ListAgents, ListVersions
from application.agents.read_parameters import ReadParameters
from application.agents.resolve_config import ResolveConfig
from application.agents.save_draft import SaveDraft
from application.agents.usage_stats import ReadUsageStats
from infrastructure.persistence.sqlalchemy_recall_index import SqlAlchemyRecallIndex
from infrastructure.persistence.sqlalchemy_usage_stats import SqlAlchemyUsageStats

if TYPE_CHECKING:
    from application.agents.cached_agent_store import CachedAgentStore
    from application.ports.chat_models import ChatModels
    from application.ports.knowledge_base import KnowledgeBase
    from application.ports.runtime import Clock, IdGenerator
    from application.ports.tools import ToolBox, ToolCatalog
    from application.ports.workflow_store import WorkflowStore
    from infrastructure.persistence.database import Database


class AgentsContainer(containers.DeclarativeContainer):
    store: providers.Dependency[CachedAgentStore] = providers.Dependency()
    models: providers.Dependency[ChatModels] = providers.Dependency()
    toolbox: providers.Dependency[ToolBox] = providers.Dependency()
    tool_catalog: providers.Dependency[ToolCatalog] = providers.Dependency()
    knowledge: providers.Dependency[KnowledgeBase] = providers.Dependency()
    clock: providers.Dependency[Clock] = providers.Dependency()
    ids: providers.Dependency[IdGenerator] = providers.Dependency()
    database: providers.Dependency[Database] = providers.Dependency()
    workflow_store: providers.Dependency[WorkflowStore] = providers.Dependency()

    # Changes start from the agent as the database has it; turns and reads may take the cached one.
    fresh = providers.Callable(lambda store: store.fresh(), store)
    check = providers.Singleton(
        ConfigCheck, toolbox=toolbox, knowledge=knowledge, models=models, workflows=workflow_store
    )
    resolve_config = providers.Singleton(ResolveConfig, store=store, models=models)
    ensure_default = providers.Singleton(EnsureDefaultAgent, store=fresh, clock=clock)

    create_agent = providers.Singleton(CreateAgent, store=fresh, clock=clock, ids=ids)
    list_agents = providers.Singleton(ListAgents, store=store)
    list_models = providers.Singleton(ListModels, store=store)
    list_tools = providers.Singleton(ListTools, catalog=tool_catalog)
    get_agent = providers.Singleton(GetAgent, store=store)
    change_agent = providers.Singleton(ChangeAgent, store=fresh, clock=clock)
    save_draft = providers.Singleton(SaveDraft, store=fresh, clock=clock)
    # Recall's shares follow the active config (application/agents/share_memory.py).
    sharing = providers.Singleton(SqlAlchemyRecallIndex, database=database)
    publish_agent = providers.Singleton(PublishAgent, store=fresh, check=check, clock=clock, sharing=sharing)
    list_versions = providers.Singleton(ListVersions, store=store)
    get_version = providers.Singleton(GetVersion, store=store)
    restore_version = providers.Singleton(RestoreVersion, store=fresh, clock=clock)
    activate_version = providers.Singleton(ActivateVersion, store=fresh, clock=clock, sharing=sharing)
    diff_versions = providers.Singleton(DiffVersions, store=store)
    # Counted by the database over the messages table, not from the agent store.
    usage_stats = providers.Singleton(SqlAlchemyUsageStats, database=database)
    read_usage_stats = providers.Singleton(ReadUsageStats, agents=store, stats=usage_stats, clock=clock)
    read_parameters = providers.Singleton(ReadParameters, store=store, resolve=resolve_config, models=models)
