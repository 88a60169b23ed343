"""GET /readyz over real HTTP: 200 with every part on PostgreSQL + Redis and an OpenAI-protocol model;
503 naming the part that is down (a private redis-server stopped under `memagent serve`, a database on
a closed port) and never its address, port or password. Open like /healthz, even with keys required.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from interfaces.app import create_app
from interfaces.settings.settings import Settings
from tests.integration.backends import RedisServer, private_redis
from tests.integration.streaming_helpers import serving, shared_backends
from tests.llm_server import ScriptedLLMServer
from tests.service import Service, free_port

pytestmark = pytest.mark.integration

PASSWORD = "pg-secret-0123"  # noqa: S105 -- planted, to be found nowhere in an answer
OFFLINE = '[{"name": "offline", "provider": "scripted", "model": "x"}]'


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


def model_env(llm: ScriptedLLMServer) -> dict[str, str]:
    return {
        "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
        "MEMAGENT_LLM__API_KEY": "sk-readyz-0123", "MEMAGENT_MODELS": OFFLINE,
    }


def readyz(service: Service) -> httpx.Response:
    return httpx.get(f"{service.base_url}/readyz", timeout=30)


def test_postgres_redis_and_the_models_ready_answer_200_with_each_part_even_without_a_key(
    llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    with shared_backends(model_env(llm) | {"MEMAGENT_AUTH__REQUIRE_KEYS": "true"}) as env, \
            serving(env, tmp_path) as service:
        response = readyz(service)
        assert response.status_code == 200, response.text
        assert response.json() == {
            "status": "ok",
            "checks": {"database": "ok", "redis": "ok", "model:default": "ok", "model:offline": "ok"},
        }
        assert response.headers["cache-control"] == "no-store"
    assert [r.path for r in llm.requests] == ["/v1/models"]  # the model's server was asked, once
    assert llm.requests[0].authorization == "Bearer sk-readyz-0123"


def test_a_redis_that_is_down_answers_503_naming_redis_without_its_address(tmp_path: Path) -> None:
    with private_redis(tmp_path) as redis_server, shared_backends({"MEMAGENT_REDIS__URL": redis_server.url}) as env, \
            serving(env, tmp_path) as service:
        redis_server.stop()
        response = readyz(service)
        assert response.status_code == 503, response.text
        body = response.json()
        assert (body["status"], body["code"]) == ("unavailable", "not_ready")
        assert body["checks"] == {"database": "ok", "redis": "unreachable", "model:default": "ok"}
        assert body["message"] == "Not ready: redis is unreachable."
        assert_no_address(response.text, str(redis_server.port))
        again_before_ten_seconds(redis_server, service)


def again_before_ten_seconds(redis_server: RedisServer, service: Service) -> None:
    """Redis is back, but the checks ran a moment ago: the same answer, from the cache."""
    redis_server.start()
    assert readyz(service).json()["checks"]["redis"] == "unreachable"


async def test_a_database_on_a_closed_port_answers_503_naming_the_database_without_its_url() -> None:
    port = free_port()
    url = f"postgresql+asyncpg://memagent:{PASSWORD}@127.0.0.1:{port}/memagent"
    # In process and without the lifespan: `memagent serve` would refuse to start on this database.
    app = create_app(Settings(database={"url": url}))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://memagent.test") as client:
        response = await client.get("/readyz")
    assert response.status_code == 503, response.text
    assert response.json()["checks"] == {"database": "unreachable", "model:default": "ok"}
    assert response.json()["message"] == "Not ready: database is unreachable."
    assert_no_address(response.text, str(port))


def assert_no_address(text: str, port: str) -> None:
    for secret in (port, "127.0.0.1", "localhost", "redis://", "postgresql", PASSWORD, "Error", "refused"):
        assert secret not in text, secret
    assert set(json.loads(text)) == {"status", "code", "message", "checks"}
