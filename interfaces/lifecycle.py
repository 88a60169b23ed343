"""Start-up checks and shutdown of the backends the container built."""

from __future__ import annotations

import logging

from interfaces.container import Container
from interfaces.settings import Settings

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 10.0


def uses_redis(settings: Settings) -> bool:
    return "redis" in (settings.memory.backend, settings.events.backend)


async def start_backends(container: Container, settings: Settings) -> None:
    """Connect to what the settings name; raises ApplicationError with one readable line."""
    await container.database().start()
    if uses_redis(settings):
        await container.redis().ping()


async def stop_backends(container: Container) -> None:
    await container.spawner().drain(SHUTDOWN_GRACE)
    await container.redis().close()
    await container.database().dispose()
