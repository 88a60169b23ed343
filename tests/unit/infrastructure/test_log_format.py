"""The log formatters: one JSON object per line with the turn's ids, the text line with them in
brackets, and the redactor under both: known secrets and secret-shaped strings masked, in the
message and in a traceback, even where JSON would escape them."""

from __future__ import annotations

import json
import logging
import sys

from application.log_context import log_fields
from infrastructure.logs.log_format import JsonFormatter, TextFormatter
from infrastructure.logs.redaction import Redactor
from interfaces.log_setup import secrets_of
from interfaces.settings.settings import Settings

KEY = "sk-known-" + "7" * 20
QUOTED = 'pass"with\\quote-9'  # JSON would write it escaped: it must be masked before it is encoded


def record(message: str, *args: object, exc: bool = False) -> logging.LogRecord:
    info = sys.exc_info() if exc else None
    return logging.LogRecord("memagent.test", logging.WARNING, __file__, 1, message, args, info)


def test_a_json_line_has_time_level_logger_message_and_the_turns_ids() -> None:
    with log_fields(task_id="t1", conversation_id="c1", agent_id="default", trace_id="ab" * 16):
        line = JsonFormatter(Redactor()).format(record("turn %s ended", "t1"))
    entry = json.loads(line)
    assert entry["time"].endswith("+00:00")
    assert {k: entry[k] for k in ("level", "logger", "message", "task_id", "conversation_id", "agent_id",
                                  "trace_id")} == {
        "level": "WARNING", "logger": "memagent.test", "message": "turn t1 ended", "task_id": "t1",
        "conversation_id": "c1", "agent_id": "default", "trace_id": "ab" * 16}
    assert "\n" not in line


def test_outside_a_turn_a_line_carries_no_ids() -> None:
    assert set(json.loads(JsonFormatter(Redactor()).format(record("hello")))) == {"time", "level", "logger",
                                                                                  "message"}
    assert TextFormatter(Redactor()).format(record("hello")).endswith("memagent.test: hello")


def test_the_text_line_ends_with_the_turns_ids() -> None:
    with log_fields(task_id="t1", trace_id="ab" * 16):
        line = TextFormatter(Redactor()).format(record("saved"))
    assert line.endswith(f"WARNING memagent.test: saved [task_id=t1 trace_id={'ab' * 16}]")


def test_known_secrets_and_secret_shapes_are_masked_in_messages_and_tracebacks() -> None:
    redact = Redactor([KEY, QUOTED, None, "abc"])  # too short a value is left alone: it would mask words
    try:
        raise RuntimeError(f"cannot reach postgresql://app:pa55word@db:5432/x with {KEY}")
    except RuntimeError:
        failed = record("key mk_%s, Bearer %s, %s", "A1b2C3d4E5f6G7h8", "tok.en-123", QUOTED, exc=True)
    for line in (JsonFormatter(redact).format(failed), TextFormatter(redact).format(failed)):
        for secret in (KEY, "pa55", "A1b2C3d4E5f6G7h8", "tok.en-123", QUOTED, json.dumps(QUOTED)[1:-1], "quote-9"):
            assert secret not in line
        assert "postgresql://app:***@db:5432/x" in line
        assert "mk_***" in line
        assert "Bearer ***" in line
    assert redact("abc and abcd") == "abc and abcd"


def test_the_settings_secrets_are_the_keys_the_token_and_the_passwords_in_urls() -> None:
    settings = Settings(
        database={"url": "postgresql+asyncpg://app:db-pass-1@127.0.0.1/x"},
        redis={"url": "redis://:redis-pass-2@127.0.0.1:6379/0"},
        llm={"api_key": KEY}, metrics={"token": "t" * 20},
        mcp={"servers": [{"name": "gh", "transport": "http", "url": "http://127.0.0.1:9/mcp",
                          "headers": {"Authorization": "Bearer gh-token-3", "X-Trace": "visible"}}]},
    )
    found = set(secrets_of(settings))
    assert {KEY, "t" * 20, "db-pass-1", "redis-pass-2", "Bearer gh-token-3"} <= found
    assert "visible" not in found
