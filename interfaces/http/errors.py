"""Every error answers JSON `{"code", "message"}`; never a stack trace."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from application.errors import ApplicationError, Conflict, InvalidInput, MalformedRequest, NotFound, Unauthorized

log = logging.getLogger(__name__)

_STATUS = {MalformedRequest: 400, InvalidInput: 422, NotFound: 404, Conflict: 409, Unauthorized: 401}


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status_code=status, headers=headers)


def _validation_message(error: RequestValidationError) -> tuple[str, str]:
    first = error.errors()[0] if error.errors() else {}
    if first.get("type") == "json_invalid":
        return "invalid_json", "The body is not valid JSON."
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    return "invalid_request", f"{where}: {first.get('msg', 'invalid value')}"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApplicationError)
    async def application_error(_: Request, error: ApplicationError) -> JSONResponse:
        status = next((s for kind, s in _STATUS.items() if isinstance(error, kind)), 503)
        # RFC 6750: a 401 names the scheme the client should use.
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        return error_response(status, error.code, error.message, headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, error: RequestValidationError) -> JSONResponse:
        code, message = _validation_message(error)
        return error_response(400 if code == "invalid_json" else 422, code, message)

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, error: HTTPException) -> JSONResponse:
        codes = {400: "malformed_request", 404: "not_found", 405: "method_not_allowed"}  # 400: a body it cannot parse
        code = codes.get(error.status_code, "http_error")
        return error_response(error.status_code, code, str(error.detail))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=error)
        return error_response(500, "internal_error", "An internal error occurred.")
