"""The OpenAI-compatible API: `GET /v1/models`, `POST /v1/chat/completions` and its cancel.

Any OpenAI client gets memagent's agents with their memory, tools and traces by changing its base
URL to `…/v1` and its key to a memagent key. The server owns the conversation (see
`application/chat_turn/complete_chat.py`); every answer names it in `X-Memagent-Conversation-Id`,
with `X-Memagent-Message-Id` (also the completion's `id`) and `X-Memagent-Task-Id` (its events stay
replayable at `/api/tasks/{task_id}/events`). Errors come in OpenAI's shape (openai_errors.py).
These routes are OpenAI's API, whose spec is OpenAI's: they are left out of memagent's OpenAPI
document, and tests/integration/test_openai_api*.py prove them with the `openai` SDK itself.
"""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Header, Path
from fastapi.responses import JSONResponse
from fastapi.sse import EventSourceResponse

from application.accounts.authenticate import Caller
from application.agents.list_models import ListModels
from application.chat_turn.complete_chat import CompleteChat, Completion, CompletionRequest
from application.chat_turn.turn import TurnHandle
from application.tasks.follow_task import FollowTask
from application.tasks.stop_message import StopMessage
from domain.accounts.viewers import Viewer
from domain.conversations.conversation import MessageStatus
from domain.ids import ConversationId, MessageId
from interfaces.http.openai_frames import collect, completion_chunks, completion_of, failure_of
from interfaces.http.openai_schemas import CompletionBody
from interfaces.http.owner import current_caller, current_viewer, viewer_of
from interfaces.http.provided import Provided
from interfaces.http.schemas import UnicodeText

router = APIRouter(include_in_schema=False)

ConversationHeader = Annotated[UnicodeText | None, Header(alias="X-Memagent-Conversation-Id", max_length=64)]


def model_data(name: str, created: float) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": int(created), "owned_by": "memagent"}


@router.get("/v1/models")
@inject
async def list_models(
    caller: Annotated[Caller, Depends(current_caller)],
    models: Annotated[ListModels, Depends(Provided["agents.list_models"])],
) -> dict[str, Any]:
    """The caller's agents as models (an agent key: its own agent only)."""
    named = await models(caller.owner, caller.agent_id)
    return {"object": "list", "data": [model_data(name, agent.created_at.timestamp()) for name, agent in named]}


@router.get("/v1/models/{model:path}")
@inject
async def get_model(
    model: Annotated[UnicodeText, Path(min_length=1, max_length=300)],
    caller: Annotated[Caller, Depends(current_caller)],
    models: Annotated[ListModels, Depends(Provided["agents.list_models"])],
) -> dict[str, Any]:
    """One model; `:path`, since an agent's name may hold a `/` (the SDK sends it as `%2F`)."""
    agent, _ = await models.resolve(caller.owner, caller.agent_id, model)
    return model_data(model, agent.created_at.timestamp())


def turn_headers(handle: TurnHandle) -> dict[str, str]:
    return {"X-Memagent-Conversation-Id": handle.conversation_id, "X-Memagent-Message-Id": handle.message_id,
            "X-Memagent-Task-Id": handle.task_id}


@router.post("/v1/chat/completions", response_model=None)
@inject
async def chat_completions(
    body: CompletionBody,
    caller: Annotated[Caller, Depends(current_caller)],
    complete: Annotated[CompleteChat, Depends(Provided["complete_chat"])],
    follow: Annotated[FollowTask, Depends(Provided["follow_task"])],
    conversation_header: ConversationHeader = None,
) -> JSONResponse | EventSourceResponse:
    """One turn of the agent `model` names, for the end user `user`, in the conversation the
    header, `metadata.conversation_id` or the resent history names (else a new one)."""
    body.check_supported()
    viewer = viewer_of(caller, body.user)
    named = conversation_header or body.conversation()
    completion = await complete(CompletionRequest(
        owner=caller.owner, model=body.model, messages=body.completion_messages(), end_user=viewer.end_user,
        key_agent=caller.agent_id, conversation_id=ConversationId(named) if named else None, params=body.params(),
        key_id=caller.key_id, output=body.output(), client_tools=body.client_tools(),
    ))
    handle = completion.handle
    headers = turn_headers(handle)
    if body.stream:
        include_usage = body.stream_options is not None and body.stream_options.include_usage
        chunks = completion_chunks(follow(handle.task_id), handle, body.model, include_usage, completion.resumed,
                                   body.legacy)
        return EventSourceResponse(chunks, headers=headers | {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    return await whole_answer(follow, completion, body.model, headers, body.legacy)


async def whole_answer(
    follow: FollowTask, completion: Completion, model: str, headers: dict[str, str], legacy: bool
) -> JSONResponse:
    """`stream: false`: the completion once the turn has ended or paused for the client's tools
    (`legacy`: as a `function_call`), or the error it ended with."""
    handle = completion.handle
    collected = await collect(follow(handle.task_id), completion.resumed)
    failure = failure_of(collected)
    if failure is not None:
        # The turn is stored (as `error`/`timeout`) and its model calls were retried already: a
        # client's retry would be a new turn, so the SDK is told not to make one by itself.
        status, error = failure
        return JSONResponse(error, status_code=status, headers=headers | {"x-should-retry": "false"})
    return JSONResponse(completion_of(collected, handle, model, legacy), headers=headers)


@router.post("/v1/chat/completions/{completion_id}/cancel")
@inject
async def cancel_completion(
    completion_id: Annotated[UnicodeText, Path(min_length=1, max_length=64)],
    viewer: Annotated[Viewer, Depends(current_viewer)],
    stop: Annotated[StopMessage, Depends(Provided["stop_message"])],
) -> dict[str, Any]:
    """Stop the completion's turn: `stopped`, or `stop requested` when it had not ended within a few
    seconds; one that had already ended otherwise is 409."""
    status, task_id = await stop(MessageId(completion_id), viewer)
    result = "stopped" if status is MessageStatus.STOP else "stop requested"
    return {"id": completion_id, "object": "chat.completion.cancel", "task_id": task_id, "result": result,
            "status": status.value}
