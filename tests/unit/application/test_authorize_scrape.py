"""Who may scrape `GET /metrics`: an account key or the metrics token; never an agent key; anyone
in single-user mode. The token itself is never part of a refusal."""

from __future__ import annotations

from dataclasses import replace

import pytest

from application.accounts.authenticate import Authenticate
from application.accounts.authorize_scrape import AuthorizeScrape
from application.errors import Forbidden, Unauthorized
from domain.accounts.keys import ApiKey, ApiKeyId, hash_api_key
from domain.ids import AppId, OwnerId
from tests.fakes import T0, FakeApiKeyStore

ACCOUNT_KEY = "mk_" + "a" * 43
AGENT_KEY = "mk_" + "g" * 43
TOKEN = "scrape-" + "t" * 24


def stored(raw: str, agent: str | None = None) -> ApiKey:
    key = ApiKey(id=ApiKeyId(f"key-{raw[3]}"), owner=OwnerId("alice"), name="k", key_hash=hash_api_key(raw),
                 created_at=T0)
    return replace(key, agent_id=AppId(agent)) if agent else key


def authorize(*, require_keys: bool = True, token: str | None = TOKEN) -> AuthorizeScrape:
    keys = FakeApiKeyStore(stored(ACCOUNT_KEY), stored(AGENT_KEY, agent="helper"))
    return AuthorizeScrape(Authenticate(keys, require_keys=require_keys), token)


@pytest.mark.parametrize("header", [f"Bearer {ACCOUNT_KEY}", f"Bearer {TOKEN}", f"bearer   {TOKEN} "])
async def test_an_account_key_or_the_metrics_token_may_scrape(header: str) -> None:
    await authorize()(header)


async def test_an_agent_key_may_not_scrape() -> None:
    with pytest.raises(Forbidden) as refused:
        await authorize()(f"Bearer {AGENT_KEY}")
    assert "bound to agent" in refused.value.message


@pytest.mark.parametrize("header", [None, f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", f"Basic {TOKEN}", "Bearer "])
async def test_a_wrong_token_or_none_is_unauthorized_and_the_refusal_never_quotes_the_token(header: str | None) -> None:
    with pytest.raises(Unauthorized) as refused:
        await authorize()(header)
    assert TOKEN[:12] not in refused.value.message


async def test_without_a_token_configured_a_bearer_of_nothing_is_no_token() -> None:
    with pytest.raises(Unauthorized):
        await authorize(token=None)("Bearer ")


async def test_single_user_mode_lets_a_request_without_a_key_scrape_but_still_refuses_a_wrong_one() -> None:
    open_mode = authorize(require_keys=False)
    await open_mode(None)
    with pytest.raises(Unauthorized):
        await open_mode("Bearer mk_wrong")
