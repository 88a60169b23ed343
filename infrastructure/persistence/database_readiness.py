"""Readiness of the database: one `SELECT 1` on a connection of the pool (a new one if none is idle)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import sqlalchemy.exc
from sqlalchemy import text

from application.ports.readiness import OK, TIMEOUT, UNREACHABLE, ReadinessProbe
from infrastructure.persistence.errors import DATABASE_ERRORS, reason

if TYPE_CHECKING:
    from infrastructure.persistence.database import Database

logger = logging.getLogger(__name__)


class DatabaseProbe(ReadinessProbe):
    def __init__(self, database: Database) -> None:
        self._database = database

    @property
    def part(self) -> str:
        return "database"

    async def state(self) -> str:
        try:
            async with self._database.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except DATABASE_ERRORS as exc:
            state = TIMEOUT if isinstance(exc, TimeoutError | sqlalchemy.exc.TimeoutError) else UNREACHABLE
            logger.warning("readiness: the database at %s is %s: %s", self._database.display_url, state,
                           reason(exc, self._database.password))
            return state
        return OK
