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
from application.ports.metrics import ModelPurpose
from infrastructure.conversations.llm_writers import LLMFollowUpWriter, LLMTitler
from infrastructure.conversations.offline_writers import FirstWordsTitler, TemplateFollowUpWriter
from infrastructure.metrics.metered_chat_model import MeteredChatModel
from infrastructure.models.model_profiles import DEFAULT
from infrastructure.tracing.traced_chat_model import TracedChatModel

if TYPE_CHECKING:
    from application.memory.schedule_upkeep import TurnUpkeep
    from application.model_calls.record_model_calls import RecordModelCalls
    from application.ports.agent_store import AgentStore
    from application.ports.chat_model import ChatModel
    from application.ports.jobs import JobQueue
    from application.ports.message_store import MessageStore
    from application.ports.metrics import Metrics
    from application.ports.runtime import Clock, TaskSpawner, Tokenizer
    from application.ports.tracing import Tracer
    from infrastructure.models.provider_config import TokenPrice


class WritersContainer(containers.DeclarativeContainer):
    provider: providers.Dependency[str] = providers.Dependency()  # MEMAGENT_LLM__PROVIDER
    model: providers.Dependency[ChatModel] = providers.Dependency()
    store: providers.Dependency[MessageStore] = providers.Dependency()
    agents: providers.Dependency[AgentStore] = providers.Dependency()
    clock: providers.Dependency[Clock] = providers.Dependency()
    spawner: providers.Dependency[TaskSpawner] = providers.Dependency()
    jobs_backend: providers.Dependency[str] = providers.Dependency()  # MEMAGENT_JOBS__BACKEND
    jobs: providers.Dependency[JobQueue] = providers.Dependency()
    upkeep: providers.Dependency[TurnUpkeep] = providers.Dependency()
    title_wait: providers.Dependency[float] = providers.Dependency()
    metrics: providers.Dependency[Metrics] = providers.Dependency()
    tokenizer: providers.Dependency[Tokenizer] = providers.Dependency()
    tracer: providers.Dependency[Tracer] = providers.Dependency()
    recorder: providers.Dependency[RecordModelCalls] = providers.Dependency()  # the model-call ledger's
    price: providers.Dependency[TokenPrice] = providers.Dependency()  # the `default` profile's

    # Like the memory tiers' model work: offline with the offline scripted model, else the LLM, whose
    # calls count in the metrics by purpose (on the `default` profile).
    title_model = providers.Singleton(TracedChatModel, tracer=tracer, purpose=ModelPurpose.TITLE, profile=DEFAULT,
                                      tokenizer=tokenizer, model=providers.Singleton(
        MeteredChatModel, model=model, metrics=metrics, purpose=ModelPurpose.TITLE, profile=DEFAULT,
        tokenizer=tokenizer, recorder=recorder, price=price,
    ))
    follow_ups_model = providers.Singleton(TracedChatModel, tracer=tracer, purpose=ModelPurpose.FOLLOW_UPS,
                                           profile=DEFAULT, tokenizer=tokenizer, model=providers.Singleton(
        MeteredChatModel, model=model, metrics=metrics, purpose=ModelPurpose.FOLLOW_UPS, profile=DEFAULT,
        tokenizer=tokenizer, recorder=recorder, price=price,
    ))
    titler = providers.Selector(
        provider,
        scripted=providers.Singleton(FirstWordsTitler),
        openai=providers.Singleton(LLMTitler, model=title_model),
        agentscope=providers.Singleton(LLMTitler, model=title_model),
    )
    follow_up_writer = providers.Selector(
        provider,
        scripted=providers.Singleton(TemplateFollowUpWriter),
        openai=providers.Singleton(LLMFollowUpWriter, model=follow_ups_model),
        agentscope=providers.Singleton(LLMFollowUpWriter, model=follow_ups_model),
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
