from datetime import UTC, datetime

from agentscope import message as am

from domain.conversations.messages import ImageBlock, Msg, Role, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from infrastructure.models.agentscope_convert import from_agentscope, to_agentscope, to_agentscope_msg
from tests.fakes import T0

CONVERSATION = [
    Msg("s", "system", Role.SYSTEM, (TextBlock("Be brief."),), T0),
    Msg(
        "u",
        "alice",
        Role.USER,
        (
            TextBlock("What is this, and the time?"),
            ImageBlock("https://x.test/cat.png"),
            ImageBlock("data:image/jpeg;base64,/9j/AA=="),
        ),
        T0,
        metadata={"lang": "en"},
    ),
    Msg(
        "a",
        "assistant",
        Role.ASSISTANT,
        (
            TextBlock("Checking."),
            ToolUseBlock("c1", "current_time", {"timezone": "UTC"}),
            ToolUseBlock("c2", "mcp.lookup", {"q": "cat"}),
        ),
        T0,
        usage=Usage(12, 3),
    ),
    Msg(
        "t",
        "tool",
        Role.TOOL,
        (ToolResultBlock("c1", "current_time", "12:00"), ToolResultBlock("c2", "mcp.lookup", "no access", True)),
        T0,
    ),
    Msg("f", "assistant", Role.ASSISTANT, (TextBlock("A cat, at noon."),), T0),
]


def round_trip(messages: list[Msg]) -> list[Msg]:
    return [back for msg in to_agentscope(messages) for back in from_agentscope(msg)]


def test_a_conversation_survives_a_round_trip() -> None:
    assert round_trip(CONVERSATION) == CONVERSATION


def test_blocks_map_to_their_agentscope_counterparts() -> None:
    user, said, results = (to_agentscope_msg(m) for m in CONVERSATION[1:4])
    text, url_image, inline_image = user.content
    assert isinstance(text, am.TextBlock)
    assert isinstance(url_image.source, am.URLSource)
    assert url_image.source.media_type == "image/png"
    assert isinstance(inline_image.source, am.Base64Source)
    assert (inline_image.source.media_type, inline_image.source.data) == ("image/jpeg", "/9j/AA==")
    call = said.content[1]
    assert isinstance(call, am.ToolCallBlock)
    assert (call.id, call.name, call.input) == ("c1", "current_time", '{"timezone": "UTC"}')
    assert results.role == "assistant"  # AgentScope has no tool role: results go in an assistant Msg
    assert [r.state for r in results.content] == ["success", "error"]
    assert said.usage == am.Usage(input_tokens=12, output_tokens=3)


def test_tool_names_can_be_renamed_on_the_way() -> None:
    said = to_agentscope_msg(CONVERSATION[2], rename=lambda name: name.replace(".", "_"))
    assert [b.name for b in said.content if isinstance(b, am.ToolCallBlock)] == ["current_time", "mcp_lookup"]


def test_an_agentscope_assistant_msg_with_calls_and_results_splits_into_assistant_then_tool() -> None:
    native = am.Msg(
        id="n",
        name="agent",
        role="assistant",
        created_at="2026-01-01T00:00:00+00:00",
        content=[
            am.TextBlock(text="Let me check."),
            am.ToolCallBlock(id="c9", name="current_time", input='{"timezone": "Asia/Tokyo"}'),
            am.ToolResultBlock(id="c9", name="current_time", output=[am.TextBlock(text="21:00")], state="success"),
            am.ThinkingBlock(thinking="(private)"),
        ],
    )
    said, results = from_agentscope(native)
    assert said == Msg(
        "n",
        "agent",
        Role.ASSISTANT,
        (TextBlock("Let me check."), ToolUseBlock("c9", "current_time", {"timezone": "Asia/Tokyo"})),
        datetime(2026, 1, 1, tzinfo=UTC),
    )
    assert results.role is Role.TOOL
    assert results.content == (ToolResultBlock("c9", "current_time", "21:00", False),)


def test_a_local_file_image_is_never_passed_to_agentscope() -> None:
    user = Msg("u", "user", Role.USER, (TextBlock("Look"), ImageBlock("file:///etc/passwd")), T0)
    [_, left_out] = to_agentscope_msg(user).content
    assert isinstance(left_out, am.TextBlock)
    assert "left out" in left_out.text


def test_agentscope_local_timestamps_come_back_timezone_aware() -> None:
    [msg] = from_agentscope(am.Msg(name="user", role="user", content=[am.TextBlock(text="hi")]))
    assert msg.created_at.tzinfo is not None
