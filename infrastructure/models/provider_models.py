"""The provider adapters, each imported when the first one is built.

The openai SDK alone takes about 0.6 s of CPU to import and agentscope more: a process that never
builds a provider's model (the scripted model, the lexical embedder, the command line) must not pay
for it. The container and the profiles' registry build provider models only through here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.ports.chat_model import ChatModel
    from application.ports.embedder import Embedder
    from infrastructure.models.provider_config import ProviderConfig


def openai_chat_model(config: ProviderConfig) -> ChatModel:
    from infrastructure.models.openai_chat_model import OpenAIChatModel

    return OpenAIChatModel(config)


def agentscope_chat_model(config: ProviderConfig, class_name: str, kwargs: Mapping[str, Any]) -> ChatModel:
    from infrastructure.models.agentscope_chat_model import AgentScopeChatModel

    return AgentScopeChatModel(config, class_name, kwargs)


def openai_embedder(embeddings: Mapping[str, Any], llm: Mapping[str, Any]) -> Embedder:
    """From the plain settings: the embeddings' own base URL and key, else the chat model's."""
    from infrastructure.embeddings.openai_embedder import OpenAIEmbedder

    return OpenAIEmbedder(
        model=str(embeddings["model"]),
        base_url=embeddings.get("base_url") or llm.get("base_url"),
        api_key=embeddings.get("api_key") or llm.get("api_key"),
        timeout=float(embeddings.get("timeout") or 30.0),
        dimensions=embeddings.get("dimensions"),
        batch_size=int(embeddings.get("batch_size") or 128),
    )
