import re

from domain.conversations.messages import Msg, Role, ToolResultBlock, ToolUseBlock
from domain.tools.calls import ToolSpec
from infrastructure.models.tool_names import ToolNames, wire_name
from tests.fakes import T0

ALLOWED = re.compile(r"[A-Za-z0-9_-]{1,64}")


def test_names_the_wire_allows_are_kept() -> None:
    assert wire_name("current_time") == "current_time"
    assert wire_name("get-weather-2") == "get-weather-2"


def test_other_names_are_mapped_into_the_allowed_alphabet_and_length() -> None:
    for name in ("server.tool", "météo", "a" * 65, "x." + "y" * 80):
        assert ALLOWED.fullmatch(wire_name(name)), name


def test_names_that_sanitise_alike_stay_distinct() -> None:
    assert wire_name("a.b") != wire_name("a_b")
    assert wire_name("a.b") != wire_name("a-b")
    assert wire_name("a.b") != wire_name("a/b")
    assert wire_name("x" * 70 + "1") != wire_name("x" * 70 + "2")


def test_wire_names_map_back_to_the_names_of_the_request() -> None:
    names = ToolNames.of([ToolSpec("server.tool", "d"), ToolSpec("plain", "d")], [])
    assert names.domain(wire_name("server.tool")) == "server.tool"
    assert names.domain("plain") == "plain"


def test_names_used_earlier_in_the_prompt_map_back_when_none_are_offered() -> None:
    history = [
        Msg("a", "assistant", Role.ASSISTANT, (ToolUseBlock("c1", "mcp.search", {}),), T0),
        Msg("t", "tool", Role.TOOL, (ToolResultBlock("c1", "mcp.fetch", "ok"),), T0),
    ]
    names = ToolNames.of([], history)
    assert names.domain(wire_name("mcp.search")) == "mcp.search"
    assert names.domain(wire_name("mcp.fetch")) == "mcp.fetch"


def test_a_name_never_offered_passes_through_unchanged() -> None:
    assert ToolNames([]).domain("made_up") == "made_up"
