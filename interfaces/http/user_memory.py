"""An end user's memory over HTTP: their facts with history and provenance, corrections, search
across their conversations, and "forget me".

`{user}` is the end user (URL-encoded), or `me`: the caller's own end user (the account itself with
an account key, or the local owner in single-user mode; an agent key's `?user=`). An account key
reaches any end user of the account; an agent key only the end user it acts for (`?user=`), and
another is 403. `?agent_id=` names an agent's own facts (`memory.user_scope: "agent"`); without it,
the facts the account's agents share. An agent key's search covers its own agent's conversations
only, as the conversations API shows it no other.
"""

from dataclasses import asdict, replace
from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from application.accounts.authenticate import Caller
from application.conversations.forget_user import ForgetUser
from application.errors import Forbidden, InvalidInput
from application.memory.user_memory import MAX_LIMIT, MAX_QUERY, SearchHit, UserMemory, UserMemoryView
from domain.accounts.viewers import ACCOUNT_ITSELF, MAX_END_USER_CHARS, RESERVED_END_USER, check_end_user
from domain.errors import DomainError
from domain.ids import AppId, EndUserId, OwnerId
from domain.memory.entities import MAX_ENTITY_TYPE, Entity
from domain.memory.user_facts import FACT_TYPE, FactHolder
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import EndUser, current_caller
from interfaces.http.provided import Provided
from interfaces.http.schemas import SomeText, UnicodeText

router = APIRouter(responses=ERROR_RESPONSES, tags=["user memory"])

ME = RESERVED_END_USER
UserPath = Annotated[UnicodeText, Path(
    min_length=1, max_length=MAX_END_USER_CHARS,
    description="The end user (URL-encoded), or `me` for the caller's own.",
)]
FactType = Annotated[str, Path(pattern=f"^{FACT_TYPE.pattern}$", max_length=MAX_ENTITY_TYPE,
                               description="e.g. name, city, diet")]
AgentFilter = Annotated[UnicodeText | None, Query(
    min_length=1, max_length=64, description="An agent's own facts (memory.user_scope \"agent\"); else the shared.",
)]


class FactBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    value: SomeText = Field(min_length=1, description="The fact's value; at most 2 KiB (UTF-8).")
    confidence: float = Field(1.0, ge=0.0, le=1.0, description="Below the threshold it never reaches the prompt.")


def _end_user(raw: str) -> EndUserId:
    try:
        return check_end_user(raw)
    except DomainError as bad:
        raise InvalidInput(f"{bad}.") from bad


def reached_user(caller: Caller, user: str, acting_for: str | None) -> tuple[OwnerId, EndUserId]:
    """The account and end user a request reaches, or Forbidden."""
    if caller.agent_id is None:
        return caller.owner, ACCOUNT_ITSELF if user == ME else _end_user(user)
    if acting_for is None:
        raise Forbidden("An agent key acts for one end user: name it in the query parameter `?user=`.")
    mine = _end_user(acting_for)
    if user != ME and _end_user(user) != mine:
        raise Forbidden("This agent key acts for another end user: it reaches only the memory of `?user=`.")
    return caller.owner, mine


def holder_of(caller: Caller, user: str, acting_for: str | None, agent_id: str | None) -> FactHolder:
    owner, end_user = reached_user(caller, user, acting_for)
    if caller.agent_id is not None and agent_id is not None and agent_id != caller.agent_id:
        raise Forbidden(f"This key is bound to agent {caller.agent_id!r}: it reaches that agent's facts only.")
    return FactHolder(owner, end_user, AppId(agent_id) if agent_id else None)


def searched_holder(caller: Caller, user: str, acting_for: str | None, agent_id: str | None) -> FactHolder:
    """Whose conversations a search covers: an agent key's, its agent's only (another's are 404 to it)."""
    holder = holder_of(caller, user, acting_for, agent_id)
    return holder if caller.agent_id is None else replace(holder, agent_id=caller.agent_id)


def fact_data(entity: Entity, min_confidence: float) -> dict[str, Any]:
    return {
        "type": entity.type,
        "value": entity.value,
        "confidence": entity.confidence,
        "source": entity.source.value,
        "explicit": entity.explicit,
        "source_conversation_id": entity.source_conversation_id,
        "source_message_id": entity.source_message_id or None,
        "valid_from": entity.updated_at.isoformat(),
        "superseded_at": entity.superseded_at.isoformat() if entity.superseded_at else None,
        "in_prompt": entity.reaches_prompt(min_confidence),
    }


def memory_data(view: UserMemoryView) -> dict[str, Any]:
    sheet, floor = view.facts, view.min_confidence
    return {
        "user": view.holder.end_user,
        "agent_id": view.holder.agent_id,
        "entity_min_confidence": floor,
        "facts": [
            {**fact_data(fact, floor), "history": [fact_data(old, floor) for old in sheet.history_of(fact.type)]}
            for fact in sorted(sheet.current, key=lambda e: e.type)
        ],
        "conversations": list(view.conversations),
    }


