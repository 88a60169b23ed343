from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    """Turns texts into vectors. Raises `ModelError` when the embedding model fails."""

    @property
    def name(self) -> str:
        """Identifies the model, so cached vectors of different models never mix."""
        ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...
