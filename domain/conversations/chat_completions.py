"""An OpenAI chat-completions request read as one memagent turn (docs/ARCHITECTURE.md §3, /v1).

The server owns the conversation, so a stock client that resends its whole history still makes
one turn of one conversation:
- the *trailing run of user messages* (everything after the last assistant message) is the new
  turn: their texts joined in order (a blank line between), their image parts its images;
- system (and developer) messages are joined into one addition to the agent's preset prompt;
- the messages before the trailing run, read as (user, assistant) pairs (consecutive user messages
  joined, as for the turn), are the history the client resent: its *fingerprint* finds the
  conversation whose stored turns are those pairs (`fingerprint_of`, `extend_fingerprint`).

Text is compared with its white space collapsed, so a client that trims or re-wraps still matches.
"""

from __future__ import annotations

import enum
import hashlib
import re
from dataclasses import dataclass, replace

from domain.errors import DomainError
from domain.text import text_problem
from domain.tools.client_tools import (
    ClientCall,
    ClientToolResult,
    EarlierRound,
    is_ours,
    legacy_call_id,
    legacy_context,
)

NO_HISTORY = ""  # the fingerprint of a conversation without completed turns
JOIN = "\n\n"


class CompletionRole(enum.StrEnum):
    SYSTEM = "system"
    DEVELOPER = "developer"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"  # a client tool's result (domain.tools.client_tools)


@dataclass(frozen=True, slots=True)
class CompletionMessage:
    """`calls`: an assistant message's calls of client tools, by id; `call_id`: the call a tool
    message answers. A legacy `function_call` and `function` message have no id ("")."""

    role: CompletionRole
    text: str = ""
    image_urls: tuple[str, ...] = ()
    calls: tuple[ClientCall, ...] = ()
    call_id: str = ""

    @property
    def inside_a_turn(self) -> bool:
        """A client tool call or its result: part of one turn, not a (user, assistant) exchange."""
        return self.role is CompletionRole.TOOL or bool(self.calls)


@dataclass(frozen=True, slots=True)
class CompletionTurn:
    """What one request asks: the new turn's query and images, the system addition, and the
    history pairs the client resent (oldest first)."""

    query: str
    image_urls: tuple[str, ...]
    system: str
    history: tuple[tuple[str, str], ...]
    results: tuple[ClientToolResult, ...] = ()  # the client's tool results, which resume its paused turn
    earlier: tuple[EarlierRound, ...] = ()  # tool rounds made elsewhere, part of the question

    @property
    def resumes(self) -> bool:
        return bool(self.results)

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(self.history)


_UNEVEN_SPACE = re.compile(r"\s\s|[^\S ]|^\s|\s$")


def _normal(text: str) -> str:
    # Most texts are already even: one C-speed scan instead of splitting and joining them again.
    return text if _UNEVEN_SPACE.search(text) is None else " ".join(text.split())


def extend_fingerprint(previous: str, query: str, answer: str) -> str:
    """The fingerprint of a history one (user, assistant) pair longer."""
    pair = "\x1f".join((previous, _normal(query), _normal(answer)))
    return hashlib.sha256(pair.encode("utf-8")).hexdigest()


def fingerprint_of(pairs: tuple[tuple[str, str], ...], after: str = NO_HISTORY) -> str:
    """The fingerprint of `pairs`, after a history of fingerprint `after`."""
    fingerprint = after
    for query, answer in pairs:
        fingerprint = extend_fingerprint(fingerprint, query, answer)
    return fingerprint


IMAGE_ONLY = "(image)"  # the query of a turn that sent images and no text


def _asked(messages: list[CompletionMessage]) -> str:
    """What user messages ask, as one query: their texts joined, or IMAGE_ONLY for images alone."""
    query = JOIN.join(m.text.strip() for m in messages if m.text.strip())
    return query or (IMAGE_ONLY if any(m.image_urls for m in messages) else "")


def read_completion(messages: tuple[CompletionMessage, ...]) -> CompletionTurn:
    """The turn a request's messages ask for; `DomainError` when there is none to answer, or when a
    text cannot be stored (a NUL, half a surrogate pair)."""
    for index, message in enumerate(messages):
        problem = text_problem(message.text)
        if problem:
            raise DomainError(f"messages[{index}]: {problem}")
    system = JOIN.join(m.text.strip() for m in messages
                       if m.role in (CompletionRole.SYSTEM, CompletionRole.DEVELOPER) and m.text.strip())
    asked_at = max((i for i, m in enumerate(messages) if m.role is CompletionRole.USER), default=len(messages))
    messages = _named_legacy(messages, asked_at, system)
    results = _results(messages)
    if results and all(is_ours(r.call_id) for r in results):
        return CompletionTurn("", (), system, (), results)
    if any(is_ours(r.call_id) for r in results):
        raise DomainError("tool messages answer calls of a paused turn and others at once")
    earlier = _rounds(messages[asked_at + 1 :]) if results else ()
    spoken = _spoken(messages[: asked_at + 1] if results else messages)
    last_answer = max((i for i, m in enumerate(spoken) if m.role is CompletionRole.ASSISTANT), default=-1)
    trailing = spoken[last_answer + 1 :]
    query = _asked(trailing)
    if not query:
        raise DomainError("the messages end without a user message to answer")
    images = tuple(url for m in trailing for url in m.image_urls)
    return CompletionTurn(query, images, system, _pairs(spoken[: last_answer + 1]), earlier=earlier)


