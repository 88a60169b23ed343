"""The HTTP edge's one error policy: every error answers JSON `{"code", "message"}`; never a stack trace.

`STATUS` maps each error class to its HTTP status; the code is the class's own `code` (an
`ApplicationError` subclass of another layer, e.g. infrastructure's `RedisUnreachable`, keeps its
code and takes the status of the nearest class listed). A `DomainError` that reaches the edge is a
rule broken by the data sent: 422 `invalid_input` with its message. Anything else is a bug: 500
`internal_error`, logged, with no details. Routes raise; they never build error answers themselves.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from application.errors import (
    ApplicationError,
    Conflict,
    EventStoreUnavailable,
    Forbidden,
    InvalidInput,
    InvalidOutput,
    InvalidParameter,
    InvalidWorkflow,
    MalformedRecord,
    MalformedRequest,
    MemoryUnavailable,
    ModelError,
    ModelNotFound,
    ModelNotReached,
    NodeFailed,
    NotFound,
    NotPublished,
    PayloadTooLarge,
    RateLimited,
    StoreUnavailable,
    Unauthorized,
    UnsupportedMediaType,
    UnsupportedParameter,
    UpkeepBusy,
)
from application.model_calls.budgets import BudgetExceeded
from domain.errors import DomainError
from interfaces.http.openai_errors import is_openai_path, openai_error_response

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from fastapi import FastAPI, Request

    from domain.workflows.problems import Problem

log = logging.getLogger(__name__)

# The status of each error class (looked up along the error's MRO, so the most specific class wins).
STATUS: dict[type[Exception], int] = {
    MalformedRequest: 400,
    UnsupportedParameter: 400,
    Unauthorized: 401,
    BudgetExceeded: 402,
    Forbidden: 403,
    NotFound: 404,
    ModelNotFound: 404,
    Conflict: 409,
    NotPublished: 409,
    PayloadTooLarge: 413,
    UnsupportedMediaType: 415,
    InvalidInput: 422,
    InvalidParameter: 422,
    InvalidWorkflow: 422,  # with `problems`, each by its path
    NodeFailed: 502,  # the work a workflow node handed on (code, a server, a template) failed
    DomainError: 422,
    RateLimited: 429,
    ModelError: 503,
    ModelNotReached: 503,
    InvalidOutput: 502,  # the model's answer, not the request: only a turn raises it (its `error` event)
    StoreUnavailable: 503,
    MemoryUnavailable: 503,
    UpkeepBusy: 503,
    EventStoreUnavailable: 503,
    MalformedRecord: 500,  # our own stored data is broken: not the client's fault, and retrying will not help
    ApplicationError: 503,  # any other application error: a dependency that failed
}
DOMAIN_ERROR_CODE = InvalidInput.code
# The codes of Starlette's HTTPExceptions, by status.
HTTP_CODES = {
    400: MalformedRequest.code,
    404: NotFound.code,
    405: "method_not_allowed",
    413: PayloadTooLarge.code,
}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None, *, path: str = "",
    param: str | None = None, problems: tuple[Problem, ...] = (),
) -> JSONResponse:
    """The error answer; under `/v1` (OpenAI's API) in OpenAI's shape (interfaces/http/openai_errors.py).
    `problems`: each problem of an invalid value by its path (a workflow's graph), besides the message."""
    if is_openai_path(path):
        return openai_error_response(status, code, message, headers, param)
    body: dict[str, Any] = {"code": code, "message": message}
    if problems:
        body["problems"] = [{"path": p.path, "message": p.message} for p in problems]
    return JSONResponse(body, status_code=status, headers=headers)


def status_of(error: ApplicationError | DomainError) -> int:
    return next(STATUS[kind] for kind in type(error).__mro__ if kind in STATUS)


def policy_response(error: ApplicationError | DomainError, path: str = "") -> JSONResponse:
    """The answer to an application or domain error, by `STATUS`."""
    status = status_of(error)
    if isinstance(error, ApplicationError):
        code, message = error.code, error.message
    else:
        code, message = DOMAIN_ERROR_CODE, str(error)
    # RFC 6750: a 401 names the scheme the client should use.
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if isinstance(error, RateLimited):
        headers = {"Retry-After": str(error.retry_after)}
    return error_response(status, code, message, headers, path=path, param=getattr(error, "param", None),
                          problems=getattr(error, "problems", ()))


def _validation_message(error: RequestValidationError) -> tuple[str, str]:
    first = error.errors()[0] if error.errors() else {}
    if first.get("type") == "json_invalid":
        return "invalid_json", "The body is not valid JSON."
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    return "invalid_request", f"{where}: {first.get('msg', 'invalid value')}"


def _validation_param(error: RequestValidationError) -> str | None:
    first = error.errors()[0] if error.errors() else {}
    if first.get("type") == "json_invalid":  # the body as a whole: no parameter to name
        return None
    return ".".join(str(p) for p in first.get("loc", ()) if p != "body") or None


def allowed_methods(request: Request) -> str:
    """Every method some route takes at the request's path: Starlette's own `Allow` names only the
    first route that matched, and a path often has several (GET and DELETE of a resource)."""
    path = request.scope["path"]
    methods = {m for route in _routes(request.app.router.routes) if route.path_regex.match(path) for m in route.methods}
    return ", ".join(sorted(methods))


def _routes(routes: Iterable[Any]) -> Iterator[Any]:
    """Routes with methods, also those of included routers (FastAPI keeps them apart, unprefixed here)."""
    for route in routes:
        if getattr(route, "methods", None) and hasattr(route, "path_regex"):
            yield route
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from _routes(included.routes)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApplicationError)
    @app.exception_handler(DomainError)
    async def policy_error(request: Request, error: ApplicationError | DomainError) -> JSONResponse:
        return policy_response(error, request.url.path)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        code, message = _validation_message(error)
        param = _validation_param(error)
        return error_response(400 if code == "invalid_json" else 422, code, message, path=request.url.path,
                              param=param)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        # Starlette's own: 400 a body it cannot parse, 404 no route, 405 with `Allow`, and the body
        # limit's 413 (with `Connection: close`).
        code = HTTP_CODES.get(error.status_code, "http_error")
        headers = dict(error.headers or {})
        if error.status_code == 405:
            headers["Allow"] = allowed_methods(request)
        return error_response(error.status_code, code, str(error.detail), headers or None, path=request.url.path)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=error)
        return error_response(500, "internal_error", "An internal error occurred.", path=request.url.path)
