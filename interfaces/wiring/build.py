"""The container built from the settings: the one recipe every command starts from.

Kept apart from the web app (app.py), so that commands that serve no HTTP (`memagent keys`,
`migrate`, `agents`, `prune`, `worker`, `mcp`) build their objects without importing its routes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from interfaces.wiring.container import Container

if TYPE_CHECKING:
    from interfaces.settings.settings import Settings


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
        "embeddings": {
            **settings.embeddings.model_dump(),
            "api_key": settings.embeddings.api_key.get_secret_value() if settings.embeddings.api_key else None,
        },
        "metrics": {
            **settings.metrics.model_dump(),
            "token": settings.metrics.token.get_secret_value() if settings.metrics.token else None,
        },
    }
