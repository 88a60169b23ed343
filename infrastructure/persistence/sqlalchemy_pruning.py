"""PruneStore in SQL, on SQLite and PostgreSQL: rows past their age, a bounded batch per transaction.

Each batch picks its rows oldest first through an index of its own (`rows.py`, migration 0009:
steps by `created_at`, steps and messages that still hold a prompt, deleted conversations by
`deleted_at`; the ledger's `ix_model_calls_created`; direct workflow runs by `started_at`,
migration 0015; a message's runs by `parent_message_id`), so a batch reads what it removes and
little more, and an emptied prompt leaves its partial index. The filters are literals, not
parameters: only then may the planner use a partial index. Rows are removed children first (steps,
node runs, runs, messages, then the conversation), so nothing is left pointing at a removed row.
Nothing here locks a row a turn writes: turns write new rows, prunes remove old ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, delete, exists, func, literal_column, not_, select, update

from application.ports.pruning import DirectRunsBefore, MessageRef, PrunedRuns, PruneStore, RunsCalledIn
from domain.ids import ConversationId, MessageId, TaskId
from domain.retention import PruneCounts
from infrastructure.persistence.memory_rows import MemoryEntityRow
from infrastructure.persistence.model_call_rows import ModelCallRow
from infrastructure.persistence.rows import ConversationRow, MessageAgentThoughtRow, MessageRow, utc
from infrastructure.persistence.workflow_run_rows import NodeRunRow, WorkflowRunRow

if TYPE_CHECKING:
    from datetime import datetime

    from sqlalchemy import ColumnClause, ColumnElement, Select

    from domain.retention import Cutoffs
    from infrastructure.persistence.database import Database

C, M, T, K, E = ConversationRow, MessageRow, MessageAgentThoughtRow, ModelCallRow, MemoryEntityRow
R, N = WorkflowRunRow, NodeRunRow
EMPTY: ColumnClause[str] = literal_column("''")


def _deleted_before(before: datetime) -> ColumnElement[bool]:
    return and_(C.deleted_at.is_not(None), C.deleted_at < utc(before))


def _runs(runs: PrunedRuns) -> ColumnElement[bool]:
    """The workflow runs named, as a filter of `workflow_runs`."""
    match runs:
        case RunsCalledIn(conversation_id):
            return R.parent_message_id.in_(select(M.id).where(M.conversation_id == conversation_id))
        case DirectRunsBefore(started_before):
            return and_(R.parent_message_id.is_(None), R.started_at < utc(started_before))


class SqlAlchemyPruneStore(PruneStore):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def count(self, cutoffs: Cutoffs) -> PruneCounts:
        expired = gone = None  # a deleted conversation's rows, counted under that kind alone
        queries: dict[str, Select[Any]] = {}
        if cutoffs.deleted_conversations is not None:
            expired = select(C.id).where(_deleted_before(cutoffs.deleted_conversations))
            gone = select(M.id).where(M.conversation_id.in_(expired))
            queries["deleted_conversations"] = _count(C, _deleted_before(cutoffs.deleted_conversations))
            queries["conversation_messages"] = _count(M, M.conversation_id.in_(expired))
            queries["conversation_steps"] = _count(T, T.message_id.in_(gone))
        if cutoffs.steps is not None:
            queries["steps"] = _count(T, T.created_at < utc(cutoffs.steps), *_outside(T.message_id, gone))
        if cutoffs.model_calls is not None:
            queries["model_calls"] = _count(K, K.created_at < utc(cutoffs.model_calls))
        queries |= _run_counts(gone, cutoffs.workflow_runs)
        prompts: list[Select[Any]] = []
        if cutoffs.prompt_snapshots is not None:
            before = utc(cutoffs.prompt_snapshots)
            whole = [not_(T.created_at < utc(cutoffs.steps))] if cutoffs.steps is not None else []
            prompts = [
                _count(T, T.prompt != EMPTY, T.created_at < before, *whole, *_outside(T.message_id, gone)),
                _count(M, M.prompt != EMPTY, M.created_at < before, *_outside(M.conversation_id, expired)),
            ]
        async with self._db.transaction("count what a prune would remove") as session:
            counts = {name: int(await session.scalar(query) or 0) for name, query in queries.items()}
            counts["prompt_snapshots"] = sum([int(await session.scalar(query) or 0) for query in prompts])
        return PruneCounts(**counts)

    async def expired_conversations(self, deleted_before: datetime, limit: int) -> list[ConversationId]:
        query = select(C.id).where(_deleted_before(deleted_before)).order_by(C.deleted_at).limit(limit)
        async with self._db.transaction("find conversations past their retention") as session:
            return [ConversationId(found) for found in await session.scalars(query)]

    async def delete_conversation_steps(self, conversation_id: ConversationId, limit: int) -> int:
        batch = select(T.id).join(M, M.id == T.message_id).where(M.conversation_id == conversation_id).limit(limit)
        return await self._removed("remove a deleted conversation's steps", delete(T).where(T.id.in_(batch)))

    async def conversation_messages(self, conversation_id: ConversationId, limit: int) -> list[MessageRef]:
        query = select(M.id, M.task_id).where(M.conversation_id == conversation_id).order_by(M.seq).limit(limit)
        async with self._db.transaction("find a deleted conversation's messages") as session:
            return [MessageRef(MessageId(row.id), TaskId(row.task_id)) for row in await session.execute(query)]

    async def delete_messages(self, message_ids: list[MessageId]) -> int:
        return await self._removed("remove a deleted conversation's messages", delete(M).where(M.id.in_(message_ids)))

    async def delete_conversation(self, conversation_id: ConversationId, deleted_before: datetime) -> bool:
        # The user's facts learnt there stay theirs, but point no longer at what is gone.
        await self._removed("unlink facts from a removed conversation", update(E).where(
            E.source_conversation_id == conversation_id).values(source_conversation_id="", source_message_id=""))
        statement = delete(C).where(
            C.id == conversation_id, _deleted_before(deleted_before), ~exists().where(M.conversation_id == C.id)
        )
        return bool(await self._removed("remove a deleted conversation", statement))

    async def delete_steps(self, before: datetime, limit: int) -> int:
        batch = select(T.id).where(T.created_at < utc(before)).order_by(T.created_at).limit(limit)
        return await self._removed("remove steps past their retention", delete(T).where(T.id.in_(batch)))

    async def empty_prompts(self, before: datetime, limit: int) -> int:
        cutoff = utc(before)
        steps = select(T.id).where(T.prompt != EMPTY, T.created_at < cutoff).order_by(T.created_at).limit(limit)
        async with self._db.transaction("empty prompt snapshots past their retention") as session:
            emptied = _rows(await session.execute(update(T).where(T.id.in_(steps)).values(prompt="")))
            if emptied < limit:
                messages = select(M.seq).where(M.prompt != EMPTY, M.created_at < cutoff) \
                    .order_by(M.created_at).limit(limit - emptied)
                emptied += _rows(await session.execute(update(M).where(M.seq.in_(messages)).values(prompt="")))
        return emptied

    async def delete_model_calls(self, before: datetime, limit: int) -> int:
        batch = select(K.id).where(K.created_at < utc(before)).order_by(K.created_at).limit(limit)
        return await self._removed("remove model calls past their retention", delete(K).where(K.id.in_(batch)))

    async def delete_node_runs(self, runs: PrunedRuns, limit: int) -> int:
        # By the run alone: the runs' index gives that order, so no batch sorts every old node run.
        batch = select(N.seq).join(R, R.id == N.run_id).where(_runs(runs)).order_by(R.started_at).limit(limit)
        return await self._removed("remove workflow runs' node runs", delete(N).where(N.seq.in_(batch)))

    async def delete_workflow_runs(self, runs: PrunedRuns, limit: int) -> int:
        emptied = ~exists().where(N.run_id == R.id)  # even on a backend that does not cascade
        batch = select(R.id).where(_runs(runs), emptied).order_by(R.started_at).limit(limit)
        return await self._removed("remove workflow runs", delete(R).where(R.id.in_(batch)))

    async def _removed(self, operation: str, statement: Any) -> int:
        async with self._db.transaction(operation) as session:
            return _rows(await session.execute(statement))


def _count(table: Any, *where: ColumnElement[bool]) -> Select[Any]:
    return select(func.count()).select_from(table).where(*where)


def _run_counts(gone: Select[Any] | None, started_before: datetime | None) -> dict[str, Select[Any]]:
    """The workflow runs (and their node runs) that the messages `gone` called, and the direct ones
    past their age: disjoint, since a direct run has no message."""
    queries: dict[str, Select[Any]] = {}
    if gone is not None:
        queries |= _runs_and_nodes("conversation_", R.parent_message_id.in_(gone))
    if started_before is not None:
        queries |= _runs_and_nodes("", _runs(DirectRunsBefore(started_before)))
    return queries


def _runs_and_nodes(prefix: str, runs: ColumnElement[bool]) -> dict[str, Select[Any]]:
    return {f"{prefix}workflow_runs": _count(R, runs),
            f"{prefix}node_runs": _count(N, N.run_id.in_(select(R.id).where(runs)))}


def _outside(column: Any, removed: Select[Any] | None) -> list[ColumnElement[bool]]:
    """Not among the rows an earlier kind removes (none when that kind is kept for good)."""
    return [column.not_in(removed)] if removed is not None else []


def _rows(result: Any) -> int:
    return int(getattr(result, "rowcount", 0) or 0)
