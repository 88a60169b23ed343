from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Path
from fastapi.responses import Response

from application.accounts.authenticate import Caller
from application.chat_turn.aggregate_turn import aggregate
from application.chat_turn.start_chat_turn import StartChatTurn
from application.chat_turn.turn import ChatRequest, TurnHandle
from application.tasks.follow_task import FollowTask
from domain.conversations.conversation import EntryPoint
from domain.ids import AppId, ConversationId, OwnerId
from interfaces.http.openapi import ERROR_RESPONSES, SSE_CONTENT
from interfaces.http.owner import current_caller, current_owner, viewer_of
from interfaces.http.provided import Provided
from interfaces.http.schemas import ChatBody, DebugChatBody, UnicodeText, frame_data, turn_result_data
from interfaces.http.sse import sse_response

router = APIRouter(responses=ERROR_RESPONSES)


@router.post(
    "/api/chat",
    response_model=None,
    responses={200: {"content": SSE_CONTENT, "description": "JSON, or with `stream: true` SSE frames"}},
)
@inject
async def chat(
    body: ChatBody,
    caller: Annotated[Caller, Depends(current_caller)],
    start: Annotated[StartChatTurn, Depends(Provided["start_turn"])],
    follow: Annotated[FollowTask, Depends(Provided["follow_task"])],
) -> dict[str, Any] | Response:
    """One chat turn of an agent's published config: `stream: true` answers SSE frames, otherwise
    one JSON object. Without `agent_id`, the default agent answers (or the conversation's own; an
    agent key's own agent). `user` names the end user the turn is for."""
    agent_id = AppId(body.agent_id) if body.agent_id else None
    return await _turn(body, caller, agent_id, EntryPoint.API, start, follow)


@router.post(
    "/api/agents/{agent_id}/debug/chat",
    response_model=None,
    responses={200: {"content": SSE_CONTENT, "description": "JSON, or with `stream: true` SSE frames"}},
)
@inject
async def debug_chat(
    agent_id: Annotated[UnicodeText, Path(min_length=1, max_length=64)],
    body: DebugChatBody,
    owner: Annotated[OwnerId, Depends(current_owner)],
    caller: Annotated[Caller, Depends(current_caller)],
    start: Annotated[StartChatTurn, Depends(Provided["start_turn"])],
    follow: Annotated[FollowTask, Depends(Provided["follow_task"])],
) -> dict[str, Any] | Response:
    """The debugger: a turn of the agent's *draft*, in debug conversations kept apart from the
    published ones. Same body and answers as `/api/chat` (`agent_id` and `version` aside)."""
    # The account key's id: its rate limits count the debugger's turns too.
    return await _turn(body, Caller(owner, key_id=caller.key_id), AppId(agent_id), EntryPoint.DEBUGGER, start,
                       follow)


async def _turn(
    body: DebugChatBody, caller: Caller, agent_id: AppId | None, entry: EntryPoint, start: StartChatTurn,
    follow: FollowTask,
) -> dict[str, Any] | Response:
    viewer = viewer_of(caller, body.user)
    request = ChatRequest(
        owner=caller.owner,
        query=body.query,
        conversation_id=ConversationId(body.conversation_id) if body.conversation_id else None,
        image_urls=tuple(body.image_urls),
        agent_id=agent_id,
        version=body.version if isinstance(body, ChatBody) else None,
        entry=entry,
        end_user=viewer.end_user,
        key_agent=caller.agent_id,
        key_id=caller.key_id,
    )
    return await answer(await start(request), body.stream, follow)


async def answer(handle: TurnHandle, stream: bool, follow: FollowTask) -> dict[str, Any] | Response:
    """A started turn's answer: SSE frames as they come, or one JSON object once it has ended."""
    if stream:
        return sse_response(follow.batches(handle.task_id), handle.task_id)
    result = await aggregate(follow(handle.task_id))
    return turn_result_data(handle, result) | {"thoughts": [frame_data(t) for t in result.thoughts]}
