"""The one best-effort helper: work whose failure must cost only itself, never its caller.

Its reach: an `ApplicationError` (a port failed) or a `DomainError` (data broke a rule) is
logged as a warning; any other exception is a bug, logged with its traceback. Either way the
caller gets the fallback and a sentence saying what went wrong. Cancellation is never caught,
so a stopped turn or a shutdown still ends the work.

Used where the design makes a part optional: a memory tier at recall, each memory upkeep job,
a window update after a saved turn.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, TypeVar

from application.errors import ApplicationError
from domain.errors import DomainError

if TYPE_CHECKING:
    from collections.abc import Awaitable

log = logging.getLogger(__name__)
T = TypeVar("T")
F = TypeVar("F")


async def best_effort(
    work: Awaitable[T], fallback: F, what: str, *, retried: bool = False
) -> tuple[T | F, str | None]:
    """(the work's result, None), or (fallback, why it failed). `retried`: a later run catches up
    on a failed port, and the log line says so."""
    try:
        return await work, None
    except ApplicationError as failure:
        log.warning("%s failed%s: %s", what, ", retried later" if retried else "", failure.message)
        return fallback, failure.message
    except DomainError as failure:
        log.warning("%s failed: %s", what, failure)
        return fallback, str(failure)
    except Exception:
        log.exception("%s failed", what)
        return fallback, "an internal error"
