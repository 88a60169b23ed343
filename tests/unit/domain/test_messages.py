"""Msg, its content blocks and Usage: plain-dict round-trips and the rules they keep."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from domain.conversations.messages import (
    ImageBlock,
    Msg,
    Role,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    block_from_dict,
    text_msg,
)
from domain.errors import DomainError

AT = datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=UTC)

ALL_BLOCKS = [
    TextBlock("hello"),
    TextBlock(""),
    ImageBlock("https://example.com/cat.png"),
    ToolUseBlock("call-1", "get_weather", {"city": "Paris", "days": 3, "opts": {"unit": "C"}}),
    ToolResultBlock("call-1", "get_weather", "sunny, 21 C"),
    ToolResultBlock("call-2", "search", "no permission", is_error=True),
]


def full_msg(**overrides: object) -> Msg:
    values: dict[str, object] = {
        "id": "m-1",
        "name": "alice",
        "role": Role.ASSISTANT,
        "content": tuple(ALL_BLOCKS),
        "created_at": AT,
        "metadata": {"source": "test", "tags": ["a", "b"], "nested": {"k": 1}},
        "usage": Usage(prompt_tokens=12, completion_tokens=7, price=0.0042),
    }
    values.update(overrides)
    return Msg(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize("block", ALL_BLOCKS)
def test_every_block_round_trips_through_a_plain_dict(block: object) -> None:
    assert block_from_dict(block.to_dict()) == block  # type: ignore[attr-defined]


@pytest.mark.parametrize("block", ALL_BLOCKS)
def test_every_block_round_trips_through_json(block: object) -> None:
    wire = json.loads(json.dumps(block.to_dict()))  # type: ignore[attr-defined]
    assert block_from_dict(wire) == block


def test_block_dicts_name_their_type() -> None:
    types = [b.to_dict()["type"] for b in ALL_BLOCKS]
    assert types == ["text", "text", "image", "tool_use", "tool_result", "tool_result"]


def test_tool_result_without_is_error_reads_as_a_success() -> None:
    block = block_from_dict({"type": "tool_result", "tool_use_id": "c", "name": "t", "output": "ok"})
    assert block == ToolResultBlock("c", "t", "ok", is_error=False)


@pytest.mark.parametrize("kind", ["audio", "TEXT", "", None])
def test_unknown_block_type_is_a_domain_error(kind: object) -> None:
    with pytest.raises(DomainError, match="block type"):
        block_from_dict({"type": kind, "text": "x"})


def test_block_without_a_type_is_a_domain_error() -> None:
    with pytest.raises(DomainError):
        block_from_dict({"text": "x"})


def test_image_block_needs_a_url() -> None:
    with pytest.raises(DomainError):
        ImageBlock("")


@pytest.mark.parametrize(("call_id", "name"), [("", "t"), ("c", ""), ("", "")])
def test_tool_use_block_needs_an_id_and_a_name(call_id: str, name: str) -> None:
    with pytest.raises(DomainError):
        ToolUseBlock(call_id, name, {})


def test_msg_round_trips_through_a_plain_dict_with_usage_and_metadata() -> None:
    msg = full_msg()
    assert Msg.from_dict(msg.to_dict()) == msg


def test_msg_round_trips_through_json_with_usage_and_metadata() -> None:
    msg = full_msg()
    back = Msg.from_dict(json.loads(json.dumps(msg.to_dict())))
    assert back == msg
    assert back.usage == Usage(12, 7, 0.0042)
    assert back.metadata == {"source": "test", "tags": ["a", "b"], "nested": {"k": 1}}
    assert back.created_at == AT


@pytest.mark.parametrize("role", list(Role))
def test_msg_of_every_role_round_trips(role: Role) -> None:
    msg = full_msg(role=role, name=role.value)
    assert Msg.from_dict(json.loads(json.dumps(msg.to_dict()))) == msg


def test_msg_without_usage_round_trips_as_no_usage() -> None:
    msg = full_msg(usage=None, metadata={})
    data = json.loads(json.dumps(msg.to_dict()))
    assert data["usage"] is None
    assert Msg.from_dict(data) == msg


def test_msg_with_zero_usage_keeps_its_usage() -> None:
    msg = full_msg(usage=Usage())
    assert Msg.from_dict(json.loads(json.dumps(msg.to_dict()))).usage == Usage()


def test_msg_dict_without_metadata_or_usage_reads_as_empty() -> None:
    data = {"id": "m", "name": "u", "role": "user", "content": [], "created_at": AT.isoformat()}
    msg = Msg.from_dict(data)
    assert msg.metadata == {}
    assert msg.usage is None
    assert msg.content == ()


def test_msg_keeps_a_non_utc_offset_through_a_round_trip() -> None:
    paris = datetime(2024, 5, 1, 14, 0, tzinfo=timezone(timedelta(hours=2)))
    back = Msg.from_dict(json.loads(json.dumps(full_msg(created_at=paris).to_dict())))
    assert back.created_at == paris
    assert back.created_at.utcoffset() == timedelta(hours=2)


def test_msg_dict_is_plain_json_data() -> None:
    data = full_msg().to_dict()
    assert data["role"] == "assistant"
    assert isinstance(data["created_at"], str)
    assert json.loads(json.dumps(data)) == data


def test_msg_with_naive_created_at_is_a_domain_error() -> None:
    with pytest.raises(DomainError, match="timezone"):
        full_msg(created_at=datetime(2024, 5, 1, 12, 0))  # noqa: DTZ001


def test_msg_dict_with_naive_created_at_is_a_domain_error() -> None:
    data = full_msg().to_dict()
    data["created_at"] = "2024-05-01T12:30:15"
    with pytest.raises(DomainError, match="timezone"):
        Msg.from_dict(data)


def test_msg_dict_with_unknown_block_type_is_a_domain_error() -> None:
    data = full_msg().to_dict()
    data["content"].append({"type": "video", "url": "x"})
    with pytest.raises(DomainError):
        Msg.from_dict(data)


def test_msg_role_must_be_a_role() -> None:
    with pytest.raises(DomainError, match="role"):
        full_msg(role="user")


def test_msg_dict_with_unknown_role_is_a_domain_error() -> None:
    data = full_msg().to_dict()
    data["role"] = "narrator"
    with pytest.raises(DomainError):
        Msg.from_dict(data)


def test_msg_text_joins_text_blocks_only_in_order() -> None:
    msg = full_msg(
        content=(
            TextBlock("Hel"),
            ImageBlock("https://example.com/a.png"),
            ToolUseBlock("c", "t", {"q": "ignored"}),
            TextBlock("lo"),
            ToolResultBlock("c", "t", "ignored too"),
            TextBlock(" world"),
        )
    )
    assert msg.text == "Hello world"


def test_msg_text_is_empty_without_text_blocks() -> None:
    msg = full_msg(content=(ImageBlock("https://example.com/a.png"),))
    assert msg.text == ""


def test_text_msg_holds_one_text_block_named_after_its_role() -> None:
    msg = text_msg("m-2", Role.USER, "hi there", AT)
    assert msg.content == (TextBlock("hi there"),)
    assert msg.name == "user"
    assert msg.text == "hi there"
    assert text_msg("m-3", Role.USER, "x", AT, name="bob").name == "bob"


def test_usage_addition_sums_tokens_and_price() -> None:
    total = Usage(10, 5, 0.01) + Usage(3, 2, 0.02)
    assert total.prompt_tokens == 13
    assert total.completion_tokens == 7
    assert total.price == pytest.approx(0.03)
    assert total.total_tokens == 20


def test_usage_zero_is_the_identity_of_addition() -> None:
    usage = Usage(4, 6, 0.5)
    assert usage + Usage() == usage
    assert Usage() + usage == usage


@pytest.mark.parametrize(
    ("prompt", "completion", "price"), [(-1, 0, 0.0), (0, -1, 0.0), (0, 0, -0.01)]
)
def test_usage_rejects_negative_figures(prompt: int, completion: int, price: float) -> None:
    with pytest.raises(DomainError, match="negative"):
        Usage(prompt, completion, price)


def test_usage_round_trips_through_a_plain_dict() -> None:
    usage = Usage(100, 20, 0.125)
    assert Usage.from_dict(json.loads(json.dumps(usage.to_dict()))) == usage
    assert Usage.from_dict({}) == Usage()
