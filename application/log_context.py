"""What a log line is about: the ids of the turn whose work wrote it (task, conversation, message,
agent, trace), kept in a context variable that the turn sets, so every line written while it runs,
and by the background work it starts (asyncio copies the variable into each task), carries them
without any call passing them on. The log formatters read them (infrastructure/logs/).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

_FIELDS: ContextVar[Mapping[str, str]] = ContextVar("memagent_log_fields", default=MappingProxyType({}))


@contextmanager
def log_fields(**fields: str) -> Iterator[None]:
    """Inside the block, lines carry `fields` besides the ones already set (empty values left out)."""
    token = _FIELDS.set({**_FIELDS.get(), **{name: value for name, value in fields.items() if value}})
    try:
        yield
    finally:
        _FIELDS.reset(token)


def current_log_fields() -> Mapping[str, str]:
    return _FIELDS.get()
