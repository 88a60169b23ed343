"""Every error class of the infrastructure layer.

Two kinds live here:

- application errors an adapter raises itself, which reach the HTTP edge like any other
  `ApplicationError` (`DatabaseNotMigrated`, `RedisUnreachable`);
- errors that never leave infrastructure: an adapter raises and catches them inside itself, or
  turns them into an application error or a tool failure (the MCP session's `StartFailed` and
  `Disconnected`, the tool schema's `SchemaError` and `SchemaViolation`, the calculator's
  `CalculationError`).

The functions that translate vendor exceptions stay beside the adapters that need them
(`persistence/errors.py`, `tools/mcp_errors.py`, `models/openai_errors.py`).
"""

from __future__ import annotations

from application.errors import ApplicationError, StoreUnavailable

# -- application errors raised by adapters --------------------------------------------------------


class DatabaseNotMigrated(StoreUnavailable):
    """A PostgreSQL database whose schema is missing or behind the migrations' head."""


class RedisUnreachable(ApplicationError):
    """Redis did not answer the start-up check."""

    code = "redis_unavailable"


# -- MCP sessions (tools/mcp_session.py) ---------------------------------------------------------


class StartFailed(Exception):
    """An MCP server's session could not start; `reason` is one plain line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Disconnected(Exception):
    """The session's connection is gone."""


# -- tool schemas (tools/schema.py) ----------------------------------------------------------------


class SchemaError(TypeError):
    """A signature that cannot be described (a bug in a tool's declaration, found at import)."""


class SchemaViolation(ValueError):
    """Arguments that do not match a schema; the message is one plain line for the model."""


# -- the built-in calculator (tools/calculator.py) ------------------------------------------------


class CalculationError(ValueError):
    """A plain explanation of why an expression cannot be computed."""
