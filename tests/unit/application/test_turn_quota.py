"""A turn's rate limits (TurnQuota, over the in-process limiter): refused before its query is stored,
with the limit named and counted in the metrics; a running turn's slot given back however it ends;
its tokens counted when it ends; an agent's own limits over the defaults."""

from __future__ import annotations

import asyncio

import pytest

from application.chat_turn.turn import ChatRequest
from application.chat_turn.turn_quota import QuotaDefaults
from application.errors import Conflict, ModelError, RateLimited
from application.ports.chat_model import ModelChunk
from domain.accounts.rate_limits import RateLimits
from domain.agents.config import AgentConfig
from domain.conversations.conversation import MessageStatus
from domain.conversations.messages import Usage
from domain.ids import AppId, EndUserId
from tests.fakes import ScriptedModel
from tests.unit.application.harness import OWNER, Harness

HELLO = [ModelChunk(text="Hel"), ModelChunk(text="lo"), ModelChunk(usage=Usage(10, 2, 0.0))]  # 12 tokens


def limited(key: RateLimits | None = None, agent: RateLimits | None = None, **harness: object) -> Harness:
    model = ScriptedModel([HELLO] * 10)
    defaults = QuotaDefaults(key=key or RateLimits(), agent=agent or RateLimits())
    return Harness(model, quotas=defaults, **harness)  # type: ignore[arg-type]


def request(query: str = "hi", **fields: object) -> ChatRequest:
    return ChatRequest(OWNER, query, key_id="key-7f3a", **fields)  # type: ignore[arg-type]


async def test_a_turn_over_the_keys_rpm_is_refused_before_its_query_is_stored() -> None:
    h = limited(key=RateLimits(rpm=1))
    await h.start(request("first"))
    with pytest.raises(RateLimited) as refused:
        await h.start(request("second"))
    assert refused.value.retry_after == 60
    assert refused.value.code == "rate_limited"
    assert "turns per minute (1)" in refused.value.message
    assert "API key" in refused.value.message
    assert [m.query for m in h.store.messages.values()] == ["first"]
    assert h.metrics.of("request_limited") == [("rpm", "key")]
    await h.spawner.run_all()


async def test_the_refusal_names_the_limit_never_the_key_or_the_user() -> None:
    h = limited(agent=RateLimits(rpm=1))
    await h.start(request(end_user=EndUserId("user-42")))
    with pytest.raises(RateLimited) as refused:
        await h.start(request(end_user=EndUserId("user-42")))
    assert "This agent" in refused.value.message
    assert "key-7f3a" not in refused.value.message
    assert "user-42" not in refused.value.message
    assert h.metrics.of("request_limited") == [("rpm", "agent")]
    await h.spawner.run_all()


async def test_each_key_has_its_own_count_and_a_request_without_one_counts_under_its_account() -> None:
    h = limited(key=RateLimits(rpm=1))
    await h.start(request())
    await h.start(ChatRequest(OWNER, "hi", key_id="another-key"))
    await h.start(ChatRequest(OWNER, "hi"))
    with pytest.raises(RateLimited):
        await h.start(ChatRequest(OWNER, "hi again"))
    await h.spawner.run_all()


async def test_a_running_turn_holds_its_slot_until_it_ends() -> None:
    h = limited(agent=RateLimits(concurrent_turns=1))
    await h.start(request("first"))  # spawned, not run yet: it is running as far as its limits know
    with pytest.raises(RateLimited) as refused:
        await h.start(request("second"))
    assert "concurrent turns (1)" in refused.value.message
    assert refused.value.retry_after == 1
    await h.spawner.run_all()
    handle = await h.start(request("third"))
    await h.spawner.run_all()
    assert h.store.messages[handle.message_id].status is MessageStatus.NORMAL


async def test_a_turn_that_fails_gives_its_slot_back() -> None:
    def fail(*_: object) -> list[ModelChunk]:
        raise ModelError("The model did not answer.")

    h = Harness(ScriptedModel([fail, HELLO]), quotas=QuotaDefaults(key=RateLimits(concurrent_turns=1)))
    failed = await h.start(request())
    await h.spawner.run_all()
    assert h.store.messages[failed.message_id].status is MessageStatus.ERROR
    await h.start(request())
    await h.spawner.run_all()


async def test_a_stopped_turn_gives_its_slot_back() -> None:
    model = ScriptedModel([[ModelChunk(text="par"), ModelChunk(text="tial")], HELLO])
    h = Harness(model, quotas=QuotaDefaults(key=RateLimits(concurrent_turns=1)))
    handle = await h.start(request("long answer please"))

    async def stall(index: int) -> None:
        if index == 1:
            await h.tasks.request_stop(handle.task_id, OWNER)
            await asyncio.sleep(30)

    model.on_chunk = stall
    await asyncio.wait_for(h.spawner.run_all(), 5)
    model.on_chunk = None
    assert h.store.messages[handle.message_id].status is MessageStatus.STOP
    await h.start(request())
    await h.spawner.run_all()


async def test_a_turn_that_could_not_open_gives_its_slot_back_at_once() -> None:
    h = limited(key=RateLimits(concurrent_turns=2))
    first = await h.start(request())
    with pytest.raises(Conflict):  # a turn already runs in that conversation
        await h.start(request(conversation_id=first.conversation_id))
    await h.start(request())  # the refused turn's slot was not kept
    await h.spawner.run_all()


async def test_tokens_count_when_a_turn_ends_and_refuse_the_next_once_used_up() -> None:
    h = limited(agent=RateLimits(tokens_per_day=20))
    await h.turn("first")  # 12 tokens
    await h.turn("second")  # 24: this one crossed the limit, and ran to its end
    with pytest.raises(RateLimited) as refused:
        await h.start(request("third"))
    assert "tokens for today (20, UTC)" in refused.value.message
    assert h.metrics.of("request_limited") == [("tokens_per_day", "agent")]


async def test_an_agents_own_limits_replace_the_defaults_for_agents() -> None:
    config = AgentConfig(AppId("default"), limits=RateLimits(rpm=0, concurrent_turns=1))
    h = limited(agent=RateLimits(rpm=1), config=config)
    await h.start(request("first"))
    with pytest.raises(RateLimited) as refused:
        await h.start(request("second"))
    assert "concurrent turns" in refused.value.message  # rpm 0: this agent's turns per minute are unlimited
    await h.spawner.run_all()
