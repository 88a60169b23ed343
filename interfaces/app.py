"""The FastAPI application: routes, error handlers, and the container's lifecycle."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from interfaces.container import Container
from interfaces.http import chat, health, history, tasks
from interfaces.http.errors import install_error_handlers
from interfaces.lifecycle import start_backends, stop_backends
from interfaces.settings import Settings

log = logging.getLogger(__name__)


def build_container(settings: Settings) -> Container:
    container = Container()
    container.config.from_dict(plain_settings(settings))
    return container


def plain_settings(settings: Settings) -> dict[str, object]:
    """Settings as plain values for the container; secrets are unwrapped only here."""
    return settings.model_dump(mode="python") | {
        "redis": {**settings.redis.model_dump(), "url": settings.redis.url.get_secret_value()},
        "llm": {
            **settings.llm.model_dump(),
            "api_key": settings.llm.api_key.get_secret_value() if settings.llm.api_key else None,
        },
    }


def create_app(settings: Settings | None = None, container: Container | None = None) -> FastAPI:
    settings = settings or Settings()
    container = container or build_container(settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await start_backends(container, settings)
        try:
            yield
        finally:
            await stop_backends(container)

    app = FastAPI(title="memagent", version="0.1.0", lifespan=lifespan)
    app.state.container = container
    for module in (chat, tasks, history, health):
        app.include_router(module.router)
    install_error_handlers(app)
    return app
