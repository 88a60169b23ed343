"""`GET /api/conversations/{id}/usage`: what the conversation's model calls cost, by purpose."""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends

from application.model_calls.conversation_usage import ConversationUsage, ReadConversationUsage
from domain.accounts.viewers import Viewer
from domain.billing.model_calls import PurposeUsage
from domain.ids import ConversationId
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import current_viewer
from interfaces.http.provided import Provided
from interfaces.http.schemas import UnicodeText

router = APIRouter(responses=ERROR_RESPONSES, tags=["conversations"])


@router.get("/api/conversations/{conversation_id}/usage")
@inject
async def conversation_usage(
    conversation_id: UnicodeText,
    viewer: Annotated[Viewer, Depends(current_viewer)],
    read: Annotated[ReadConversationUsage, Depends(Provided["model_calls.read_usage"])],
) -> dict[str, Any]:
    """The conversation's model calls from the ledger: its turns' own (`chat`), the rest (`upkeep`:
    summaries, entities, titles, follow-up questions, embeddings), both in `total`, and each purpose.
    `estimated` counts the calls priced on tokens counted locally (the server reported none)."""
    return usage_data(await read(ConversationId(conversation_id), viewer))


def usage_data(usage: ConversationUsage) -> dict[str, Any]:
    return {
        "conversation_id": usage.conversation_id,
        "chat": figures(usage.chat),
        "upkeep": figures(usage.upkeep),
        "total": figures(usage.total),
        "purposes": {p.purpose: figures(p) for p in usage.purposes},
    }


def figures(usage: PurposeUsage) -> dict[str, Any]:
    return {
        "calls": usage.calls, "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
        "tokens": usage.tokens, "cost": usage.cost, "estimated": usage.estimated,
    }
