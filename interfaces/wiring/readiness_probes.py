"""The parts `GET /readyz` checks, as the settings make them: the database, Redis when a backend
uses it, and every model profile."""

from __future__ import annotations

from typing import TYPE_CHECKING

from infrastructure.models.model_readiness import model_probes
from infrastructure.persistence.database_readiness import DatabaseProbe
from infrastructure.redis_readiness import RedisProbe

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.readiness import ReadinessProbe
    from infrastructure.models.model_profiles import ProfileSpec
    from infrastructure.persistence.database import Database
    from infrastructure.redis_client import RedisClient


def readiness_probes(
    database: Database, redis: RedisClient, backends: Sequence[str], specs: Sequence[ProfileSpec]
) -> list[ReadinessProbe]:
    """`backends`: the memory and events backends; Redis is checked only when one of them is `redis`."""
    probes: list[ReadinessProbe] = [DatabaseProbe(database)]
    if "redis" in backends:
        probes.append(RedisProbe(redis))
    return [*probes, *model_probes(specs)]
