"""`GET /api/agents/{id}/parameters`: what a front end shows before the first turn.

For the agent's owner (an account key) and for a key bound to that agent, with or without `user`.

No `from __future__ import annotations`: dependency_injector's wiring reads `Provide[...]` from the
evaluated annotations, and would leave string ones unwired.
"""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Path

from application.accounts.authenticate import Caller
from application.agents.read_parameters import ReadParameters
from domain.ids import AppId
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import EndUser, current_caller, viewer_of
from interfaces.http.provided import Provided
from interfaces.http.schemas import UnicodeText

router = APIRouter(responses=ERROR_RESPONSES, tags=["agents"])

AgentPath = Annotated[UnicodeText, Path(min_length=1, max_length=64)]


@router.get("/api/agents/{agent_id}/parameters")
@inject
async def agent_parameters(
    agent_id: AgentPath, caller: Annotated[Caller, Depends(current_caller)],
    read: Annotated[ReadParameters, Depends(Provided["agents.read_parameters"])],
    user: EndUser | None = None,
) -> dict[str, Any]:
    """Name, opening statement, suggested questions, whether images are taken, whether follow-up
    questions come after answers: those of the active published version (none yet: 409 `not_published`)."""
    if user is not None:
        viewer_of(caller, user)  # checked like everywhere else, though the parameters are the same for all
    found = await read(AppId(agent_id), caller.owner, caller.agent_id)
    return {
        "agent_id": found.agent_id,
        "name": found.name,
        "version": found.version,
        "opening_statement": found.opening_statement,
        "suggested_questions": list(found.suggested_questions),
        "accepts_images": found.accepts_images,
        "suggested_questions_after_answer": found.suggested_questions_after_answer,
    }
