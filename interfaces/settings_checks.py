"""Settings that would fail later, checked before anything starts: one line naming the setting.

A malformed port in a database or Redis URL would otherwise end in a traceback of the driver, and
a model URL holding credentials would start and then fail every turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from infrastructure.embeddings.local_embedder import local_model_problem
from infrastructure.models.provider_config import base_url_problem
from infrastructure.persistence.urls import url_problem

if TYPE_CHECKING:
    from interfaces.settings import Settings

REDIS_SCHEMES = ("redis", "rediss", "unix")


def redis_url_problem(url: str) -> str | None:
    """Why `url` is not a Redis URL, or None; never quotes it (it may hold a password)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- reading it checks it
    except ValueError:
        return "the port of the Redis URL is not a number from 0 to 65535"
    if parts.scheme not in REDIS_SCHEMES:
        return "not a Redis URL (redis://, rediss:// or unix://)"
    return None


def settings_problem(settings: Settings) -> str | None:
    """`SETTING: why` for the first setting that cannot work, or None."""
    checks = {
        "MEMAGENT_DATABASE__URL": url_problem(settings.database.url),
        "MEMAGENT_REDIS__URL": redis_url_problem(settings.redis.url.get_secret_value()),
        "MEMAGENT_LLM__BASE_URL": base_url_problem(settings.llm.base_url) if settings.llm.base_url else None,
        "MEMAGENT_EMBEDDINGS__BASE_URL": (
            base_url_problem(settings.embeddings.base_url) if settings.embeddings.base_url else None
        ),
        "MEMAGENT_EMBEDDINGS__LOCAL_MODEL": (
            local_model_problem(settings.embeddings.local_model) if settings.embeddings.backend == "local" else None
        ),
    }
    return next((f"{name}: {problem}" for name, problem in checks.items() if problem), None)
