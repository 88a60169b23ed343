"""The readiness adapters against the real thing: each turns its vendor's failure into a state, and
its log line for operators never carries a password or key."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from application.ports.readiness import FAILING, OK, REJECTED, UNREACHABLE
from infrastructure.models.model_readiness import OpenAIModelProbe
from infrastructure.models.provider_config import ProviderConfig
from infrastructure.persistence.database import Database
from infrastructure.persistence.database_readiness import DatabaseProbe
from infrastructure.redis_client import RedisClient
from infrastructure.redis_readiness import RedisProbe
from tests.integration.db_fixtures import pg_database_url  # noqa: F401 -- a fixture
from tests.integration.redis_fixtures import REDIS_URL, dead_redis_client
from tests.service import free_port

pytestmark = pytest.mark.integration

PASSWORD = "probe-secret-0123"  # noqa: S105 -- planted, to be found in no log line
KEY = "sk-probe-key-0123"


class Answering(BaseHTTPRequestHandler):
    """Answers every GET with the status its path names: /401/v1/models → 401."""

    def do_GET(self) -> None:  # noqa: N802 -- the name http.server calls
        self.send_response(int(self.path.split("/")[1]))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def answering() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answering)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def test_a_database_that_answers_is_ok(pg_database_url: str) -> None:  # noqa: F811 -- the fixture
    database = Database(pg_database_url)
    try:
        assert await DatabaseProbe(database).state() == OK
    finally:
        await database.dispose()


async def test_a_database_on_a_closed_port_is_unreachable_and_its_password_is_not_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    database = Database(f"postgresql+asyncpg://memagent:{PASSWORD}@127.0.0.1:{free_port()}/memagent")
    try:
        assert await DatabaseProbe(database).state() == UNREACHABLE
    finally:
        await database.dispose()
    assert "the database at" in caplog.text
    assert PASSWORD not in caplog.text


async def test_a_redis_that_answers_is_ok_and_one_that_is_not_there_is_unreachable(
    caplog: pytest.LogCaptureFixture,
) -> None:
    live, dead = RedisClient(REDIS_URL), dead_redis_client()
    try:
        assert await RedisProbe(live).state() == OK
        assert await RedisProbe(dead).state() == UNREACHABLE
    finally:
        await live.close()
        await dead.close()
    assert "s3cret-pass" not in caplog.text  # the dead client's URL holds a password


@pytest.mark.parametrize(
    ("status", "state"), [(200, OK), (404, OK), (429, OK), (401, REJECTED), (403, REJECTED), (500, FAILING)]
)
async def test_a_model_server_is_ready_when_it_answers_unless_it_refuses_the_key_or_fails(
    answering: str, status: int, state: str, caplog: pytest.LogCaptureFixture
) -> None:
    probe = OpenAIModelProbe("fast", ProviderConfig(model="m", base_url=f"{answering}/{status}/v1", api_key=KEY))
    assert (probe.part, await probe.state()) == ("model:fast", state)
    assert KEY not in caplog.text


async def test_a_model_server_on_a_closed_port_is_unreachable() -> None:
    probe = OpenAIModelProbe("local", ProviderConfig(model="m", base_url=f"http://127.0.0.1:{free_port()}/v1"))
    assert await probe.state() == UNREACHABLE
