"""OpenAIEmbedder against the OpenAI-protocol test server's /v1/embeddings, over real HTTP."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from application.errors import ModelError
from infrastructure.embeddings.openai_embedder import OpenAIEmbedder
from infrastructure.models.provider_models import openai_embedder
from tests.llm_server import ScriptedLLMServer, embedding_vector

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(embedding_dim=12) as running:
        yield running


async def test_texts_come_back_as_the_servers_vectors_in_order_and_in_batches(server: ScriptedLLMServer) -> None:
    server.reset()
    embedder = OpenAIEmbedder("text-embedding-test", server.base_url, "sk-embed", batch_size=2)
    try:
        texts = ["holiday", "parking", "", "lunch"]
        vectors = await embedder.embed(texts)
    finally:
        await embedder.close()
    expected = [embedding_vector(t or " ", 12) for t in texts]
    assert all(math.isclose(a, b, abs_tol=1e-6) for v, e in zip(vectors, expected, strict=True)
               for a, b in zip(v, e, strict=True))
    requests = [r for r in server.requests if r.path.endswith("/embeddings")]
    assert [r.body["input"] for r in requests] == [["holiday", "parking"], [" ", "lunch"]]
    assert requests[0].authorization == "Bearer sk-embed"
    assert requests[0].body["model"] == "text-embedding-test"
    assert embedder.name == "openai:text-embedding-test"


async def test_dimensions_are_asked_for_and_settings_default_to_the_llms_server(server: ScriptedLLMServer) -> None:
    server.reset()
    embedder = openai_embedder(
        {"model": "m", "base_url": None, "api_key": None, "dimensions": 5, "timeout": 5, "batch_size": 10},
        {"base_url": server.base_url, "api_key": "sk-llm"},
    )
    try:
        [vector] = await embedder.embed(["x"])
    finally:
        await embedder.close()
    assert len(vector) == 5
    [request] = server.requests
    assert (request.body["dimensions"], request.authorization) == (5, "Bearer sk-llm")


async def test_an_unreachable_server_is_a_model_error_without_the_key() -> None:
    embedder = OpenAIEmbedder("m", "http://127.0.0.1:9/v1", "sk-secret-key", timeout=2, max_retries=0)
    try:
        with pytest.raises(ModelError) as failed:
            await embedder.embed(["x"])
    finally:
        await embedder.close()
    assert failed.value.message == "The embedding server could not be reached."
    assert "sk-secret-key" not in failed.value.message
