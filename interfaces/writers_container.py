"""What follows a turn besides its answer, as a container of its own inside the main one
(`Container.writers`): the conversation's title, the follow-up questions, and `AfterTurn`, which
starts them with the memory upkeep."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dependency_injector import containers, providers

from application.chat_turn.after_turn import AfterTurn
from application.conversations.name_conversation import NameConversation
from application.conversations.suggest_follow_ups import SuggestFollowUps
from infrastructure.conversations.llm_writers import LLMFollowUpWriter, LLMTitler
from infrastructure.conversations.offline_writers import FirstWordsTitler, TemplateFollowUpWriter

if TYPE_CHECKING:
    from application.memory.schedule_upkeep import TurnUpkeep
    from application.ports.agent_store import AgentStore
    from application.ports.chat_model import ChatModel
    from application.ports.message_store import MessageStore
    from application.ports.runtime import Clock, TaskSpawner


class WritersContainer(containers.DeclarativeContainer):
    provider: providers.Dependency[str] = providers.Dependency()  # MEMAGENT_LLM__PROVIDER
    model: providers.Dependency[ChatModel] = providers.Dependency()
    store: providers.Dependency[MessageStore] = providers.Dependency()
    agents: providers.Dependency[AgentStore] = providers.Dependency()
    clock: providers.Dependency[Clock] = providers.Dependency()
    spawner: providers.Dependency[TaskSpawner] = providers.Dependency()
    upkeep: providers.Dependency[TurnUpkeep] = providers.Dependency()
    title_wait: providers.Dependency[float] = providers.Dependency()

    # Like the memory tiers' model work: offline with the offline scripted model, else the LLM.
    titler = providers.Selector(
        provider,
        scripted=providers.Singleton(FirstWordsTitler),
        openai=providers.Singleton(LLMTitler, model=model),
        agentscope=providers.Singleton(LLMTitler, model=model),
    )
    follow_up_writer = providers.Selector(
        provider,
        scripted=providers.Singleton(TemplateFollowUpWriter),
        openai=providers.Singleton(LLMFollowUpWriter, model=model),
        agentscope=providers.Singleton(LLMFollowUpWriter, model=model),
    )
    name_conversation = providers.Singleton(NameConversation, titler=titler, store=store, clock=clock)
    suggest_follow_ups = providers.Singleton(SuggestFollowUps, writer=follow_up_writer, store=store, agents=agents)
    after_turn = providers.Singleton(
        AfterTurn, upkeep=upkeep, name=name_conversation, suggest=suggest_follow_ups, spawner=spawner,
        title_wait=title_wait,
    )
