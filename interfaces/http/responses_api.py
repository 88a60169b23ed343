"""OpenAI's Responses API: `POST /v1/responses`, `GET /v1/responses/{id}` and its cancel.

A response is a memagent turn, as a chat completion is (`CompleteChat`): the same keys, agents as
models, conversations, memory and traces; its id is the turn's message id, and
`previous_response_id` continues that message's conversation. Every answer names the turn in the
`X-Memagent-*` headers; errors come in OpenAI's shape. Like the other /v1 routes, outside
memagent's OpenAPI document (tests/integration/test_openai_responses.py proves them with the
`openai` SDK).
"""

import time
from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse
from fastapi.sse import EventSourceResponse

from application.accounts.authenticate import Caller
from application.chat_turn.complete_chat import CompleteChat, CompletionRequest
from application.conversations.read_message import ReadMessage
from application.errors import InvalidParameter
from application.tasks.follow_task import FollowTask
from application.tasks.stop_message import StopMessage
from domain.accounts.viewers import Viewer
from domain.conversations.conversation import Message
from domain.ids import ConversationId, MessageId
from interfaces.http.openai_api import ConversationHeader, turn_headers
from interfaces.http.openai_frames import collect
from interfaces.http.owner import current_caller, current_viewer, viewer_of
from interfaces.http.provided import Provided
from interfaces.http.responses_frames import ResponseShape, response_events, stored_response, whole_response
from interfaces.http.responses_schemas import ResponsesBody
from interfaces.http.schemas import UnicodeText

router = APIRouter(include_in_schema=False)

ResponseId = Annotated[UnicodeText, Path(min_length=1, max_length=64)]


@router.post("/v1/responses", response_model=None)
@inject
async def create_response(
    body: ResponsesBody,
    caller: Annotated[Caller, Depends(current_caller)],
    complete: Annotated[CompleteChat, Depends(Provided["complete_chat"])],
    follow: Annotated[FollowTask, Depends(Provided["follow_task"])],
    conversation_header: ConversationHeader = None,
) -> JSONResponse | EventSourceResponse:
    """One turn of the agent `model` names, for the end user `user`, continuing the conversation of
    `previous_response_id` (or the one named, or the resent history's, else a new one)."""
    body.check_supported()
    viewer = viewer_of(caller, body.user)
    named = conversation_header or body.conversation_id()
    if named and body.previous_response_id:
        raise InvalidParameter("Name either the conversation or the previous response, not both: "
                               "a response continues its own conversation.", "previous_response_id")
    output = body.output()
    completion = await complete(CompletionRequest(
        owner=caller.owner, model=body.model, messages=body.completion_messages(), end_user=viewer.end_user,
        key_agent=caller.agent_id, conversation_id=ConversationId(named) if named else None, params=body.params(),
        key_id=caller.key_id, output=output, client_tools=body.client_tools(),
        after=MessageId(body.previous_response_id) if body.previous_response_id else None,
    ))
    handle = completion.handle
    shape = ResponseShape(
        handle.message_id, body.model, int(time.time()), body.previous_response_id, body.instructions,
        (body.text.format if body.text and body.text.format else {"type": "text"}), body.metadata or {},
    )
    headers = turn_headers(handle)
    if body.stream:
        events = response_events(follow(handle.task_id), shape, completion.resumed)
        return EventSourceResponse(events, headers=headers | {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    status, data = whole_response(await collect(follow(handle.task_id), completion.resumed), shape)
    if status != 200:
        # The turn is stored as failed; a client's retry would be another turn (as on /v1/chat/completions).
        return JSONResponse(data, status_code=status, headers=headers | {"x-should-retry": "false"})
    return JSONResponse(data, headers=headers)


@router.get("/v1/responses/{response_id}")
@inject
async def get_response(
    response_id: ResponseId,
    viewer: Annotated[Viewer, Depends(current_viewer)],
    read: Annotated[ReadMessage, Depends(Provided["conversations.read_message"])],
) -> JSONResponse:
    """The response as stored: its status, answer and usage (the caller's own turns only)."""
    message = await read(MessageId(response_id), viewer)
    return JSONResponse(_stored(message), headers=_message_headers(message))


@router.post("/v1/responses/{response_id}/cancel")
@inject
async def cancel_response(
    response_id: ResponseId,
    viewer: Annotated[Viewer, Depends(current_viewer)],
    stop: Annotated[StopMessage, Depends(Provided["stop_message"])],
    read: Annotated[ReadMessage, Depends(Provided["conversations.read_message"])],
) -> JSONResponse:
    """Stop the response's turn; the response as it is then (`cancelled` once stopped). One that had
    already ended otherwise is 409."""
    await stop(MessageId(response_id), viewer)
    message = await read(MessageId(response_id), viewer)
    return JSONResponse(_stored(message), headers=_message_headers(message))


def _stored(message: Message) -> dict[str, Any]:
    """The stored response; its `model` is the agent's id (the name the client used is not kept)."""
    shape = ResponseShape(message.id, message.agent_id, int(message.created_at.timestamp()))
    return stored_response(message, shape)


def _message_headers(message: Message) -> dict[str, str]:
    return {"X-Memagent-Conversation-Id": message.conversation_id, "X-Memagent-Message-Id": message.id,
            "X-Memagent-Task-Id": message.task_id}