def _spoken(messages: tuple[CompletionMessage, ...]) -> list[CompletionMessage]:
    """The user and assistant messages that are no part of a tool round."""
    return [m for m in messages if m.role in (CompletionRole.USER, CompletionRole.ASSISTANT) and not m.inside_a_turn]


def _named_legacy(
    messages: tuple[CompletionMessage, ...], asked_at: int, system: str
) -> tuple[CompletionMessage, ...]:
    """Legacy `function_call`s after the question, and the `function` messages answering them, with
    the ids memagent gave those calls (legacy_call_id: from the history, system text and question
    the request brought, and the call's place)."""
    if not any(m.calls and not m.calls[0].id for m in messages[asked_at + 1 :]):
        return messages
    spoken = _spoken(messages[: asked_at + 1])
    last_answer = max((i for i, m in enumerate(spoken) if m.role is CompletionRole.ASSISTANT), default=-1)
    context = legacy_context(fingerprint_of(_pairs(spoken[: last_answer + 1])), system)
    question, handed, named = _asked(spoken[last_answer + 1 :]), 0, list(messages[: asked_at + 1])
    call_id = ""
    for message in messages[asked_at + 1 :]:
        if message.calls and not message.calls[0].id:
            call = message.calls[0]
            call_id = legacy_call_id(context, question, handed, call.name, call.parsed_arguments())
            handed += 1
            message = replace(message, calls=(replace(call, id=call_id),))
        elif message.role is CompletionRole.TOOL and not message.call_id:
            message = replace(message, call_id=call_id)
        named.append(message)
    return tuple(named)


def _results(messages: tuple[CompletionMessage, ...]) -> tuple[ClientToolResult, ...]:
    """The tool results a request ends with: every tool message after its last user message, each
    answering a call made before it there (calls and results may alternate); none when it ends
    otherwise. Without a user message they may stand alone: they answer the calls of the response
    they follow (the Responses API's `previous_response_id`)."""
    inside = [m for m in messages if m.role not in (CompletionRole.SYSTEM, CompletionRole.DEVELOPER)]
    if not inside or inside[-1].role is not CompletionRole.TOOL:
        return ()
    asked = max((i for i, m in enumerate(inside) if m.role is CompletionRole.USER), default=-1)
    called: set[str] = set()
    results: list[ClientToolResult] = []
    for message in inside[asked + 1 :]:
        if message.role is CompletionRole.TOOL:
            if (called or asked >= 0) and message.call_id not in called:
                raise DomainError(f"a tool message answers {message.call_id!r}, which no assistant message "
                                  "before it called")
            results.append(ClientToolResult(message.call_id, message.text))
        else:
            called |= {call.id for call in message.calls}
    return tuple(results)


def _rounds(after: tuple[CompletionMessage, ...]) -> tuple[EarlierRound, ...]:
    """The tool rounds after the question: each assistant message's calls with the results after it."""
    rounds: list[EarlierRound] = []
    for message in after:
        if message.calls:
            rounds.append(EarlierRound(message.calls, ()))
        elif message.role is CompletionRole.TOOL and rounds:
            last = rounds[-1]
            rounds[-1] = EarlierRound(last.calls, (*last.results, ClientToolResult(message.call_id, message.text)))
    return tuple(rounds)


def _pairs(spoken: list[CompletionMessage]) -> tuple[tuple[str, str], ...]:
    """(user, assistant) pairs: each assistant message with the user messages before it. An
    assistant message without a user one before it (a greeting) pairs with an empty query."""
    pairs, asked = [], list[CompletionMessage]()
    for message in spoken:
        if message.role is CompletionRole.USER:
            asked.append(message)
            continue
        pairs.append((_asked(asked), message.text.strip()))
        asked = []
    return tuple(pairs)


def parse_model(model: str) -> tuple[str, int | None]:
    """`NAME` or `NAME@3` (version 3 pinned)."""
    name, at, version = model.rpartition("@") if "@" in model else (model, "", "")
    if not at:
        return model, None
    if not version.isdigit() or int(version) < 1 or not name:
        raise DomainError(f"the model {model!r} pins no version: use NAME or NAME@<version number>")
    return name, int(version)
