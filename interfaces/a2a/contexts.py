"""Who calls and which turn a message starts, for the A2A SDK's request handler.

`CallerContexts` turns the HTTP request into the SDK's call context: the caller the key gate found
(interfaces/http/key_gate.py) and the agent of the path. Tasks are kept per account and agent key,
so nobody else's `tasks/get` or `tasks/cancel` finds them. `TurnContexts` decides, before the SDK
makes the task, which agent and conversation the message's turn runs in: its `contextId` is the
conversation (application/chat_turn/context_conversation.py), and a message's `metadata.user`
names the end user, as `user` does on `/v1`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from a2a.auth.user import User
from a2a.server.agent_execution import RequestContext, RequestContextBuilder
from a2a.server.routes import DefaultServerCallContextBuilder
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict

from application.errors import ApplicationError, InvalidInput
from interfaces.http.key_gate import CALLER_STATE
from interfaces.http.owner import viewer_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from a2a.server.context import ServerCallContext
    from a2a.types import SendMessageRequest, Task
    from starlette.requests import Request

    from application.accounts.authenticate import Caller
    from application.agents.list_models import ListModels
    from application.chat_turn.context_conversation import ContextConversation
    from domain.accounts.viewers import Viewer
    from domain.ids import AppId, ConversationId

AGENT = "agent"  # the path parameter naming the agent, as /v1/models names it
PLAN = "memagent_turn"  # the call context's state key of a message's TurnPlan


@dataclass(frozen=True, slots=True)
class TurnPlan:
    caller: Caller
    viewer: Viewer
    agent_id: AppId
    version: int | None
    conversation_id: ConversationId
    new_conversation: bool


class _KeyHolder(User):
    """The SDK's user: tasks are scoped by `user_name`, the account and, for an agent key, its agent."""

    def __init__(self, caller: Caller) -> None:
        self._name = f"{caller.owner}/{caller.agent_id or ''}"

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def user_name(self) -> str:
        return self._name


class CallerContexts(DefaultServerCallContextBuilder):
    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        # The SDK keeps this context with the task for its lifetime, and reads its headers (the A2A
        # version): all but the raw key.
        context.state.get("headers", {}).pop("authorization", None)
        context.state[CALLER_STATE] = request.scope["state"][CALLER_STATE]
        context.state[AGENT] = request.path_params[AGENT]
        return context

    def build_user(self, request: Request) -> User:
        return _KeyHolder(request.scope["state"][CALLER_STATE])


class TurnContexts(RequestContextBuilder):
    def __init__(self, models: Callable[[], ListModels], conversations: Callable[[], ContextConversation]) -> None:
        self._models = models
        self._conversations = conversations

    async def build(
        self, context: ServerCallContext, params: SendMessageRequest | None = None, task_id: str | None = None,
        context_id: str | None = None, task: Task | None = None,
    ) -> RequestContext:
        if params is not None and task_id is None:
            try:
                plan = await self._plan(context, params, context_id)
            except ApplicationError as refused:  # an unknown agent, a bad end user: the client's to fix
                raise InvalidParamsError(message=refused.message) from refused
            context.state[PLAN] = plan
            context_id = plan.conversation_id
        return RequestContext(context, params, task_id, context_id, task)

    async def _plan(self, context: ServerCallContext, params: SendMessageRequest, context_id: str | None) -> TurnPlan:
        caller: Caller = context.state[CALLER_STATE]
        viewer = viewer_of(caller, _end_user(params))
        agent_id, version = await self._models().find(caller.owner, caller.agent_id, context.state[AGENT])
        choice = await self._conversations()(viewer, agent_id, context_id)
        return TurnPlan(caller, viewer, agent_id, version, choice.conversation_id, choice.new)


def _end_user(params: SendMessageRequest) -> str | None:
    """`metadata.user` of the message, or of the request."""
    for holder in (params.message, params):
        if holder.HasField("metadata"):
            user = MessageToDict(holder.metadata).get("user")
            if user is not None and not isinstance(user, str):
                raise InvalidInput("metadata.user must be a string naming the end user.")
            if user:
                return str(user)
    return None

