"""Settings from the environment: prefix MEMAGENT_, nesting with `__`.

Example: MEMAGENT_MEMORY__BACKEND=redis, MEMAGENT_LLM__API_KEY=sk-...
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class DatabaseSettings(BaseModel):
    url: str = "sqlite+aiosqlite:///./data/memagent.db"


class RedisSettings(BaseModel):
    url: SecretStr = SecretStr("redis://127.0.0.1:6379/0")
    key_prefix: str = "memagent:"


class MemorySettings(BaseModel):
    backend: Literal["inprocess", "redis"] = "inprocess"
    window_ttl: float = Field(86400.0, gt=0, description="seconds a cached window lives in Redis")


class EventsSettings(BaseModel):
    backend: Literal["inprocess", "redis"] = "inprocess"
    retention: float = Field(3600.0, gt=0, description="seconds a finished task stays replayable")
    keepalive: float = Field(15.0, gt=0, description="seconds of silence before an SSE `: ping`")
    stream_maxlen: int = Field(10_000, gt=0)


class LLMSettings(BaseModel):
    provider: Literal["scripted", "openai"] = "scripted"
    base_url: str | None = None
    api_key: SecretStr | None = None
    model: str = "gpt-4o-mini"
    temperature: float = Field(0.7, ge=0, le=2)
    timeout: float = Field(60.0, gt=0)
    scripted_chunk_delay: float = Field(0.0, ge=0, description="seconds between scripted chunks")


class AgentSettings(BaseModel):
    """The default agent (app id `default`)."""

    preset_prompt: str = "You are a helpful assistant."
    dialog_round: int = Field(10, ge=0)
    history_max_tokens: int = Field(3000, ge=0)
    tools: list[str] = ["current_time"]
    max_tool_rounds: int = Field(5, ge=0)
    input_review_keywords: list[str] = []
    output_review_keywords: list[str] = []
    review_response: str = "Sorry, I can't help with that."


class TurnSettings(BaseModel):
    timeout: float = Field(600.0, gt=0)
    stop_check_interval: float = Field(0.2, ge=0)
    tool_timeout: float = Field(30.0, gt=0)
    tool_retries: int = Field(2, ge=0)
    tool_retry_delay: float = Field(1.0, ge=0)
    max_query_bytes: int = Field(32 * 1024, gt=0)
    task_ttl: float = Field(1800.0, gt=0)


class ServerSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = Field(8000, ge=1, le=65535)
    log_level: str = "info"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MEMAGENT_", env_nested_delimiter="__", extra="ignore")

    database: DatabaseSettings = DatabaseSettings()
    redis: RedisSettings = RedisSettings()
    memory: MemorySettings = MemorySettings()
    events: EventsSettings = EventsSettings()
    llm: LLMSettings = LLMSettings()
    agent: AgentSettings = AgentSettings()
    turn: TurnSettings = TurnSettings()
    server: ServerSettings = ServerSettings()
    tokenizer_encoding: str = "cl100k_base"
