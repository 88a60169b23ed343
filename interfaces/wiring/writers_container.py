"""What follows a turn besides its answer, as a container of its own inside the main one
(`Container.writers`): the conversation's title, the follow-up questions, and `AfterTurn`, which
starts them with the memory upkeep."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dependency_injector import containers, providers

from application.agents.config_ran import ConfigRan
from application.chat_turn.after_turn import AfterTurn
from application.chat_turn.queued_after_turn import QueuedAfterTurn
from application.conversations.name_conversation import NameConversation
from application.conversations.suggest_follow_ups import SuggestFollowUps
from application.ports.model_metrics import ModelPurpose
from infrastructure.conversations.llm_writers import LLMFollowUpWriter, LLMTitler
from infrastructure.conversations.offline_writers import FirstWordsTitler, TemplateFollowUpWriter
from infrastructure.models.profile_work import OnProfiles

if TYPE_CHECKING:
    from application.memory.schedule_upkeep import TurnUpkeep
    from application.ports.agent_store import AgentStore
    from application.ports.chat_models import ChatModels
    from application.ports.jobs import JobQueue
    from application.ports.message_store import MessageStore
    from application.ports.runtime import Clock, TaskSpawner
    from application.ports.tracing import Tracer
    from infrastructure.models.observed_models import ModelObserver


class WritersContainer(containers.DeclarativeContainer):
    models: providers.Dependency[ChatModels] = providers.Dependency()  # the model profiles' own
    store: providers.Dependency[MessageStore] = providers.Dependency()
    agents: providers.Dependency[AgentStore] = providers.Dependency()
    clock: providers.Dependency[Clock] = providers.Dependency()
    spawner: providers.Dependency[TaskSpawner] = providers.Dependency()
    jobs_backend: providers.Dependency[str] = providers.Dependency()  # MEMAGENT_JOBS__BACKEND
    jobs: providers.Dependency[JobQueue] = providers.Dependency()
    upkeep: providers.Dependency[TurnUpkeep] = providers.Dependency()
    title_wait: providers.Dependency[float] = providers.Dependency()
    tracer: providers.Dependency[Tracer] = providers.Dependency()
    observer: providers.Dependency[ModelObserver] = providers.Dependency()  # counts, bills, traces model calls

    # Like the memory tiers' model work, on each agent's own profile (AgentConfig.model): offline on a
    # scripted profile, else that profile's LLM, whose calls count by purpose and profile.
    titler = providers.Singleton(
        OnProfiles, models=models, purpose=ModelPurpose.TITLE, offline=providers.Singleton(FirstWordsTitler),
        llm=providers.Object(LLMTitler), observer=observer,
    )
    follow_up_writer = providers.Singleton(
        OnProfiles, models=models, purpose=ModelPurpose.FOLLOW_UPS,
        offline=providers.Singleton(TemplateFollowUpWriter), llm=providers.Object(LLMFollowUpWriter),
        observer=observer,
    )
    name_conversation = providers.Singleton(NameConversation, titler=titler, store=store, clock=clock)
    configs = providers.Singleton(ConfigRan, agents=agents)
    suggest_follow_ups = providers.Singleton(SuggestFollowUps, writer=follow_up_writer, store=store, configs=configs)
    # Titles and follow-up questions made in this process, or (MEMAGENT_JOBS__BACKEND=redis) by job workers.
    after_turn = providers.Selector(
        jobs_backend,
        inprocess=providers.Singleton(
            AfterTurn, upkeep=upkeep, name=name_conversation, suggest=suggest_follow_ups, spawner=spawner,
            title_wait=title_wait, tracer=tracer,
        ),
        redis=providers.Singleton(QueuedAfterTurn, upkeep=upkeep, jobs=jobs, store=store, title_wait=title_wait),
    )
