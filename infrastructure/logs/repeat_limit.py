"""Client errors logged once per window, not once per request: any client can repeat a bad call
(an unknown MCP tool, a malformed HTTP request) as fast as it likes, and each would add a line.

`RepeatLimit` is a filter on the log handler. A line at INFO or WARNING from a logger that reports
what clients did wrong goes through the first time; the same kind of line (same logger, level and
message template) within `window_s` seconds is counted, not written, and the next one written after
the window says how many were left out. ERROR and above always pass: those are the server's own faults.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

# The loggers where clients' mistakes show up: the MCP SDK ("Tool 'x' failed") and uvicorn
# ("Invalid HTTP request received.").
CLIENT_ERROR_LOGGERS = ("mcp.server", "uvicorn.error")
MAX_KINDS = 1024  # the kinds remembered at once; a message built without a template is its own kind

Kind = tuple[str, int, str]


class RepeatLimit(logging.Filter):
    def __init__(self, window_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._window_s, self._clock = window_s, clock
        self._seen: dict[Kind, tuple[float, int]] = {}  # kind: when it was last written, how many left out since

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR or not record.name.startswith(CLIENT_ERROR_LOGGERS):
            return True
        # The template, not the rendered text: a client varying a name does not make a new kind.
        kind = (record.name, record.levelno, str(record.msg) if record.args else record.getMessage())
        now = self._clock()
        written, left_out = self._seen.get(kind, (-self._window_s, 0))
        if now - written < self._window_s:
            self._seen[kind] = (written, left_out + 1)
            return False
        if left_out:
            record.msg = f"{record.getMessage()} ({left_out} more like this left out in the last {self._window_s:g} s)"
            record.args = None
        self._seen.pop(kind, None)  # re-inserted last: the dict's order is the order of writing
        self._seen[kind] = (now, 0)
        if len(self._seen) > MAX_KINDS:
            del self._seen[next(iter(self._seen))]
        return True
