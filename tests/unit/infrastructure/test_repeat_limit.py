"""`RepeatLimit`: a client's repeated mistake is written once per window, then with the count of
the lines left out; the server's own errors and other loggers are never held back."""

from __future__ import annotations

import logging

from infrastructure.logs.repeat_limit import RepeatLimit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def line(name: str, level: int, message: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, args, None)


def test_a_repeated_client_error_is_written_once_per_window_then_with_the_count_left_out() -> None:
    clock = Clock()
    limit = RepeatLimit(window_s=60, clock=clock)
    written = [limit.filter(line("mcp.server.mcpserver.server", logging.INFO, "Tool %r failed: %r", f"t{i}", "x"))
               for i in range(50)]
    assert written == [True] + [False] * 49  # another tool name is the same kind of line
    clock.now += 61
    after = line("mcp.server.mcpserver.server", logging.INFO, "Tool %r failed: %r", "nope", "x")
    assert limit.filter(after)
    assert after.getMessage() == "Tool 'nope' failed: 'x' (49 more like this left out in the last 60 s)"
    clock.now += 61
    quiet = line("mcp.server.mcpserver.server", logging.INFO, "Tool %r failed: %r", "nope", "x")
    assert limit.filter(quiet)
    assert quiet.getMessage() == "Tool 'nope' failed: 'x'"  # nothing left out since: no count


def test_server_errors_and_other_loggers_are_never_held_back() -> None:
    limit = RepeatLimit(window_s=60, clock=Clock())
    assert all(limit.filter(line("uvicorn.error", logging.ERROR, "Exception in ASGI application")) for _ in range(5))
    assert all(limit.filter(line("application.chat_turn", logging.WARNING, "turn %s ended", "t")) for _ in range(5))
    assert all(limit.filter(line("uvicorn.access", logging.INFO, "same")) for _ in range(5))
    assert limit.filter(line("uvicorn.error", logging.WARNING, "Invalid HTTP request received."))
    assert not limit.filter(line("uvicorn.error", logging.WARNING, "Invalid HTTP request received."))


def test_the_kinds_remembered_are_bounded() -> None:
    limit = RepeatLimit(window_s=60, clock=Clock())
    for i in range(5000):  # messages built without a template: each its own kind
        limit.filter(line("mcp.server.streamable_http_manager", logging.INFO, f"session {i}"))
    assert len(limit._seen) <= 1024  # noqa: SLF001 - the bound is the point
