"""What /openapi.json says beyond what FastAPI derives: the error answers, and optional keys.

Every route declares its error answers (`ERROR_RESPONSES`) with the one error body `{code, message}`
that `interfaces.http.errors` answers. In single-user mode a key is optional (a request without one
acts as the local owner), so the spec says so: each operation's security also allows none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from fastapi import FastAPI


class ProblemBody(BaseModel):
    path: str = Field(description="Where in the JSON sent: `nodes[2].prompt`, `edges[0].target`.")
    message: str


class ErrorBody(BaseModel):
    """Every error answer: a stable machine-readable code and a sentence for people."""

    code: str = Field(description="e.g. unauthorized, not_found, invalid_request, payload_too_large")
    message: str
    problems: list[ProblemBody] | None = Field(
        None, description="422 `invalid_workflow` (and a run's invalid inputs): every problem, by its path."
    )


def _error(description: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": description}


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _error("Malformed request: a body that is not JSON, a bad header or parameter."),
    401: _error("No valid API key (`Authorization: Bearer <key>`)."),
    403: _error("Forbidden: an agent key outside what it may do (chat with its agent, its end users' conversations)."),
    404: _error("No such resource, or one of another owner's."),
    405: _error("Method not allowed; `Allow` lists the methods that are."),
    409: _error("Conflict with the resource's state."),
    413: _error("The body is larger than the limit (MEMAGENT_SERVER__MAX_BODY_BYTES; uploads: the document limit)."),
    415: _error("Unsupported media type."),
    422: _error("A value the API does not accept."),
    402: _error("A budget (USD per day or month, of the account or the agent) is spent (routes that start a turn)."),
    429: _error("A rate limit or quota of turns is reached (routes that start a turn); `Retry-After`: seconds."),
    503: _error("A backend (database, Redis, the model) is unavailable."),
}
# Routes without a key or body (`/healthz`): what they may still answer.
PUBLIC_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: ERROR_RESPONSES[status] for status in (400, 405, 413, 503)
}
# One SSE event: `data` is a JSON frame (docs/ARCHITECTURE.md §4); a keep-alive is a comment.
SSE_EVENT = {
    "type": "object",
    "properties": {
        "event": {"type": "string"},
        "id": {"type": "string", "pattern": "^[0-9]+$"},
        "data": {"type": "string", "description": "JSON: a frame, an error, or `done`'s task id"},
        "retry": {"type": "integer"},
    },
}
SSE_CONTENT = {"text/event-stream": {"schema": SSE_EVENT}}


def install_openapi(app: FastAPI, *, keys_required: bool) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, routes=app.routes)
            _parameters_are_never_null(schema)
            if not keys_required:
                _make_keys_optional(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _parameters_are_never_null(schema: dict[str, Any]) -> None:
    """An optional header or query parameter is left out, never sent as JSON's null: FastAPI's
    `anyOf: [..., {"type": "null"}]` for `str | None` becomes the string's own schema."""
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                described = dict(parameter.get("schema", {}))
                choices = described.pop("anyOf", [])
                others = [c for c in choices if c != {"type": "null"}]
                if len(others) == 1 and len(choices) == 2:
                    parameter["schema"] = others[0] | described


def _make_keys_optional(schema: dict[str, Any]) -> None:
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            if operation.get("security"):
                operation["security"] = [{}, *operation["security"]]
