"""Turning SQLAlchemy and driver exceptions into application errors with readable messages.

Nothing outside infrastructure may see a vendor exception, and no message may carry a password,
a SQL statement (its parameters hold user data) or a stack trace: messages reach logs and clients.
"""

from __future__ import annotations

import re
import sqlite3

import sqlalchemy.exc
from sqlalchemy.engine import URL, make_url

from application.errors import ApplicationError, InvalidInput, StoreUnavailable
from infrastructure.errors import DatabaseNotMigrated

URL_SETTING = "MEMAGENT_DATABASE__URL"
MIGRATE_HINT = "database is not migrated: run `memagent migrate`"

try:  # asyncpg is a declared dependency, but an SQLite-only install should still import this
    import asyncpg

    _DRIVER_ERRORS: tuple[type[BaseException], ...] = (asyncpg.PostgresError, asyncpg.InterfaceError)
    # SQLSTATE class 22, "data exception": a value the database refuses (a NUL in text, a number
    # out of range), which is bad input, not a database that failed.
    _BAD_VALUE_ERRORS: tuple[type[BaseException], ...] = (asyncpg.exceptions.DataError, sqlalchemy.exc.DataError)
except ImportError:  # pragma: no cover
    _DRIVER_ERRORS = ()
    _BAD_VALUE_ERRORS = (sqlalchemy.exc.DataError,)

# Everything a database call can raise that means "the store failed", as opposed to a bug in our code.
DATABASE_ERRORS: tuple[type[BaseException], ...] = (
    sqlalchemy.exc.SQLAlchemyError,
    OSError,  # includes ConnectionRefusedError and socket errors
    TimeoutError,
    sqlite3.Error,
    *_DRIVER_ERRORS,
)


# "invalid input for query argument $3: 'the user's text' (…)" → "invalid input for query argument $3"
_ARGUMENT_VALUE = re.compile(r"^(invalid input for query argument \$\d+).*$")


def safe_url(url: str | URL) -> str:
    """The URL as it may be shown: password masked."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except sqlalchemy.exc.ArgumentError:
        return "<unparseable URL>"


def reason(exc: BaseException, password: str | None = None) -> str:
    """One line naming what failed, from the driver's own error when SQLAlchemy wrapped it."""
    inner: BaseException = exc
    if isinstance(exc, sqlalchemy.exc.DBAPIError) and exc.orig is not None:
        inner = exc.orig
    if type(inner).__module__.startswith("sqlalchemy") and isinstance(inner.__cause__, Exception):
        inner = inner.__cause__  # SQLAlchemy's async adapters re-wrap the driver's own, better-named error
    # str(DBAPIError) appends the SQL and its parameters; the driver's error alone does not, except
    # asyncpg's refusal to encode a parameter, which quotes the value: the value is cut off.
    text = str(inner).strip().splitlines()[0] if str(inner).strip() else ""
    text = _ARGUMENT_VALUE.sub(r"\1", text)
    if password:
        text = text.replace(password, "***")
    name = type(inner).__name__
    return f"{name}: {text}" if text else name


def store_unavailable(operation: str, exc: BaseException, password: str | None = None) -> StoreUnavailable:
    return StoreUnavailable(f"The database failed during {operation}: {reason(exc, password)}")


def store_error(operation: str, exc: BaseException, password: str | None = None) -> ApplicationError:
    """`InvalidInput` for a value the database refused, else `StoreUnavailable`."""
    if _refused_a_value(exc):
        return InvalidInput(f"The database refused a value during {operation}: {reason(exc, password)}")
    return store_unavailable(operation, exc, password)


def _refused_a_value(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(4):  # SQLAlchemy's error, its DBAPI adapter's, the driver's
        if seen is None:
            return False
        if isinstance(seen, _BAD_VALUE_ERRORS):
            return True
        orig = seen.orig if isinstance(seen, sqlalchemy.exc.DBAPIError) else None
        seen = orig if isinstance(orig, BaseException) else seen.__cause__
    return False


def startup_failure_message(url: str | URL, exc: BaseException) -> str:
    """One clear line for start-up: which setting, which database (no password) and what failed."""
    if isinstance(exc, DatabaseNotMigrated):
        return f"{exc.message} ({URL_SETTING}={safe_url(url)})"
    password = _password(url)
    return f"Cannot use the database set by {URL_SETTING}={safe_url(url)}: {reason(exc, password)}"


def _password(url: str | URL) -> str | None:
    try:
        secret = make_url(url).password
    except sqlalchemy.exc.ArgumentError:
        return None
    return str(secret) if secret else None
