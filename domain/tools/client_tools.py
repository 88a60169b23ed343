"""Client tools: functions a request offers that its client runs, not memagent (docs/openai-api.md).

A request to `/v1/chat/completions` or `/v1/responses` may carry `tools`. They are offered to the
model beside the agent's own; when the model calls one, the turn *pauses*: the calls go back to the
client as the answer (`finish_reason: "tool_calls"`), and the client's next request, carrying their
results, resumes the same turn. `tool_choice` says whether the client tools may, must, or must not
be called, or which one must be, in the first model call after each request.

memagent names each call it hands a client (`client_call_id`), so a result answering one of its
own calls resumes a turn; a history whose calls memagent never made (a client's own agent loop, a
conversation from elsewhere) is part of a new turn's question instead (`EarlierRound`).

The legacy `functions` API (`ClientTools.legacy`) hands over one call per step and no id: the
client sends back the call's name and arguments. Its call is named by what the client asked (the
history it brought, its system text, its question), so the resuming request names it again
(`legacy_call_id`).
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from domain.errors import DomainError
from domain.tools.calls import parse_arguments

if TYPE_CHECKING:
    from collections.abc import Mapping

    from domain.tools.calls import ToolSpec


class ChoiceMode(enum.StrEnum):
    AUTO = "auto"  # the model decides
    NONE = "none"  # the client tools are not offered
    REQUIRED = "required"  # the model must call a tool
    NAMED = "function"  # the model must call the tool named


@dataclass(frozen=True, slots=True)
class ToolChoice:
    mode: ChoiceMode = ChoiceMode.AUTO
    name: str = ""  # the tool a NAMED choice names

    def __post_init__(self) -> None:
        if (self.mode is ChoiceMode.NAMED) != bool(self.name):
            raise DomainError("a named tool choice, and only it, names a tool")

    @property
    def forces(self) -> bool:
        """Whether the model is told which kind of call to make (the model call carries it)."""
        return self.mode in (ChoiceMode.REQUIRED, ChoiceMode.NAMED)


AUTO = ToolChoice()


@dataclass(frozen=True, slots=True)
class ClientTools:
    """The tools one request offers and its choice among them."""

    specs: tuple[ToolSpec, ...]
    choice: ToolChoice = AUTO
    legacy: bool = False  # offered as legacy `functions`: one call per step, named by legacy_call_id
    context: str = ""  # legacy: what the request brought besides its question (legacy_context)

    def __post_init__(self) -> None:
        names = [spec.name for spec in self.specs]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise DomainError(f"the tool {twice[0]!r} is offered twice")
        if self.choice.mode is ChoiceMode.NAMED and self.choice.name not in names:
            raise DomainError(f"tool_choice names {self.choice.name!r}, which is not one of the tools")
        if self.choice.forces and not self.specs:
            raise DomainError(f"tool_choice {self.choice.mode.value!r} needs tools")

    @property
    def names(self) -> frozenset[str]:
        return frozenset(spec.name for spec in self.specs)

    def allowed(self, choice: ToolChoice) -> ToolChoice:
        """`choice` where it fits these tools (a resuming request's may name another): else `auto`."""
        if choice.mode is ChoiceMode.NAMED and choice.name not in self.names:
            return AUTO
        return choice

    def offered(self, choice: ToolChoice) -> tuple[ToolSpec, ...]:
        """The client tools a model call offers under `choice`."""
        return () if choice.mode is ChoiceMode.NONE else self.specs


@dataclass(frozen=True, slots=True)
class ClientToolResult:
    """What the client's run of one call gave back."""

    call_id: str
    output: str


@dataclass(frozen=True, slots=True)
class Resumption:
    """A client's answer to a paused turn: a result for each of its calls, and the tool choice of
    the model call that follows."""

    results: tuple[ClientToolResult, ...]
    choice: ToolChoice = AUTO

    def answers(self, call_ids: tuple[str, ...]) -> bool:
        """Whether it holds exactly one result for each of `call_ids`."""
        given = [result.call_id for result in self.results]
        return len(given) == len(set(given)) and set(given) == set(call_ids)


_OURS = re.compile(r"call_[0-9a-f]{32}")


def client_call_id(unique_hex: str) -> str:
    """The id memagent gives a call of a client tool, from a fresh 32-digit hex id."""
    return f"call_{unique_hex}"


def legacy_context(fingerprint: str, system: str) -> str:
    """What a legacy request brought besides its question: its history's fingerprint
    (domain.conversations.chat_completions) and its system text, so that only a request continuing that very
    exchange names its calls alike."""
    return hashlib.sha256("\x1f".join((fingerprint, " ".join(system.split()))).encode("utf-8")).hexdigest()


def legacy_call_id(context: str, question: str, round_: int, name: str, arguments: Mapping[str, Any]) -> str:
    """The id of a legacy `functions` call: from the request's `context` (legacy_context) and
    question, how many calls the client was handed before it in that turn, and the call itself.
    Only identical requests make identical ids; each of their pauses is resumed once."""
    canonical = json.dumps(dict(arguments), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    named = "\x1f".join((context, " ".join(question.split()), str(round_), name, canonical))
    return client_call_id(hashlib.sha256(named.encode("utf-8")).hexdigest()[:32])


def is_ours(call_id: str) -> bool:
    """Whether memagent made this call id (client_call_id), rather than a client or another model."""
    return _OURS.fullmatch(call_id) is not None


@dataclass(frozen=True, slots=True)
class ClientCall:
    """A tool call as a client's history holds it: its id, name and arguments (JSON text)."""

    id: str
    name: str = ""
    arguments: str = "{}"

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as an object, as a model's own call's are read (domain.tools.calls.parse_arguments)."""
        return parse_arguments(self.arguments)


@dataclass(frozen=True, slots=True)
class EarlierRound:
    """A round of tool calls and results a client brought with its question, made elsewhere: the
    model sees it after the question, as if it had made it."""

    calls: tuple[ClientCall, ...]
    results: tuple[ClientToolResult, ...]
