"""MEMAGENT_MCP__* and MEMAGENT_A2A__*: the MCP servers agents use, and memagent's own MCP and A2A endpoints."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator


class McpServerSettings(BaseModel):
    """An MCP server whose tools agents may use. stdio: `command`, `args`, `env`, `cwd`; http (Streamable
    HTTP): `url`, `headers`. `timeout`: seconds per tools/call."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$")
    transport: Literal["stdio", "http"] = "stdio"
    command: str = ""
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = {}
    timeout: float = Field(30.0, gt=0)

    @model_validator(mode="after")
    def _transport_needs(self) -> McpServerSettings:
        if self.transport == "stdio" and not self.command:
            raise ValueError(f"MCP server {self.name!r}: a stdio server needs a command")
        if self.transport == "http" and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"MCP server {self.name!r}: an http server needs an http(s) url")
        return self


class McpSettings(BaseModel):
    """MCP: the servers whose tools agents use (JSON list, MEMAGENT_MCP__SERVERS), and memagent's own
    MCP endpoint at /mcp/ (`endpoint`)."""

    servers: list[McpServerSettings] = []
    startup_timeout: float = Field(10.0, gt=0, description="seconds a server gets to start and list its tools")
    retry_interval: float = Field(30.0, ge=0, description="seconds between retries of a failed server; 0: never")
    endpoint: bool = True

    @model_validator(mode="after")
    def _unique_names(self) -> McpSettings:
        names = [s.name for s in self.servers]
        if len(set(names)) != len(names):
            raise ValueError(f"MCP server names must be unique: {names}")
        return self


class A2ASettings(BaseModel):
    """Every published agent as an A2A server at /a2a/{agent} (`enabled`). `max_tasks`: the A2A tasks
    this process keeps for `tasks/get` (the oldest are forgotten first; their turns stay stored)."""

    enabled: bool = True
    max_tasks: int = Field(10_000, ge=1)
