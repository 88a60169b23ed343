"""A use case's failure as an MCP tool error (`is_error`): its code and plain message, as the HTTP API
answers it (interfaces/http/errors.py: a domain error is `invalid_input`)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from mcp.server.mcpserver.exceptions import ToolError

from application.errors import ApplicationError, InvalidInput
from domain.errors import DomainError

if TYPE_CHECKING:
    from collections.abc import Iterator


@contextlib.contextmanager
def tool_errors() -> Iterator[None]:
    try:
        yield
    except ApplicationError as failure:
        raise ToolError(f"{failure.code}: {failure.message}") from None
    except DomainError as invalid:  # a workflow's inputs that its start node refuses, each named
        raise ToolError(f"{InvalidInput.code}: {invalid}") from None
