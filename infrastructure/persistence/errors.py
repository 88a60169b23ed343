"""Turning SQLAlchemy and driver exceptions into application errors with readable messages.

Nothing outside infrastructure may see a vendor exception. What a client sees (the error's
`message`) is one of a few plain sentences naming the kind of failure, never a host, URL,
operation or exception class; the log line written here carries those for operators. Neither may
carry a password, a SQL statement (its parameters hold user data) or a stack trace. Start-up
failures are for operators only: their one line names the setting and the database.
"""

from __future__ import annotations

import logging
import re
import sqlite3

import sqlalchemy.exc
from sqlalchemy.engine import URL, make_url

from application.errors import ApplicationError, InvalidInput, StoreUnavailable
from infrastructure.errors import DatabaseNotMigrated

URL_SETTING = "MEMAGENT_DATABASE__URL"
MIGRATE_HINT = "database is not migrated: run `memagent migrate`"

logger = logging.getLogger(__name__)

# What clients are told: a few fixed sentences, by kind of failure, never the driver's words.
UNAVAILABLE = "The database is unavailable; try again shortly."
BUSY = "The database is busy; try again shortly."
TIMED_OUT = "The database did not answer in time; try again shortly."
CONFLICTING = "The database refused a write that conflicts with stored data."
REFUSED_VALUE = "The database refused a value of the request, such as a NUL character in text or a number out of range."

try:  # asyncpg is a declared dependency, but an SQLite-only install should still import this
    import asyncpg

    _DRIVER_ERRORS: tuple[type[BaseException], ...] = (asyncpg.PostgresError, asyncpg.InterfaceError)
    # SQLSTATE class 22, "data exception": a value the database refuses (a NUL in text, a number
    # out of range), which is bad input, not a database that failed.
    _BAD_VALUE_ERRORS: tuple[type[BaseException], ...] = (asyncpg.exceptions.DataError, sqlalchemy.exc.DataError)
    _CONFLICT_ERRORS: tuple[type[BaseException], ...] = (asyncpg.exceptions.IntegrityConstraintViolationError,)
    _BUSY_ERRORS: tuple[type[BaseException], ...] = (
        asyncpg.exceptions.LockNotAvailableError,
        asyncpg.exceptions.DeadlockDetectedError,
        asyncpg.exceptions.TooManyConnectionsError,
    )
    _TIMEOUT_ERRORS: tuple[type[BaseException], ...] = (asyncpg.exceptions.QueryCanceledError,)
except ImportError:  # pragma: no cover
    _DRIVER_ERRORS = ()
    _BAD_VALUE_ERRORS = (sqlalchemy.exc.DataError,)
    _CONFLICT_ERRORS = _BUSY_ERRORS = _TIMEOUT_ERRORS = ()

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


def _driver_error(exc: BaseException) -> BaseException:
    """The driver's own error behind SQLAlchemy's wrappers, else `exc`."""
    inner: BaseException = exc
    if isinstance(exc, sqlalchemy.exc.DBAPIError) and exc.orig is not None:
        inner = exc.orig
    if type(inner).__module__.startswith("sqlalchemy") and isinstance(inner.__cause__, Exception):
        inner = inner.__cause__  # SQLAlchemy's async adapters re-wrap the driver's own, better-named error
    return inner


def reason(exc: BaseException, password: str | None = None) -> str:
    """One line naming what failed, from the driver's own error when SQLAlchemy wrapped it."""
    inner = _driver_error(exc)
    # str(DBAPIError) appends the SQL and its parameters; the driver's error alone does not, except
    # asyncpg's refusal to encode a parameter, which quotes the value: the value is cut off.
    text = str(inner).strip().splitlines()[0] if str(inner).strip() else ""
    text = _ARGUMENT_VALUE.sub(r"\1", text)
    if password:
        text = text.replace(password, "***")
    name = type(inner).__name__
    return f"{name}: {text}" if text else name


def store_unavailable(
    operation: str, exc: BaseException, password: str | None = None, *, where: str = "The database"
) -> StoreUnavailable:
    """`StoreUnavailable` with the plain sentence for `exc`'s kind; the details are logged here."""
    sentence = _sentence(exc)
    _log(operation, exc, password, where, sentence)
    return StoreUnavailable(sentence)


def store_error(
    operation: str, exc: BaseException, password: str | None = None, *, where: str = "The database"
) -> ApplicationError:
    """`InvalidInput` for a value the database refused, else `StoreUnavailable`; either way a plain
    sentence for clients, and a log line naming `where` (a password-free URL), `operation` and the
    driver's error."""
    if _refused_a_value(exc):
        _log(operation, exc, password, where, REFUSED_VALUE)
        return InvalidInput(REFUSED_VALUE)
    return store_unavailable(operation, exc, password, where=where)


def _sentence(exc: BaseException) -> str:
    inner = _driver_error(exc)
    if isinstance(exc, sqlalchemy.exc.IntegrityError) or isinstance(inner, _CONFLICT_ERRORS):
        return CONFLICTING
    if isinstance(exc, sqlalchemy.exc.TimeoutError) or isinstance(inner, _BUSY_ERRORS) or _sqlite_busy(inner):
        return BUSY  # no pooled connection free in time, or another writer holds a lock
    if isinstance(inner, (TimeoutError, *_TIMEOUT_ERRORS)):
        return TIMED_OUT
    return UNAVAILABLE


def _sqlite_busy(error: BaseException) -> bool:
    return isinstance(error, sqlite3.OperationalError) and ("locked" in str(error) or "busy" in str(error))


def _log(operation: str, exc: BaseException, password: str | None, where: str, sentence: str) -> None:
    logger.warning("%s failed during %s: %s → %r", where, operation, reason(exc, password), sentence)


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
