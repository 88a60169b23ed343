"""The process's logging, once the settings are read: one handler on the root logger (stderr), in
the format MEMAGENT_LOG__FORMAT names, masking the settings' secrets, and writing a client's
repeated mistakes once a minute (`RepeatLimit`). uvicorn's loggers (its errors and its access log)
propagate to it: `memagent serve` gives uvicorn no logging config, only
MEMAGENT_SERVER__LOG_LEVEL as their level. saq's logger gets that level too, in `memagent worker`
and in the API's processes (which enqueue the jobs)."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from application.errors import InvalidInput, ModelError
from infrastructure.jobs.saq_job_worker import SAQ_LOGGER
from infrastructure.logs.log_format import JsonFormatter, TextFormatter
from infrastructure.logs.redaction import Redactor
from infrastructure.logs.repeat_limit import RepeatLimit
from infrastructure.models.model_profiles import read_key

if TYPE_CHECKING:
    from collections.abc import Iterator

    from interfaces.settings.settings import Settings

SECRET_NAME = re.compile(r"key|token|secret|password|auth", re.IGNORECASE)  # an MCP server's env or header


def configure_logging(settings: Settings, level: int) -> None:
    redact = Redactor(secrets_of(settings))
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter(redact) if settings.log.format == "json" else TextFormatter(redact))
    handler.addFilter(RepeatLimit())  # a client repeating a bad call does not flood the log
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)


def configure_job_logging(settings: Settings) -> None:
    """saq logs every job at INFO (enqueued, finished): at MEMAGENT_SERVER__LOG_LEVEL=warning or above,
    as with uvicorn's per-request lines, those are left out. memagent's own loggers keep the process's
    level. An unknown level is `InvalidInput`, so that a command refuses it before it starts."""
    logging.getLogger(SAQ_LOGGER).setLevel(_server_log_level(settings))


def _server_log_level(settings: Settings) -> int:
    """The level named as `memagent serve` hands it to uvicorn, read with uvicorn's own table."""
    from uvicorn.config import LOG_LEVELS  # not at import: most commands never load uvicorn

    level = LOG_LEVELS.get(settings.server.log_level.lower())
    if level is None:
        raise InvalidInput(f"MEMAGENT_SERVER__LOG_LEVEL is one of {', '.join(LOG_LEVELS)}, "
                           f"not {settings.server.log_level!r}.")
    return level


def secrets_of(settings: Settings) -> Iterator[str | None]:
    """Every secret value the settings hold, for the redactor."""
    for secret in (settings.llm.api_key, settings.embeddings.api_key, settings.metrics.token):
        yield secret.get_secret_value() if secret is not None else None
    yield _password(settings.database.url)
    yield _password(settings.redis.url.get_secret_value())
    for profile in settings.models:
        try:
            yield read_key(profile.api_key_env, profile.api_key_file)
        except ModelError:  # the settings check refuses such a profile
            continue
    for server in settings.mcp.servers:
        for name, value in (server.env | server.headers).items():
            if SECRET_NAME.search(name):
                yield value


def _password(url: str) -> str | None:
    try:
        return make_url(url).password
    except (ArgumentError, ValueError):
        return None
