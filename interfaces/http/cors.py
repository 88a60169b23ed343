"""Cross-origin requests: the browsers' CORS rules, by Starlette's `CORSMiddleware`.

A page on another origin (a dev server on `localhost:5173`, `app.example.com` calling
`api.example.com`) may call memagent only when its origin is listed in
`MEMAGENT_SERVER__CORS_ORIGINS`; any other origin gets no CORS header, so its browser refuses the
answer. The key travels in `Authorization`, never in a cookie, so credentials stay off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.middleware.cors import CORSMiddleware

if TYPE_CHECKING:
    from fastapi import FastAPI

ALLOWED_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]
# What a page sends: its key, a JSON body, the id to resume a stream from, the conversation to go on.
ALLOWED_HEADERS = ["Authorization", "Content-Type", "Last-Event-ID", "X-Memagent-Conversation-Id"]
# What a page may read of an answer besides the CORS-safelisted headers.
EXPOSED_HEADERS = [
    "X-Memagent-Conversation-Id", "X-Memagent-Message-Id", "X-Memagent-Task-Id", "Retry-After",
]
PREFLIGHT_CACHE_S = 600


def allow_origins(app: FastAPI, origins: list[str]) -> None:
    """Answer preflights and tag answers for `origins`; with none, the app stays same-origin only."""
    if not origins:
        return
    app.add_middleware(
        CORSMiddleware, allow_origins=origins, allow_methods=ALLOWED_METHODS, allow_headers=ALLOWED_HEADERS,
        expose_headers=EXPOSED_HEADERS, allow_credentials=False, max_age=PREFLIGHT_CACHE_S,
    )
