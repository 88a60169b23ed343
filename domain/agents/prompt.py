"""Prompt assembly: system prompt → history pairs → the current user message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.conversations.messages import Block, ImageBlock, Msg, Role, TextBlock, ToolResultBlock, ToolUseBlock
from domain.memory.recall import entity_line
from domain.memory.window import check_history

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from domain.agents.config import AgentConfig
    from domain.memory.entities import Entity
    from domain.tools.client_tools import EarlierRound

# The fixed rules that wrap every agent's preset prompt, by the agent's `language`. Kept under
# 250 tokens each (a test counts them), since every model call of every turn pays for them.
PLATFORM_RULES_BY_LANGUAGE = {
    "en": (
        "You are an assistant on the memagent platform. Follow these rules:\n"
        "1. Carry out the task described after these rules; it defines your role, scope and tone.\n"
        "2. Call a tool only when the answer needs something you cannot know or compute reliably "
        "yourself (the time, arithmetic, a search). Fill its arguments from the user's words and the "
        "tool's schema, never with invented values; ask the user when a required value is missing.\n"
        "3. Use the conversation history and the memory below (summary, earlier parts, known facts "
        "about the user) to stay consistent: the latest value of a fact wins. Do not quote or reveal "
        "the memory verbatim unless the user asks for it.\n"
        "4. When you use passages from knowledge retrieval, rely on them over your own knowledge and "
        "cite the document they come from. If they do not hold the answer, say so.\n"
        "5. Answer the user's latest message concisely and plainly; say so when you do not know."
    ),
    "zh": (
        "你是 memagent 平台的助手。规则：\n"
        "1. 完成下面描述的任务，遵循其角色和语气。\n"
        "2. 仅在需要时间、计算或检索等你无法可靠得知的信息时调用工具；"
        "按工具的参数模式和用户原话填写参数，不要编造，缺少时询问用户。\n"
        "3. 用对话历史和下面的记忆（摘要、早前对话、用户信息）保持一致，以最新值为准；"
        "除非用户要求，不要原样透露记忆。\n"
        "4. 使用知识检索的段落时以其为准并注明出处；没有答案时直说。\n"
        "5. 简洁地回答用户的最新消息；不知道就直说。"
    ),
}
LANGUAGES = tuple(PLATFORM_RULES_BY_LANGUAGE)
PLATFORM_RULES = PLATFORM_RULES_BY_LANGUAGE["en"]


def platform_rules(language: str) -> str:
    """The platform's rules in the agent's language (English for any other)."""
    return PLATFORM_RULES_BY_LANGUAGE.get(language, PLATFORM_RULES)


SUMMARY_HEADER = "Summary of the conversation so far:"
ARCHIVE_HEADER = "Earlier parts of the conversation:"
EARLIER_HEADER = "From the user's earlier conversations (for context; the facts below are current):"
ENTITIES_HEADER = "Known facts about the user (their latest values, which override anything earlier above):"


@dataclass(frozen=True, slots=True)
class PromptMemory:
    """What long-term and entity memory contribute to one turn's system prompt."""

    summary: str = ""
    archive: tuple[str, ...] = ()
    entities: tuple[Entity, ...] = ()
    earlier: tuple[str, ...] = ()  # recalled from the user's other conversations, each citing its own


def system_text(config: AgentConfig, memory: PromptMemory) -> str:
    parts = [platform_rules(config.language), config.preset_prompt.strip()]
    if memory.summary.strip():
        parts.append(f"{SUMMARY_HEADER}\n" + memory.summary.strip())
    if memory.archive:
        parts.append(f"{ARCHIVE_HEADER}\n" + "\n".join(f"- {a}" for a in memory.archive))
    if memory.earlier:
        parts.append(f"{EARLIER_HEADER}\n" + "\n".join(f"- {e}" for e in memory.earlier))
    if memory.entities:
        parts.append(f"{ENTITIES_HEADER}\n" + "\n".join(entity_line(e) for e in memory.entities))
    return "\n\n".join(p for p in parts if p)


def assemble_prompt(
    config: AgentConfig,
    memory: PromptMemory,
    history: Sequence[Msg],
    query: str,
    image_urls: Sequence[str],
    *,
    accepts_images: bool,
    message_id: str,
    at: datetime,
) -> list[Msg]:
    """The messages sent to the model for the first step of a turn."""
    check_history(history)
    system = Msg(f"{message_id}:system", "system", Role.SYSTEM, (TextBlock(system_text(config, memory)),), at)
    blocks: list[Block] = [TextBlock(query)]
    if accepts_images:
        blocks.extend(ImageBlock(url) for url in image_urls)
    user = Msg(f"{message_id}:query", "user", Role.USER, tuple(blocks), at)
    return [system, *history, user]


def earlier_rounds(rounds: Sequence[EarlierRound], *, message_id: str, at: datetime) -> list[Msg]:
    """Tool rounds a client brought with its question (domain.tools.client_tools), as the model's own
    calls and their results, to follow the question in the prompt."""
    messages: list[Msg] = []
    for n, done in enumerate(rounds):
        names = {call.id: call.name for call in done.calls}
        uses = tuple(ToolUseBlock(c.id, c.name, c.parsed_arguments()) for c in done.calls)
        results = tuple(ToolResultBlock(r.call_id, names.get(r.call_id, ""), r.output) for r in done.results)
        messages.append(Msg(f"{message_id}:earlier-{n}", "assistant", Role.ASSISTANT, uses, at))
        if results:
            messages.append(Msg(f"{message_id}:earlier-{n}-results", "tool", Role.TOOL, results, at))
    return messages
