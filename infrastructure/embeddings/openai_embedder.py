"""Embeddings from an OpenAI-compatible `/v1/embeddings` API (OpenAI, vLLM, Ollama, …), via the openai SDK."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import openai
from openai import AsyncOpenAI

from application.errors import ModelError
from application.ports.embedder import Embedder
from infrastructure.models.openai_errors import ModelErrors

if TYPE_CHECKING:
    from collections.abc import Sequence

logger = logging.getLogger(__name__)

NO_KEY = "no-key"  # local servers need none, the SDK insists on one


class OpenAIEmbedder(Embedder):
    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        dimensions: int | None = None,
        batch_size: int = 128,
        max_retries: int = 2,
    ) -> None:
        self._model = model
        self._dimensions = dimensions
        self._batch_size = max(1, batch_size)
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key or NO_KEY, timeout=timeout,
                                   max_retries=max_retries)
        self._errors = ModelErrors(model, base_url, timeout, api_key, server="embedding server")

    @property
    def name(self) -> str:
        return f"openai:{self._model}" + (f":{self._dimensions}" if self._dimensions else "")

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            # The API refuses empty strings; a space embeds as "nothing".
            batch = [text if text.strip() else " " for text in texts[start : start + self._batch_size]]
            extra: dict[str, Any] = {"dimensions": self._dimensions} if self._dimensions else {}
            try:
                response = await self._client.embeddings.create(model=self._model, input=batch, **extra)
            except openai.OpenAIError as error:  # on the first batch, nothing was embedded: nothing to bill
                raise self._errors.translate(error, before_answer=start == 0) from error
            ordered = sorted(response.data, key=lambda item: item.index)
            if len(ordered) != len(batch):
                logger.warning("Embedding model %r at %s sent %d vectors for %d texts",
                               self._model, self._errors.base_url or "the OpenAI API", len(ordered), len(batch))
                raise ModelError("The embedding server sent a different number of vectors than texts.")
            vectors.extend([float(x) for x in item.embedding] for item in ordered)
        return vectors

    async def close(self) -> None:
        await self._client.close()

