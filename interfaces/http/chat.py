from typing import Annotated, Any

from dependency_injector.wiring import Provide, inject
from fastapi import APIRouter, Depends
from fastapi.responses import Response

from application.chat_turn.aggregate_turn import aggregate
from application.chat_turn.start_chat_turn import StartChatTurn
from application.chat_turn.turn import ChatRequest
from application.tasks.follow_task import FollowTask
from domain.ids import ConversationId, OwnerId
from interfaces.http.owner import current_owner
from interfaces.http.schemas import ChatBody, frame_data, turn_result_data
from interfaces.http.sse import sse_response

router = APIRouter()


@router.post("/api/chat", response_model=None)
@inject
async def chat(
    body: ChatBody,
    owner: Annotated[OwnerId, Depends(current_owner)],
    start: Annotated[StartChatTurn, Depends(Provide["start_turn"])],
    follow: Annotated[FollowTask, Depends(Provide["follow_task"])],
) -> dict[str, Any] | Response:
    """One chat turn: `stream: true` answers SSE frames, otherwise one JSON object."""
    request = ChatRequest(
        owner=owner,
        query=body.query,
        conversation_id=ConversationId(body.conversation_id) if body.conversation_id else None,
        image_urls=tuple(body.image_urls),
    )
    handle = await start(request)
    if body.stream:
        return sse_response(follow(handle.task_id), handle.task_id)
    result = await aggregate(follow(handle.task_id))
    return turn_result_data(handle, result) | {"thoughts": [frame_data(t) for t in result.thoughts]}
