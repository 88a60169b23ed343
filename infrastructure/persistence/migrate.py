"""`memagent migrate`: upgrade a database to the latest schema, without an alembic.ini.

The URL (or an open connection) is handed to the migration environment through
`Config.attributes`; env.py reads nothing else.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

from application.errors import StoreUnavailable
from infrastructure.persistence.errors import DATABASE_ERRORS, startup_failure_message
from infrastructure.persistence.urls import ensure_sqlite_directory, normalise_url

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlalchemy.engine import URL, Connection

MIGRATIONS_DIR = Path(__file__).resolve().with_name("migrations")


def alembic_config(url: URL | None = None, connection: Connection | None = None) -> Config:
    """A Config built in code: env.py takes `url` or, when given, the open sync `connection`."""
    config = Config()
    # The ini-style parser treats % as interpolation.
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    config.attributes["url"] = url
    config.attributes["connection"] = connection
    return config


def script_directory() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config())


def run_migrations(url: str) -> None:
    """Upgrade the database at `url` (PostgreSQL or SQLite) to head. Blocks until done.

    Raises `StoreUnavailable` with one readable line when the database cannot be reached.
    """
    parsed = normalise_url(url)
    try:
        ensure_sqlite_directory(parsed)
        _outside_event_loop(lambda: command.upgrade(alembic_config(parsed), "head"))
    except DATABASE_ERRORS as exc:
        raise StoreUnavailable(startup_failure_message(parsed, exc)) from exc


def _outside_event_loop(work: Callable[[], None]) -> None:
    # env.py drives the async driver with asyncio.run(), which refuses to nest in a running loop.
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        work()
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(work).result()
