"""MEMAGENT_DATABASE__*, MEMAGENT_REDIS__* and MEMAGENT_EVENTS__*: where records, caches and event logs live."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr


class DatabaseSettings(BaseModel):
    url: str = "sqlite+aiosqlite:///./data/memagent.db"
    pool_size: int = Field(20, ge=1, description="connections kept open (PostgreSQL)")
    max_overflow: int = Field(20, ge=0, description="connections opened beyond pool_size under load, then closed")


class RedisSettings(BaseModel):
    url: SecretStr = SecretStr("redis://127.0.0.1:6379/0")
    key_prefix: str = "memagent:"


class EventsSettings(BaseModel):
    backend: Literal["inprocess", "redis"] = "inprocess"
    retention: float = Field(3600.0, gt=0, description="seconds a finished task stays replayable")
    keepalive: float = Field(15.0, gt=0, description="seconds of silence before an SSE `: ping`")
    stream_maxlen: int = Field(10_000, gt=0)
