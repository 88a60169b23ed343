"""The chat models an agent may pick from: named model profiles (MEMAGENT_MODELS, and `default`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from application.ports.chat_model import ChatModel
    from domain.agents.config import ModelCapabilities


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What the API may show of a profile: never its key or its URL's credentials."""

    name: str
    provider: str
    model: str
    capabilities: ModelCapabilities
    input_price: float = 0.0  # USD per million prompt tokens
    output_price: float = 0.0  # USD per million completion tokens
    priced: bool = field(default=False)  # False: no price is known, so its calls cost 0


class ChatModels(Protocol):
    def profiles(self) -> list[ModelProfile]:
        """Every profile, `default` first."""
        ...

    def get(self, name: str) -> ChatModel | None:
        """The profile's model, built on first use (no I/O), or None for an unknown name."""
        ...
