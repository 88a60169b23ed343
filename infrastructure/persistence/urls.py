"""Database URLs: the async driver for each backend, and SQLite's file location."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

# Users write the plain scheme; the service only runs async drivers.
_ASYNC_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+asyncpg",
    "postgres": "postgresql+asyncpg",
}


def normalise_url(url: str | URL) -> URL:
    parsed = make_url(url)
    driver = _ASYNC_DRIVERS.get(parsed.drivername)
    return parsed.set(drivername=driver) if driver else parsed


def url_problem(url: str) -> str | None:
    """Why `url` is not a database URL, or None; never quotes the URL (it may hold a password)."""
    try:
        make_url(url)
    except ArgumentError:
        return "not a database URL (e.g. postgresql://user:password@host:5432/name or sqlite:///./data/memagent.db)"
    except ValueError:  # SQLAlchemy reads the port with int()
        return "the port of the database URL is not a number"
    return None


def is_sqlite(url: URL) -> bool:
    return url.get_backend_name() == "sqlite"


def sqlite_file(url: URL) -> Path | None:
    """The database file, or None for an in-memory or URI-style database."""
    database = url.database or ""
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database).expanduser()


def ensure_sqlite_directory(url: URL) -> None:
    """SQLite creates the file but not its folder; a fresh install has neither."""
    path = sqlite_file(url) if is_sqlite(url) else None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)


def connect_args(url: URL, timeout: float = 10.0) -> dict[str, float]:
    """Driver options: asyncpg waits 60 s for an unreachable host by default, far too long at start-up."""
    return {"timeout": timeout} if url.get_backend_name() == "postgresql" else {}