def hit_data(hit: SearchHit) -> dict[str, Any]:
    return {"kind": hit.kind, "id": hit.id, "conversation_id": hit.conversation_id, "text": hit.text,
            "source_message_ids": list(hit.source_message_ids), "score": round(hit.score, 4)}


@router.get("/api/users/{user}/memory")
@inject
async def read_user_memory(
    user: UserPath,
    caller: Annotated[Caller, Depends(current_caller)],
    memory: Annotated[UserMemory, Depends(Provided["memory.user_memory"])],
    agent_id: AgentFilter = None,
    acting_for: Annotated[EndUser | None, Query(alias="user")] = None,
) -> dict[str, Any]:
    """The user's facts (current values, each with its history and provenance) and their conversations
    that have memory."""
    return memory_data(await memory.read(holder_of(caller, user, acting_for, agent_id), caller.agent_id))


@router.put("/api/users/{user}/memory/facts/{fact_type}")
@inject
async def set_user_fact(
    user: UserPath,
    fact_type: FactType,
    body: FactBody,
    caller: Annotated[Caller, Depends(current_caller)],
    memory: Annotated[UserMemory, Depends(Provided["memory.user_memory"])],
    agent_id: AgentFilter = None,
    acting_for: Annotated[EndUser | None, Query(alias="user")] = None,
) -> dict[str, Any]:
    """Set a fact (source `api`): the old value goes to history; only the API or the user's explicit
    word replaces it."""
    holder = holder_of(caller, user, acting_for, agent_id)
    fact = await memory.set_fact(holder, fact_type, body.value, body.confidence)
    view = await memory.read(holder, caller.agent_id)
    history = [fact_data(old, view.min_confidence) for old in view.facts.history_of(fact.type)]
    return {**fact_data(fact, view.min_confidence), "history": history}


@router.delete("/api/users/{user}/memory/facts/{fact_type}", status_code=204)
@inject
async def delete_user_fact(
    user: UserPath,
    fact_type: FactType,
    caller: Annotated[Caller, Depends(current_caller)],
    memory: Annotated[UserMemory, Depends(Provided["memory.user_memory"])],
    agent_id: AgentFilter = None,
    acting_for: Annotated[EndUser | None, Query(alias="user")] = None,
) -> Response:
    """Forget one fact: its current value and its history."""
    await memory.delete_fact(holder_of(caller, user, acting_for, agent_id), fact_type)
    return Response(status_code=204)


@router.get("/api/users/{user}/memory/search")
@inject
async def search_user_memory(
    user: UserPath,
    q: Annotated[SomeText, Query(min_length=1, max_length=MAX_QUERY, description="What to look for.")],
    caller: Annotated[Caller, Depends(current_caller)],
    memory: Annotated[UserMemory, Depends(Provided["memory.user_memory"])],
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = 10,
    agent_id: AgentFilter = None,
    acting_for: Annotated[EndUser | None, Query(alias="user")] = None,
) -> dict[str, Any]:
    """Past turns, archive entries and summaries across the user's conversations, best first, each
    citing its source."""
    hits = await memory.search(searched_holder(caller, user, acting_for, agent_id), q, limit)
    return {"data": [hit_data(hit) for hit in hits]}


@router.delete(
    "/api/users/{user}/memory",
    responses={200: {"description": "What was removed, by kind."}, 204: {"description": "Nothing was there."}},
)
@inject
async def forget_user(
    user: UserPath,
    caller: Annotated[Caller, Depends(current_caller)],
    forget: Annotated[ForgetUser, Depends(Provided["conversations.forget_user"])],
    conversations: Annotated[bool, Query(description="Delete the user's conversations and messages too.")] = False,
    acting_for: Annotated[EndUser | None, Query(alias="user")] = None,
) -> Response:
    """Forget me: every fact and history entry, every summary, archive entry, entity and cached window of
    the user's conversations (with `conversations=true`, the conversations and messages too). 200 with
    the counts; 204 when there was nothing to remove. An agent key may forget the memory; deleting the
    conversations, which may be other agents' too, takes an account key."""
    owner, end_user = reached_user(caller, user, acting_for)
    if conversations and caller.agent_id is not None:
        raise Forbidden("Deleting an end user's conversations (all their agents') takes an account key; "
                        "an agent key may forget their memory, or delete its own agent's conversations one by one.")
    counts = await forget(owner, end_user, conversations=conversations)
    removed = asdict(counts)
    if not any(removed.values()):
        return Response(status_code=204)
    return JSONResponse({"user": end_user, "removed": removed})
