"""The model-call ledger in SQL (`model_calls`, migration 0008), on SQLite and PostgreSQL.

Written in batches (one multi-row INSERT per batch; a call already there, by id, is left as it is,
so a batch the writer tries again after a lost commit writes none twice); read back only as sums,
each one indexed statement: a conversation's by purpose (`ix_model_calls_conversation`), an owner's
or an agent's spend since a time (`ix_model_calls_owner_created`, `ix_model_calls_agent_created`).
An agent's upkeep for its stats is read by `sqlalchemy_usage_stats`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import case, func, select

from application.ports.model_call_ledger import ModelCallLedger
from domain.billing.model_calls import PurposeUsage
from infrastructure.persistence.model_call_rows import INSERT_MODEL_CALLS, ModelCallRow, model_call_values
from infrastructure.persistence.rows import utc

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from sqlalchemy import ColumnElement

    from domain.billing.model_calls import ModelCall
    from infrastructure.persistence.database import Database


class SqlAlchemyModelCallLedger(ModelCallLedger):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def add(self, calls: Sequence[ModelCall]) -> None:
        if not calls:
            return
        async with self._db.connection("record_model_calls") as session:  # a Core INSERT: no unit of work
            await session.execute(INSERT_MODEL_CALLS[self._db.is_sqlite], [model_call_values(c) for c in calls])

    async def conversation_usage(self, conversation_id: str) -> list[PurposeUsage]:
        r = ModelCallRow
        statement = (
            select(
                r.purpose, func.count(), func.sum(r.prompt_tokens), func.sum(r.completion_tokens),
                func.sum(r.cost_usd), func.sum(case((r.estimated, 1), else_=0)),
            )
            .where(r.conversation_id == conversation_id)
            .group_by(r.purpose)
            .order_by(r.purpose)
        )
        async with self._db.transaction("conversation_usage") as session:
            rows = (await session.execute(statement)).all()
        return [
            PurposeUsage(purpose, int(calls), int(prompt or 0), int(completion or 0), float(cost or 0.0),
                         int(estimated or 0))
            for purpose, calls, prompt, completion, cost, estimated in rows
        ]

    async def spent(self, owner: str, since: datetime, agent_id: str | None = None) -> float:
        r = ModelCallRow
        where: list[ColumnElement[bool]] = [r.owner == owner, r.created_at >= utc(since)]
        if agent_id is not None:
            where.append(r.agent_id == agent_id)
        async with self._db.transaction("budget_spend") as session:
            total = (await session.execute(select(func.sum(r.cost_usd)).where(*where))).scalar()
        return float(total or 0.0)
