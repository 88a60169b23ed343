"""Errors under `/v1` in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`, with
OpenAI's status codes (a request memagent would answer 422 is a 400 there). The same errors as the
rest of the API, the same messages; only the envelope differs, so nothing under `/v1` ever answers
memagent's own `{"code", "message"}`. 429 and 503 carry `Retry-After`.
"""

from __future__ import annotations

from fastapi.responses import JSONResponse

OPENAI_PREFIX = "/v1/"
RETRY_AFTER_SECONDS = "2"
_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "insufficient_quota", 403: "permission_error",
          404: "invalid_request_error", 409: "invalid_request_error", 413: "invalid_request_error",
          415: "invalid_request_error", 429: "rate_limit_error"}
_CODES = {"unauthorized": "invalid_api_key", "invalid_input": "invalid_request_error",
          "invalid_request": "invalid_request_error", "invalid_json": "invalid_request_error",
          "rate_limited": "rate_limit_exceeded"}


def is_openai_path(path: str) -> bool:
    return path.startswith(OPENAI_PREFIX) or path == OPENAI_PREFIX.rstrip("/")


def openai_error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None, param: str | None = None
) -> JSONResponse:
    status = 400 if status == 422 else status
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    answer_headers = dict(headers or {})
    if status in (429, 503):
        answer_headers.setdefault("Retry-After", RETRY_AFTER_SECONDS)
    body = {"error": {"message": message, "type": kind, "param": param, "code": _CODES.get(code, code)}}
    return JSONResponse(body, status_code=status, headers=answer_headers or None)
