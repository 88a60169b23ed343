"""`memagent serve` refuses to start on a backend it cannot use, with one line that says why.

The line names the setting to fix (MEMAGENT_DATABASE__URL, MEMAGENT_REDIS__URL) or the command to
run (`memagent migrate`); the exit status is non-zero; no traceback and no password is printed.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.backends import memagent, pg_url, throwaway_pg_database
from tests.integration.db_fixtures import sqlite_url
from tests.service import free_port

pytestmark = pytest.mark.integration

PASSWORD = "s3cret-pw"


@pytest.fixture(scope="module")
def unmigrated_database() -> Iterator[str]:
    with throwaway_pg_database() as name:
        yield name


def serve(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`memagent serve`, which must exit by itself."""
    return memagent(["serve", "--port", str(free_port())], env, timeout=60)


def the_reason(done: subprocess.CompletedProcess[str]) -> str:
    """The one line saying why it did not start; checks what else was printed."""
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "Traceback" not in output
    assert PASSWORD not in output
    assert "Uvicorn running" not in output
    reasons = [line for line in done.stderr.splitlines() if line.startswith("memagent: cannot start:")]
    assert len(reasons) == 1, output
    return reasons[0]


def test_an_unreachable_database_names_the_url_setting() -> None:
    reason = the_reason(serve({"MEMAGENT_DATABASE__URL": f"postgresql://postgres:{PASSWORD}@127.0.0.1:1/memagent"}))
    assert "MEMAGENT_DATABASE__URL" in reason
    assert "127.0.0.1:1" in reason


def test_a_database_that_does_not_exist_names_the_url_setting() -> None:
    reason = the_reason(serve({"MEMAGENT_DATABASE__URL": pg_url("memagent_no_such_database")}))
    assert "MEMAGENT_DATABASE__URL" in reason
    assert "memagent_no_such_database" in reason
    assert "does not exist" in reason


# Either backend on Redis is enough for the start-up check to ask it.
REDIS_USERS = [("redis", "inprocess"), ("inprocess", "redis")]


@pytest.mark.parametrize(("memory", "events"), REDIS_USERS)
def test_an_unreachable_redis_names_the_redis_setting(memory: str, events: str, tmp_path: Path) -> None:
    env = {
        "MEMAGENT_DATABASE__URL": sqlite_url(tmp_path / "memagent.db"),
        "MEMAGENT_MEMORY__BACKEND": memory,
        "MEMAGENT_EVENTS__BACKEND": events,
        "MEMAGENT_REDIS__URL": f"redis://:{PASSWORD}@127.0.0.1:1/0",
    }
    reason = the_reason(serve(env))
    assert "MEMAGENT_REDIS__URL" in reason
    assert "127.0.0.1:1" in reason


def test_an_unmigrated_postgres_database_asks_for_memagent_migrate(unmigrated_database: str) -> None:
    reason = the_reason(serve({"MEMAGENT_DATABASE__URL": pg_url(unmigrated_database)}))
    assert "memagent migrate" in reason
    assert unmigrated_database in reason


@pytest.mark.parametrize(
    ("setting", "url"),
    [
        ("MEMAGENT_DATABASE__URL", f"postgresql://postgres:{PASSWORD}@127.0.0.1:54x2/memagent"),
        ("MEMAGENT_DATABASE__URL", f"not a url {PASSWORD}"),
        ("MEMAGENT_REDIS__URL", f"redis://:{PASSWORD}@127.0.0.1:63x9/0"),
    ],
)
def test_a_malformed_url_names_its_setting_in_one_line(setting: str, url: str, tmp_path: Path) -> None:
    env = {"MEMAGENT_DATABASE__URL": sqlite_url(tmp_path / "memagent.db"), "MEMAGENT_MEMORY__BACKEND": "redis",
           setting: url}
    reason = the_reason(serve(env))
    assert setting in reason


@pytest.mark.parametrize("setting", ["MEMAGENT_LLM__BASE_URL", "MEMAGENT_EMBEDDINGS__BASE_URL"])
def test_a_model_url_holding_credentials_is_refused_naming_its_setting(setting: str, tmp_path: Path) -> None:
    env = {"MEMAGENT_DATABASE__URL": sqlite_url(tmp_path / "memagent.db"),
           setting: f"https://user:{PASSWORD}@models.example/v1"}
    reason = the_reason(serve(env))
    assert setting in reason
    assert "user name or password" in reason


def test_any_origin_names_the_cors_setting(tmp_path: Path) -> None:
    reason = the_reason(serve({"MEMAGENT_DATABASE__URL": sqlite_url(tmp_path / "memagent.db"),
                               "MEMAGENT_AUTH__REQUIRE_KEYS": "true", "MEMAGENT_SERVER__CORS_ORIGINS": '["*"]'}))
    assert "MEMAGENT_SERVER__CORS_ORIGINS" in reason
