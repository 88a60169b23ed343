"""Model work that runs on the model profile an agent names: its memory upkeep (summaries, entities,
archive folds), its conversations' titles and its follow-up questions.

An agent on a cheap, private or local model must not send its conversations to another provider, so
these are never bound to one model for the whole process: the use case asks for the adapter of the
profile its agent's config names (`AgentConfig.model`, or `upkeep_model` for memory).
"""

from __future__ import annotations

from typing import Protocol, TypeVar

T_co = TypeVar("T_co", covariant=True)


class OnProfile(Protocol[T_co]):
    def __call__(self, profile: str, /) -> T_co:
        """The adapter (a `Summarizer`, a `Titler`…) that runs on the model profile named. Raises
        `ModelError` for a profile not configured here: never another profile's model instead."""
        ...
