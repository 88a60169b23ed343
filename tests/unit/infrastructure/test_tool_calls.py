import pytest

from application.errors import ModelError
from domain.tools.calls import INVALID_ARGUMENTS_KEY, ToolCall, parse_arguments
from infrastructure.models.tool_calls import ToolCallAssembler
from infrastructure.models.tool_names import ToolNames, wire_name


async def test_interleaved_deltas_of_parallel_calls_are_assembled_by_index() -> None:
    calls = ToolCallAssembler()
    calls.add(0, "call_a", wire_name("srv.tool"), "")
    calls.add(1, "call_b", "other", '{"n"')
    calls.add(0, None, None, '{"city": ')
    calls.add(1, None, None, ": 2}")
    calls.add(0, None, None, '"Paris"}')
    assert await calls.calls(ToolNames(["srv.tool", "other"])) == (
        ToolCall("call_a", "srv.tool", {"city": "Paris"}),
        ToolCall("call_b", "other", {"n": 2}),
    )


async def test_calls_come_out_in_index_order_whatever_order_they_started_in() -> None:
    calls = ToolCallAssembler()
    calls.add(1, "second", "t", "{}")
    calls.add(0, "first", "t", "{}")
    assert [c.id for c in await calls.calls(ToolNames(["t"]))] == ["first", "second"]


async def test_a_call_without_an_id_gets_one() -> None:
    calls = ToolCallAssembler()
    calls.add(0, None, "t", "{}")
    [call] = await calls.calls(ToolNames(["t"]))
    assert call.id.startswith("call_")


async def test_a_call_without_a_name_is_a_model_error() -> None:
    calls = ToolCallAssembler()
    calls.add(0, "c", None, "{}")
    with pytest.raises(ModelError, match="without a tool name"):
        await calls.calls(ToolNames([]))


@pytest.mark.parametrize(("raw", "parsed"), [("", {}), ("  ", {}), ('{"a": [1]}', {"a": [1]})])
def test_arguments_parse_to_an_object(raw: str, parsed: dict[str, object]) -> None:
    assert parse_arguments(raw) == parsed


@pytest.mark.parametrize(
    "raw", ['{"a": ', "not json", "[1, 2]", '"text"', "null", '{"a": NaN}', '{"a": -Infinity}', '{"a":' * 5000]
)
def test_arguments_that_are_not_a_json_object_keep_the_raw_text(raw: str) -> None:
    assert parse_arguments(raw) == {INVALID_ARGUMENTS_KEY: raw}
