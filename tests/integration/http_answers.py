"""Reading the API's answers in HTTP tests: a success's JSON, or an error's `{code, message}`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx


def ok(response: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    data: dict[str, Any] = response.json()
    return data


def refused(response: httpx.Response, status: int, code: str | None = None) -> str:
    """The error's message; `code` None: any (a body refused by its schema is `invalid_request`)."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"code", "message"}, body
    assert code is None or body["code"] == code, response.text
    return str(body["message"])
