from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Path

from application.conversations.suggest_follow_ups import SuggestFollowUps
from domain.accounts.viewers import Viewer
from domain.ids import MessageId
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import current_viewer
from interfaces.http.provided import Provided
from interfaces.http.schemas import UnicodeText

router = APIRouter(responses=ERROR_RESPONSES)


@router.get("/api/messages/{message_id}/suggested")
@inject
async def suggested_questions(
    message_id: Annotated[UnicodeText, Path(min_length=1, max_length=64)],
    viewer: Annotated[Viewer, Depends(current_viewer)],
    suggest: Annotated[SuggestFollowUps, Depends(Provided["writers.suggest_follow_ups"])],
) -> dict[str, Any]:
    """Up to 3 questions the end user might ask after this answer: made once, then cached. 409 when
    the message is not a completed turn, or its agent's config (the version it ran) does not have
    `suggested_questions_after_answer`."""
    return {"data": list(await suggest(MessageId(message_id), viewer))}
