"""GET /api/models through `memagent serve`: every profile, `default` first, and nothing secret.

A profile's key, the variable or file it comes from, and its base URL never reach the answer; nor
does a key reach the service's log. A bad MEMAGENT_MODELS stops `memagent serve` with one line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.backends import memagent
from tests.integration.db_fixtures import sqlite_url
from tests.service import Service, free_port, running_service

pytestmark = pytest.mark.integration

DEFAULT_KEY = "sk-default-route-0123456789"
FAST_KEY = "sk-fast-route-0123456789"
LOCAL_KEY = "sk-local-route-0123456789"
INTERNAL_URL = "http://models.internal.test:8080/v1"
MODELS = (
    '[{"name": "fast", "provider": "openai", "model": "gpt-4o-mini", "api_key_env": "ROUTE_FAST_KEY",'
    ' "price": {"input": 0.15, "output": 0.6}},'
    ' {"name": "local", "provider": "openai", "model": "llama3", "base_url": "' + INTERNAL_URL + '",'
    ' "api_key_file": "{key_file}", "capabilities": {"agent_thought": false}},'
    ' {"name": "offline", "provider": "scripted", "model": "anything"}]'
)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    home = tmp_path_factory.mktemp("models-route")
    key_file = home / "local.key"
    key_file.write_text(f"{LOCAL_KEY}\n")
    env = {
        "MEMAGENT_DATABASE__URL": sqlite_url(home / "memagent.db"),
        "MEMAGENT_LLM__PROVIDER": "openai",
        "MEMAGENT_LLM__MODEL": "gpt-4o",
        "MEMAGENT_LLM__BASE_URL": "http://default.internal.test/v1",
        "MEMAGENT_LLM__API_KEY": DEFAULT_KEY,
        "MEMAGENT_LLM__PRICES": '{"gpt-4o": {"input": 2.5, "output": 10.0}}',
        "MEMAGENT_MODELS": MODELS.replace("{key_file}", str(key_file)),
        "ROUTE_FAST_KEY": FAST_KEY,
    }
    with running_service(env, home) as running:
        yield running


def caps(tool_call: bool, agent_thought: bool, image_input: bool) -> dict[str, bool]:
    return {"tool_call": tool_call, "agent_thought": agent_thought, "image_input": image_input}


def test_the_profiles_are_listed_default_first_with_capabilities_and_prices(service: Service) -> None:
    response = httpx.get(f"{service.base_url}/api/models", timeout=10)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "data": [
            {"name": "default", "provider": "openai", "model": "gpt-4o", "capabilities": caps(True, True, True),
             "price": {"input": 2.5, "output": 10.0}, "priced": True},
            {"name": "fast", "provider": "openai", "model": "gpt-4o-mini", "capabilities": caps(True, True, True),
             "price": {"input": 0.15, "output": 0.6}, "priced": True},
            {"name": "local", "provider": "openai", "model": "llama3", "capabilities": caps(False, False, False),
             "price": None, "priced": False},
            {"name": "offline", "provider": "scripted", "model": "offline-scripted",
             "capabilities": caps(True, True, False), "price": {"input": 0.0, "output": 0.0}, "priced": True},
        ]
    }


def test_no_key_key_source_or_url_is_shown(service: Service) -> None:
    body = httpx.get(f"{service.base_url}/api/models", timeout=10).text
    for secret in (DEFAULT_KEY, FAST_KEY, LOCAL_KEY, "ROUTE_FAST_KEY", "local.key", "internal.test", "http"):
        assert secret not in body
    for key in (DEFAULT_KEY, FAST_KEY, LOCAL_KEY):
        assert key not in service.log()


def test_a_request_with_a_key_that_is_not_valid_is_refused(service: Service) -> None:
    response = httpx.get(f"{service.base_url}/api/models", headers={"Authorization": "Bearer mk_nope"}, timeout=10)
    assert response.status_code == 401
    assert response.json()["code"] == "unauthorized"


@pytest.mark.parametrize(
    ("models", "why"),
    [
        ('[{"name": "fast",', "not valid JSON"),
        ('[{"name": "default", "provider": "openai", "model": "m"}]', "the name 'default'"),
        ('[{"name": "a", "provider": "openai", "model": "m"}, {"name": "a", "provider": "openai", "model": "m"}]',
         "used twice"),
        ('[{"name": "a", "provider": "openai", "model": "m", "api_key_env": "ROUTE_NO_SUCH_KEY"}]',
         "ROUTE_NO_SUCH_KEY"),
        ('[{"name": "a", "provider": "openai", "model": "m", "api_key_file": "/nonexistent/a.key"}]',
         "/nonexistent/a.key"),
    ],
)
def test_a_bad_model_list_stops_serve_with_one_line_naming_the_setting(models: str, why: str, tmp_path: Path) -> None:
    env = {"MEMAGENT_DATABASE__URL": sqlite_url(tmp_path / "memagent.db"), "MEMAGENT_MODELS": models}
    done = memagent(["serve", "--port", str(free_port())], env, timeout=60)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "Traceback" not in output
    [reason] = [line for line in done.stderr.splitlines() if line.startswith("memagent: cannot start:")]
    assert "MEMAGENT_MODELS" in reason
    assert why in reason
