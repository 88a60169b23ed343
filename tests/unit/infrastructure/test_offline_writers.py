"""The offline titler and follow-up writer (the offline scripted model's), and what the LLM ones ask."""

from __future__ import annotations

from application.ports.chat_model import ModelChunk
from domain.conversations.messages import Role
from domain.ids import MessageId
from domain.memory.window import Exchange
from infrastructure.conversations.llm_writers import (
    FOLLOW_UP_INSTRUCTIONS,
    TITLE_INSTRUCTIONS,
    LLMFollowUpWriter,
    LLMTitler,
)
from infrastructure.conversations.offline_writers import FirstWordsTitler, TemplateFollowUpWriter
from tests.fakes import T0, ScriptedModel


def exchange(query: str, answer: str = "An answer.") -> Exchange:
    return Exchange(MessageId("m1"), query, answer, T0)


async def test_the_offline_title_is_the_first_six_words_of_the_query() -> None:
    titler = FirstWordsTitler()
    assert await titler.title(exchange("How do I  bake sourdough bread at home tonight?"), "en") == (
        "How do I bake sourdough bread"
    )
    assert await titler.title(exchange("Hi"), "en") == "Hi"


async def test_the_offline_title_of_chinese_text_is_its_first_twelve_characters_without_punctuation() -> None:
    title = await FirstWordsTitler().title(exchange("请帮我规划一下五月去里斯本的周末旅行，谢谢！"), "zh")
    assert title == "请帮我规划一下五月去里斯"


async def test_the_offline_title_leaves_out_the_scripted_model_s_tool_markers() -> None:
    title = await FirstWordsTitler().title(exchange("[[tool:current_time]] what time is it now?"), "en")
    assert title == "what time is it now?"


async def test_offline_follow_ups_fill_templates_with_the_query_s_first_content_words() -> None:
    writer = TemplateFollowUpWriter()
    questions = await writer.follow_ups(exchange("What is the capital of Portugal?"), "en", 3)
    assert questions == [
        "Can you tell me more about capital Portugal?",
        "What should I know first about capital Portugal?",
        "Can you give an example of capital Portugal?",
    ]
    assert await writer.follow_ups(exchange("What is the capital of Portugal?"), "en", 3) == questions
    assert len(await writer.follow_ups(exchange("What is the capital of Portugal?"), "en", 1)) == 1


async def test_offline_follow_ups_speak_the_agent_s_language() -> None:
    questions = await TemplateFollowUpWriter().follow_ups(exchange("里斯本有什么好吃的？"), "zh", 3)
    assert questions[0] == "能再详细讲讲里斯本有什么好吃的吗？"
    assert all("里斯本有什么好吃的" in q for q in questions)


async def test_offline_follow_ups_of_a_query_of_only_small_words_take_the_answer_s_words() -> None:
    questions = await TemplateFollowUpWriter().follow_ups(exchange("how do I?", "Sourdough needs patience."), "en", 3)
    assert questions[0] == "Can you tell me more about Sourdough needs patience?"
    empty = await TemplateFollowUpWriter().follow_ups(exchange("why?", "Yes."), "en", 3)
    assert empty[0] == "Can you tell me more about Yes?"


async def test_the_llm_titler_asks_for_a_short_title_in_the_agent_s_language() -> None:
    model = ScriptedModel([[ModelChunk(text="  Lisbon "), ModelChunk(text="weekend ")]])
    title = await LLMTitler(model).title(exchange("Plan a trip to Lisbon", "Sure."), "zh")
    assert title == "Lisbon weekend"
    (messages, tools), = model.calls
    assert tools == []
    assert [m.role for m in messages] == [Role.SYSTEM, Role.USER]
    assert messages[0].text.startswith(TITLE_INSTRUCTIONS[:40])
    assert "Chinese" in messages[0].text
    assert "at most 12 characters" in messages[0].text
    assert messages[1].text == "User: Plan a trip to Lisbon\nAssistant: Sure."


async def test_the_llm_follow_up_writer_asks_for_questions_one_per_line() -> None:
    model = ScriptedModel([[ModelChunk(text="What about Porto?\n\nHow long should I stay?\n")]])
    questions = await LLMFollowUpWriter(model).follow_ups(exchange("Plan a trip to Lisbon"), "en", 3)
    assert list(questions) == ["What about Porto?", "How long should I stay?"]
    (messages, _), = model.calls
    assert messages[0].text.startswith(FOLLOW_UP_INSTRUCTIONS[:40])
    assert "write 3 short questions" in messages[0].text
    assert "English" in messages[0].text
