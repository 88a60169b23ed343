"""The two formats of memagent's log lines (MEMAGENT_LOG__FORMAT): `text`, for a person, and
`json`, one object per line for a log pipeline. Both add the ids of the turn a line is about
(`application.log_context`: task, conversation, message, agent, and the trace when tracing is on)
and pass every line through the `Redactor`. The standard library's logging is enough for this:
one small formatter, no dependency, and it sees uvicorn's own lines (error and access) as well.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from application.log_context import current_log_fields

if TYPE_CHECKING:
    from infrastructure.logs.redaction import Redactor

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class TextFormatter(logging.Formatter):
    """The classic line, then the turn's ids as `name=value` pairs in brackets."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__(TEXT_FORMAT)
        self._redact = redact

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = current_log_fields()
        if fields:
            line += " [" + " ".join(f"{name}={value}" for name, value in fields.items()) + "]"
        return self._redact(line)


class JsonFormatter(logging.Formatter):
    """`time` (UTC, ISO 8601), `level`, `logger`, `message`, the turn's ids, and `exception` (its
    traceback) when there is one. Values are redacted before they are encoded, so an escape in the
    JSON text cannot hide a secret from the redactor."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self._redact = redact

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, str] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **current_log_fields(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps({name: self._redact(value) for name, value in entry.items()}, ensure_ascii=False)
