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
    from interfaces.settings.settings import Settings

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
        "MEMAGENT_JOBS__BACKEND": _jobs_problem(settings),
        "MEMAGENT_SERVER__CORS_ORIGINS": _cors_problem(settings),
    }
    return next((f"{name}: {problem}" for name, problem in checks.items() if problem), None)


def _cors_problem(settings: Settings) -> str | None:
    # With keys, any site's page could spend its visitors' keys; without, read the local owner's data.
    if "*" in settings.server.cors_origins:
        return "'*' would let any site's page call memagent; list the origins of your front ends"
    return None


def _jobs_problem(settings: Settings) -> str | None:
    """Job workers are other processes: they must share the memory cache and the record."""
    if settings.jobs.backend != "redis":
        return None
    if settings.memory.backend != "redis":
        return "redis job workers need MEMAGENT_MEMORY__BACKEND=redis, which they share with the API"
    if settings.database.url.startswith("sqlite") and ":memory:" in settings.database.url:
        return "redis job workers need a database they share with the API, not an in-memory SQLite"
    if settings.jobs.timeout < settings.memory.upkeep_lease:
        # A job is retried after its timeout: by then the lock its dead worker held must have lapsed.
        return "MEMAGENT_JOBS__TIMEOUT must be at least MEMAGENT_MEMORY__UPKEEP_LEASE"
    return None
