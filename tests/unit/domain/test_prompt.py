"""Prompt assembly: system prompt → history pairs → the current user message."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.agents.config import AgentConfig
from domain.agents.prompt import (
    PLATFORM_RULES,
    PLATFORM_RULES_BY_LANGUAGE,
    PromptMemory,
    assemble_prompt,
    system_text,
)
from domain.conversations.messages import ImageBlock, Msg, Role, TextBlock, text_msg
from domain.errors import DomainError, MalformedHistory
from domain.ids import AppId, MessageId
from domain.memory.entities import Entity

AT = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
PRESET = "You are Captain Memo, a terse travel agent."
CONFIG = AgentConfig(AppId("app-1"), preset_prompt=PRESET)
IMAGES = ("https://example.com/a.png", "https://example.com/b.jpg")


def entity(kind: str, value: str) -> Entity:
    return Entity(kind, value, 0.9, MessageId("m1"), AT)


FULL_MEMORY = PromptMemory(
    summary="The user is planning a trip to Lisbon.",
    archive=("They compared hotel prices.", "They chose a flight on Friday."),
    entities=(entity("destination", "Lisbon"), entity("date", "the day after tomorrow")),
)


def history(*pairs: tuple[str, str]) -> list[Msg]:
    out: list[Msg] = []
    for i, (q, a) in enumerate(pairs):
        out += [text_msg(f"h{i}q", Role.USER, q, AT), text_msg(f"h{i}a", Role.ASSISTANT, a, AT)]
    return out


def assemble(
    hist: list[Msg] | None = None,
    memory: PromptMemory = FULL_MEMORY,
    images: tuple[str, ...] = (),
    accepts_images: bool = False,
    config: AgentConfig = CONFIG,
) -> list[Msg]:
    return assemble_prompt(
        config, memory, hist or [], "What should I pack?", images,
        accepts_images=accepts_images, message_id="msg-9", at=AT,
    )


def test_prompt_is_system_then_history_pairs_then_the_current_user_message() -> None:
    hist = history(("Hi", "Hello!"), ("Where to?", "Lisbon."))
    prompt = assemble(hist)
    assert [m.role for m in prompt] == [Role.SYSTEM, *[Role.USER, Role.ASSISTANT] * 2, Role.USER]
    assert prompt[1:-1] == hist
    assert prompt[-1].text == "What should I pack?"


def test_prompt_without_history_is_system_then_user() -> None:
    prompt = assemble([])
    assert [m.role for m in prompt] == [Role.SYSTEM, Role.USER]
    assert prompt[0].id != prompt[1].id
    assert prompt[0].created_at == prompt[1].created_at == AT


def test_system_message_carries_the_system_text() -> None:
    prompt = assemble()
    assert prompt[0].text == system_text(CONFIG, FULL_MEMORY)


def test_system_text_holds_rules_preset_summary_archive_and_entities_in_that_order() -> None:
    text = system_text(CONFIG, FULL_MEMORY)
    pieces = [
        PLATFORM_RULES, PRESET, "The user is planning a trip to Lisbon.",
        "They compared hotel prices.", "They chose a flight on Friday.",
        "destination", "the day after tomorrow",
    ]
    positions = [text.find(p) for p in pieces]
    assert -1 not in positions, dict(zip(pieces, positions, strict=True))
    assert positions == sorted(positions)


def test_each_entity_reaches_the_system_text_with_its_type_and_value() -> None:
    text = system_text(CONFIG, FULL_MEMORY)
    assert "destination: Lisbon" in text
    assert "date: the day after tomorrow" in text


def test_system_text_without_memory_is_only_the_rules_and_the_preset_prompt() -> None:
    assert system_text(CONFIG, PromptMemory()) == f"{PLATFORM_RULES}\n\n{PRESET}"


def test_blank_summary_is_left_out() -> None:
    assert system_text(CONFIG, PromptMemory(summary="  \n ")) == system_text(CONFIG, PromptMemory())


def test_empty_preset_prompt_is_left_out() -> None:
    config = AgentConfig(AppId("app-1"), preset_prompt="   ")
    assert system_text(config, PromptMemory()) == PLATFORM_RULES


@pytest.mark.parametrize(
    "memory",
    [
        PromptMemory(summary="Only a summary."),
        PromptMemory(archive=("Only an archive entry.",)),
        PromptMemory(entities=(entity("city", "Oslo"),)),
    ],
)
def test_each_memory_section_appears_alone_when_only_it_is_given(memory: PromptMemory) -> None:
    text = system_text(CONFIG, memory)
    base = system_text(CONFIG, PromptMemory())
    assert text.startswith(base + "\n\n")
    extra = text[len(base) + 2 :]
    assert "\n\n" not in extra  # exactly one section was added
    for other in ("Only a summary.", "Only an archive entry.", "Oslo"):
        assert (other in extra) is (other in str(memory))


def test_images_become_image_blocks_after_the_text_when_the_model_accepts_images() -> None:
    user = assemble(images=IMAGES, accepts_images=True)[-1]
    assert user.content == (TextBlock("What should I pack?"), ImageBlock(IMAGES[0]), ImageBlock(IMAGES[1]))


def test_images_are_left_out_when_the_model_does_not_accept_them() -> None:
    user = assemble(images=IMAGES, accepts_images=False)[-1]
    assert user.content == (TextBlock("What should I pack?"),)


def test_no_images_means_only_text_even_for_a_model_that_accepts_them() -> None:
    assert assemble(images=(), accepts_images=True)[-1].content == (TextBlock("What should I pack?"),)


@pytest.mark.parametrize(
    "bad",
    [
        [text_msg("a", Role.USER, "lonely question", AT)],
        [text_msg("a", Role.ASSISTANT, "answer", AT), text_msg("b", Role.USER, "question", AT)],
        [text_msg("a", Role.USER, "q", AT), text_msg("b", Role.TOOL, "tool output", AT)],
    ],
)
def test_malformed_history_raises_instead_of_being_sent(bad: list[Msg]) -> None:
    with pytest.raises(MalformedHistory):
        assemble(bad)


def test_an_agent_in_chinese_gets_the_chinese_platform_rules() -> None:
    config = AgentConfig(AppId("app-1"), preset_prompt="你是旅行助手。", language="zh")
    text = system_text(config, PromptMemory())
    assert text.startswith(PLATFORM_RULES_BY_LANGUAGE["zh"])
    assert "工具" in text
    assert "记忆" in text
    assert text.endswith("你是旅行助手。")


def test_an_unknown_language_is_refused_by_the_config() -> None:
    with pytest.raises(DomainError, match="language"):
        AgentConfig(AppId("app-1"), language="fr")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_platform_rules_cover_tools_memory_citations_and_concision(language: str) -> None:
    rules = PLATFORM_RULES_BY_LANGUAGE[language]
    topics = {
        "en": ("task", "tool", "arguments", "memory", "verbatim", "cite", "concisely"),
        "zh": ("任务", "工具", "参数", "记忆", "原样", "出处", "简洁"),
    }[language]
    assert all(topic in rules for topic in topics), rules


def test_the_prompt_snapshot_opens_with_the_platform_rules_then_the_preset() -> None:
    [system, user] = assemble_prompt(
        CONFIG, PromptMemory(), [], "hi", [], accepts_images=False, message_id="m1", at=AT
    )
    assert system.text.startswith(PLATFORM_RULES + "\n\n" + PRESET)
    assert user.text == "hi"
