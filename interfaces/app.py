"""The FastAPI application: routes, error handlers, and the container's lifecycle."""

from __future__ import annotations

import contextlib
import logging
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from fastapi import FastAPI

from interfaces.a2a.routes import A2ARoutes
from interfaces.http import (
    agent_keys,
    agent_parameters,
    agent_stats,
    agents,
    chat,
    conversation_usage,
    conversations,
    datasets,
    follow_ups,
    health,
    history,
    mcp_metadata,
    memory,
    messages,
    metrics,
    models,
    openai_api,
    responses_api,
    tasks,
    tools,
    user_memory,
    web,
    workflow_runs,
    workflows,
)
from interfaces.http.body_limit import BodyLimit, BodyLimits
from interfaces.http.cors import allow_origins
from interfaces.http.errors import install_error_handlers
from interfaces.http.key_gate import KeyGate
from interfaces.http.mcp_path import MCP_PATH, McpPath
from interfaces.http.openapi import install_openapi
from interfaces.http.stream_gauge import StreamGauge
from interfaces.http.trace_context import TraceContext
from interfaces.http.unread_body import UnreadBodyCloses
from interfaces.lifecycle import (
    frozen_startup_heap,
    metrics_reporting,
    retention_pruner,
    stale_turn_sweeper,
    start_backends,
    stop_backends,
)
from interfaces.mcp.endpoint import McpEndpoint
from interfaces.settings.settings import Settings
from interfaces.wiring.build import build_container
from interfaces.wiring.container import WIRED_PACKAGES

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from interfaces.wiring.container import Container

log = logging.getLogger(__name__)


def create_app(settings: Settings | None = None, container: Container | None = None) -> FastAPI:
    settings = settings or Settings()
    container = container or build_container(settings)
    # memagent's own MCP endpoint (built with its first request) and A2A servers (the SDK loaded likewise).
    mcp = McpEndpoint(container, loopback_only=not settings.auth.require_keys) if settings.mcp.endpoint else None
    a2a = A2ARoutes(container, settings.a2a.max_tasks) if settings.a2a.enabled else None

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await start_backends(container, settings)
        try:
            # MCP servers whose tools agents use: a server that cannot start is logged, not fatal.
            await container.tool_servers().start()
            async with (
                stale_turn_sweeper(container, settings), metrics_reporting(container, settings),
                mcp.running() if mcp is not None else contextlib.nullcontext(),
                retention_pruner(container, settings),
            ):
                with frozen_startup_heap():
                    yield
        finally:
            try:
                if a2a is not None:
                    await a2a.aclose()  # its running tasks, before the backends they use
                await stop_backends(container)
            finally:
                await container.tool_servers().close()

    app = FastAPI(title="memagent", version="0.1.0", lifespan=lifespan)
    app.state.container = container
    container.wire(packages=list(WIRED_PACKAGES))  # the routes' `Provide[...]` resolve from this container
    for module in (chat, tasks, history, datasets, memory, health, agents, models, follow_ups, agent_keys,
                   agent_parameters, agent_stats, conversations, messages, user_memory, openai_api, web, metrics,
                   tools, conversation_usage, responses_api, workflows, workflow_runs):
        app.include_router(module.router)
    if a2a is not None:
        app.router.routes.extend(a2a.routes)
    if mcp is not None:
        app.mount(MCP_PATH, mcp)
        app.add_middleware(McpPath)
        app.include_router(mcp_metadata.router)
    install_error_handlers(app)
    install_openapi(app, keys_required=settings.auth.require_keys)
    # Outermost first: the key, then the body's size, are checked before anything reads the body.
    limits = BodyLimits(
        settings.server.max_body_bytes, datasets.upload_bound(settings.knowledge.max_document_bytes),
        completions=settings.server.max_completion_body_bytes,
    )
    app.add_middleware(BodyLimit, limits=limits)
    # Any answer sent before the body is read (the MCP endpoint's 401, a 404, a 405) closes the connection.
    app.add_middleware(UnreadBodyCloses)
    app.add_middleware(StreamGauge, metrics=container.metrics)
    app.add_middleware(KeyGate, authenticate=container.authenticate)
    # Outside the key gate: a preflight carries no key, and a refusal must still be readable by the page.
    allow_origins(app, settings.server.cors_origins)
    app.add_middleware(TraceContext, tracer=container.tracer)  # outermost: all of a request runs in its trace
    return app
