"""The chat model's proxy comes from the environment as httpx read it for the openai SDK."""

from __future__ import annotations

import aiohttp
import pytest
from yarl import URL

from infrastructure.models.openai_http import env_proxy

API = URL("https://api.example.com/v1/chat/completions")
PROXY_VARIABLES = ("ALL_PROXY", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "all_proxy", "https_proxy",
                   "http_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def no_proxy_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_the_schemes_proxy_with_its_credentials_else_all_proxy_else_none(monkeypatch: pytest.MonkeyPatch) -> None:
    assert env_proxy(API) == (None, None)
    monkeypatch.setenv("ALL_PROXY", "http://every:3128")
    assert env_proxy(API) == (URL("http://every:3128"), None)
    monkeypatch.setenv("HTTPS_PROXY", "http://ann:secret@tls:3128")
    assert env_proxy(API) == (URL("http://tls:3128"),
                              {"Proxy-Authorization": aiohttp.encode_basic_auth("ann", "secret")})


def test_no_proxy_naming_the_host_sends_the_call_direct(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://tls:3128")
    monkeypatch.setenv("NO_PROXY", "example.com")
    assert env_proxy(API) == (None, None)
