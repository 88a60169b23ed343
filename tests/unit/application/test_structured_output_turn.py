"""A turn with structured output: the format goes to a model that takes it, instructions to one that
does not; a checked answer is held until it passes, repaired once, and else ends the turn with
`invalid_output`. The turn is remembered as any other."""

from __future__ import annotations

from application.chat_turn.turn import ChatRequest, TurnHandle
from application.ports.chat_model import ModelChunk
from domain.agents.config import ModelCapabilities
from domain.conversations.conversation import MessageStatus
from domain.conversations.messages import Usage
from domain.conversations.structured_output import OutputFormat, OutputKind
from domain.conversations.thoughts import ThoughtEvent
from tests.fakes import ScriptedModel
from tests.unit.application.harness import OWNER, Harness

PERSON = {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]}
STRICT = OutputFormat(OutputKind.JSON_SCHEMA, PERSON, name="person", strict=True)
NATIVE = ModelCapabilities(tool_call=True, structured_output=True)


def says(*pieces: str) -> list[ModelChunk]:
    return [*(ModelChunk(text=p) for p in pieces), ModelChunk(usage=Usage(5, 3), finish_reason="stop")]


async def turn(h: Harness, output: OutputFormat, query: str = "how old is Ada?") -> TurnHandle:
    handle = await h.start(ChatRequest(OWNER, query, output=output))
    await h.spawner.run_all()
    await h.after_turns()
    return handle


async def deltas(h: Harness, handle: TurnHandle) -> list[str]:
    return [t.answer for t in await h.thoughts(handle.task_id) if t.event is ThoughtEvent.AGENT_MESSAGE and t.answer]


async def test_a_model_that_takes_the_format_gets_it_and_no_instructions() -> None:
    model = ScriptedModel([says('{"age": 36}')], NATIVE)
    h = Harness(model)
    await turn(h, OutputFormat(OutputKind.JSON_SCHEMA, PERSON, name="person"))
    params = model.params[0]
    assert params is not None
    assert params.response_format == OutputFormat(OutputKind.JSON_SCHEMA, PERSON, "person")
    assert "JSON Schema" not in model.calls[0][0][0].text


async def test_a_model_without_support_gets_the_schema_in_its_system_prompt_and_no_format() -> None:
    model = ScriptedModel([says('{"age": 36}')])
    h = Harness(model)
    await turn(h, OutputFormat(OutputKind.JSON_SCHEMA, PERSON, name="person"))
    system = model.calls[0][0][0].text
    assert h.config.preset_prompt in system
    assert system.endswith('"required": ["age"], "type": "object"}')
    assert model.params[0] is None or model.params[0].response_format is None


async def test_a_checked_answer_goes_out_whole_once_it_passed() -> None:
    h = Harness(ScriptedModel([says('{"ag', 'e": 36}')], NATIVE))
    handle = await turn(h, STRICT)
    assert await deltas(h, handle) == ['{"age": 36}']
    message = await h.store.get_message(handle.message_id, OWNER)
    assert message is not None
    assert (message.status, message.answer) == (MessageStatus.NORMAL, '{"age": 36}')


async def test_an_answer_that_fails_is_repaired_once_and_only_the_repair_goes_out() -> None:
    model = ScriptedModel([says('{"age": "old"}'), says('{"age": 36}')], NATIVE)
    h = Harness(model)
    handle = await turn(h, STRICT)
    assert await deltas(h, handle) == ['{"age": 36}']
    repair = model.calls[1][0]
    assert repair[-2].text == '{"age": "old"}'
    assert repair[-1].text.startswith("That answer is not valid: $.age: 'old' is not of type 'integer'.")
    steps = h.store.steps[handle.message_id]
    assert [s.observation for s in steps if s.observation.startswith("Not the structured output")] == [
        "Not the structured output asked for: $.age: 'old' is not of type 'integer'"
    ]


async def test_a_second_failing_answer_ends_the_turn_with_invalid_output() -> None:
    h = Harness(ScriptedModel([says("Ada is 36."), says("She is 36 years old.")], NATIVE))
    handle = await turn(h, STRICT)
    end = (await h.thoughts(handle.task_id))[-1]
    assert (end.event, end.error_code) == (ThoughtEvent.ERROR, "invalid_output")
    assert "after one repair: it is not JSON" in end.observation
    assert await deltas(h, handle) == []
    message = await h.store.get_message(handle.message_id, OWNER)
    assert message is not None
    assert message.status is MessageStatus.ERROR


async def test_a_fenced_answer_passes_and_goes_out_as_the_json_alone() -> None:
    h = Harness(ScriptedModel([says('```json\n{"age": 36}\n```')]))
    handle = await turn(h, STRICT)
    assert await deltas(h, handle) == ['{"age": 36}']


async def test_json_mode_is_asked_for_in_words_even_of_a_model_that_takes_it() -> None:
    model = ScriptedModel([says('{"age": 36}')], NATIVE)
    await turn(Harness(model), OutputFormat(OutputKind.JSON_OBJECT))
    assert model.calls[0][0][0].text.endswith("Answer with one JSON object and nothing else: no prose, no code fence.")
    assert model.params[0] is not None
    assert model.params[0].response_format == OutputFormat(OutputKind.JSON_OBJECT)


async def test_json_object_wants_an_object() -> None:
    h = Harness(ScriptedModel([says("[36]"), says("[36]")]))
    end = (await h.thoughts((await turn(h, OutputFormat(OutputKind.JSON_OBJECT))).task_id))[-1]
    assert end.error_code == "invalid_output"
    assert "it is JSON but not an object" in end.observation


async def test_a_loose_format_on_a_model_that_takes_it_streams_and_is_not_checked() -> None:
    h = Harness(ScriptedModel([says("not ", "json")], NATIVE))
    handle = await turn(h, OutputFormat(OutputKind.JSON_OBJECT))
    assert await deltas(h, handle) == ["not ", "json"]
    assert (await h.thoughts(handle.task_id))[-1].event is ThoughtEvent.AGENT_END


async def test_a_structured_turn_is_remembered_as_any_other() -> None:
    h = Harness(ScriptedModel([says('{"age": 36}')], NATIVE))
    handle = await turn(h, STRICT, "Ada is 36; how old is she?")
    window = await h.short_term.window(await h.store.get_conversation(handle.conversation_id, OWNER), h.config)
    assert [m.text for m in window][-2:] == ["Ada is 36; how old is she?", '{"age": 36}']
