"""CompleteChat: one OpenAI chat-completions request as one memagent turn (`/v1/chat/completions`).

The request's messages are read by `domain.conversations.chat_completions`: the trailing user messages are the
turn, system messages add to the agent's prompt for this turn, and the earlier (user, assistant)
pairs find the conversation. The conversation is, in this order: the one of the message it follows
(the Responses API's `previous_response_id`); the one the client names; the end user's conversation
of that agent whose completed turns are the pairs it resent; a new one. Then the turn starts
exactly as `/api/chat` starts it (StartChatTurn). A request whose messages end with the results of
the client's own tools resumes the turn that paused for them instead (ResumeTurn).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from application.chat_turn.turn import ChatRequest, TurnHandle
from application.conversations.visibility import visible_message
from application.errors import InvalidParameter
from application.ports.conversation_reader import ConversationReader
from application.ports.message_reader import MessageReader
from domain.accounts.viewers import ACCOUNT_ITSELF, Viewer
from domain.conversations.chat_completions import CompletionMessage, CompletionTurn, read_completion
from domain.conversations.conversation import EntryPoint
from domain.conversations.structured_output import OutputKind
from domain.errors import DomainError
from domain.tools.client_tools import AUTO, ClientTools, Resumption, legacy_context

if TYPE_CHECKING:
    from application.agents.list_models import ListModels
    from application.chat_turn.resume_turn import ResumeTurn
    from application.chat_turn.start_chat_turn import StartChatTurn
    from application.ports.schema_check import SchemaCheck
    from domain.agents.config import ModelParams
    from domain.conversations.structured_output import OutputFormat
    from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId


class _Store(ConversationReader, MessageReader, Protocol):
    """The record a request's conversation is found in: by a message it follows, or by its history."""


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    owner: OwnerId
    model: str
    messages: tuple[CompletionMessage, ...]
    end_user: EndUserId | None = None
    key_agent: AppId | None = None
    conversation_id: ConversationId | None = None  # named by the client (header or metadata)
    params: ModelParams | None = None
    key_id: str | None = None  # the API key's id, for its rate limits
    output: OutputFormat | None = None  # `response_format`: the structured output the answer must be
    after: MessageId | None = None  # a message whose conversation the turn continues (`previous_response_id`)
    client_tools: ClientTools | None = None  # `tools` and `tool_choice`: the client's own (domain.tools.client_tools)


@dataclass(frozen=True, slots=True)
class Completion:
    """The turn that answers a request; `resumed`: the calls of the pause it resumed, whose events
    after that pause are the answer (none: a new turn, answered from its start)."""

    handle: TurnHandle
    resumed: tuple[str, ...] = ()


class CompleteChat:
    def __init__(
        self, models: ListModels, store: _Store, start: StartChatTurn, schemas: SchemaCheck, resume: ResumeTurn
    ) -> None:
        self._models = models
        self._store = store
        self._start = start
        self._schemas = schemas
        self._resume = resume

    async def __call__(self, request: CompletionRequest) -> Completion:
        try:
            turn = read_completion(request.messages)
        except DomainError as bad:
            raise InvalidParameter(f"messages: {bad}.", "messages") from bad
        if turn.resumes:
            choice = request.client_tools.choice if request.client_tools is not None else AUTO
            viewer = Viewer(request.owner, request.end_user, request.key_agent)
            handle, resumed = await self._resume(viewer, request.model, Resumption(turn.results, choice))
            return Completion(handle, resumed)
        return Completion(await self._start_turn(request, turn))

    async def _start_turn(self, request: CompletionRequest, turn: CompletionTurn) -> TurnHandle:
        self._check_schema(request.output)
        self._check_tools(request.client_tools)
        agent_id, version = await self._models.find(request.owner, request.key_agent, request.model)
        conversation = request.conversation_id
        if request.after is not None:
            viewer = Viewer(request.owner, request.end_user, request.key_agent)
            conversation = (await visible_message(self._store, request.after, viewer)).conversation_id
        if conversation is None and turn.history:
            speaker = request.end_user if request.end_user is not None else ACCOUNT_ITSELF
            conversation = await self._store.conversation_with_history(
                request.owner, speaker, agent_id, turn.fingerprint
            )
        return await self._start(ChatRequest(
            owner=request.owner, query=turn.query, conversation_id=conversation, image_urls=turn.image_urls,
            agent_id=agent_id, version=version, entry=EntryPoint.OPENAI, end_user=request.end_user,
            key_agent=request.key_agent, model_params=request.params, system=turn.system, key_id=request.key_id,
            # A history no conversation holds (edited, trimmed, from elsewhere): the new conversation
            # continues it, so that the client's next request, resending it, finds this one.
            history_prefix=turn.fingerprint if conversation is None else "", output=request.output,
            client_tools=_with_context(request.client_tools, turn), earlier=turn.earlier,
        ))

    def _check_tools(self, tools: ClientTools | None) -> None:
        """A tool whose parameters are no JSON Schema would make the model's server refuse the turn."""
        for index, spec in enumerate(tools.specs if tools is not None else ()):
            problem = self._schemas.schema_problem(spec.parameters)
            if problem is not None:
                raise InvalidParameter(f"tools[{index}]: its parameters are not a JSON Schema: {problem}.",
                                       f"tools[{index}]")

    def _check_schema(self, output: OutputFormat | None) -> None:
        if output is None or output.kind is not OutputKind.JSON_SCHEMA:
            return
        problem = self._schemas.schema_problem(output.schema)
        if problem is not None:
            raise InvalidParameter(f"response_format.json_schema.schema is not a JSON Schema: {problem}.",
                                   "response_format")


def _with_context(tools: ClientTools | None, turn: CompletionTurn) -> ClientTools | None:
    """Legacy functions name their calls by what the request brought too (legacy_call_id)."""
    if tools is None or not tools.legacy:
        return tools
    return replace(tools, context=legacy_context(turn.fingerprint, turn.system))
