"""MEMAGENT_SERVER__* and MEMAGENT_AUTH__*: where the HTTP server listens, what it accepts, and from whom."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, Field


def _origin(value: str) -> str:
    """An origin as a browser sends it (`scheme://host[:port]`, nothing after), or `*` for any."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 -- reading it checks it
    except ValueError:
        parts = None
    if value != "*" and (
        parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.username is not None
        or parts.path or parts.query or parts.fragment
    ):
        raise ValueError(f"{value[:80]!r} is not an origin such as https://app.example.com or http://localhost:5173")
    return value


class ServerSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    log_level: str = "info"
    max_body_bytes: int = Field(
        256 * 1024, ge=1024,
        description="bytes a JSON request body may have (document uploads: from knowledge.max_document_bytes)",
    )
    max_completion_body_bytes: int = Field(
        8 * 1024 * 1024, ge=1024,
        description="bytes of a /v1/chat/completions or /v1/responses body: clients resend the whole history",
    )
    cors_origins: list[Annotated[str, AfterValidator(_origin)]] = Field(
        default_factory=list,
        description="origins whose pages may call the API from a browser (a JSON list); none: same origin only",
    )


class AuthSettings(BaseModel):
    """With `require_keys`, every request needs `Authorization: Bearer <key>` (`memagent keys create`).
    Without it (single-user mode) requests without a key act as the owner `local`, and `memagent serve`
    only binds to a loopback address."""

    require_keys: bool = False
