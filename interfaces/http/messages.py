"""A message's feedback, and answering the latest message again (regenerate)."""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends
from fastapi.responses import Response

from application.accounts.authenticate import Caller
from application.chat_turn.regenerate_answer import RegenerateAnswer
from application.conversations import RateMessage
from application.tasks.follow_task import FollowTask
from domain.conversations.conversation import Rating
from domain.ids import MessageId
from interfaces.http.chat import answer
from interfaces.http.conversation_schemas import FeedbackBody, RegenerateBody
from interfaces.http.openapi import ERROR_RESPONSES, SSE_CONTENT
from interfaces.http.owner import current_caller, viewer_of
from interfaces.http.provided import Provided
from interfaces.http.schemas import UnicodeText, message_data

router = APIRouter(responses=ERROR_RESPONSES)


@router.post("/api/messages/{message_id}/feedback")
@inject
async def rate_message(
    message_id: UnicodeText,
    body: FeedbackBody,
    caller: Annotated[Caller, Depends(current_caller)],
    rate: Annotated[RateMessage, Depends(Provided["conversations.rate_message"])],
) -> dict[str, Any]:
    """Like or dislike an answer (with a note); rating again replaces it, `null` clears it."""
    rating = Rating(body.rating) if body.rating is not None else None
    rated = await rate(MessageId(message_id), viewer_of(caller, body.user), rating, body.note)
    return message_data(rated)


@router.post(
    "/api/messages/{message_id}/regenerate",
    response_model=None,
    responses={200: {"content": SSE_CONTENT, "description": "JSON, or with `stream: true` SSE frames"}},
)
@inject
async def regenerate(
    message_id: UnicodeText,
    body: RegenerateBody,
    caller: Annotated[Caller, Depends(current_caller)],
    regenerate_answer: Annotated[RegenerateAnswer, Depends(Provided["regenerate_answer"])],
    follow: Annotated[FollowTask, Depends(Provided["follow_task"])],
) -> dict[str, Any] | Response:
    """Answer the conversation's latest query again: a new message whose `parent_message_id` is
    this one. The old answer stays listed; once the new one completes, memory holds it alone.
    An older message, or one still running, is 409."""
    handle = await regenerate_answer(MessageId(message_id), viewer_of(caller, body.user), caller.key_id)
    return await answer(handle, body.stream, follow)
