from domain.conversations.messages import ImageBlock, Msg, Role, TextBlock, ToolResultBlock, ToolUseBlock
from domain.tools.calls import ToolSpec
from infrastructure.models.openai_convert import openai_messages, openai_tools
from infrastructure.models.tool_names import ToolNames, wire_name
from tests.fakes import T0

NAMES = ToolNames(["mcp.search", "current_time"])


def msg(role: Role, *blocks: TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock) -> Msg:
    return Msg(f"{role}", role.value, role, blocks, T0)


def test_system_and_text_only_user_messages_have_string_content() -> None:
    sent = openai_messages([msg(Role.SYSTEM, TextBlock("Rules.")), msg(Role.USER, TextBlock("Hi"))], NAMES)
    assert sent == [{"role": "system", "content": "Rules."}, {"role": "user", "content": "Hi"}]


def test_a_user_message_with_images_has_text_and_image_url_parts() -> None:
    user = msg(
        Role.USER,
        TextBlock("What is this?"),
        ImageBlock("https://x.test/a.png"),
        ImageBlock("data:image/png;base64,AA"),
    )
    assert openai_messages([user], NAMES) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": "https://x.test/a.png"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
            ],
        }
    ]


def test_tool_uses_become_tool_calls_and_results_become_tool_messages() -> None:
    said = msg(Role.ASSISTANT, ToolUseBlock("c1", "mcp.search", {"q": "x"}), ToolUseBlock("c2", "current_time", {}))
    results = msg(
        Role.TOOL, ToolResultBlock("c1", "mcp.search", "found"), ToolResultBlock("c2", "current_time", "noon", True)
    )
    assert openai_messages([said, results], NAMES) == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": wire_name("mcp.search"), "arguments": '{"q": "x"}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "current_time", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "found"},
        {"role": "tool", "tool_call_id": "c2", "content": "noon"},
    ]


def test_an_assistant_answer_is_plain_text() -> None:
    assert openai_messages([msg(Role.ASSISTANT, TextBlock("Done."))], NAMES) == [
        {"role": "assistant", "content": "Done."}
    ]


def test_tool_specs_become_function_tools_with_wire_names() -> None:
    spec = ToolSpec("mcp.search", "Search.", {"type": "object", "properties": {"q": {"type": "string"}}})
    assert openai_tools([spec], NAMES) == [
        {
            "type": "function",
            "function": {
                "name": wire_name("mcp.search"),
                "description": "Search.",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            },
        }
    ]
