"""The OpenAI-protocol test server as pytest fixtures: one per module, emptied before each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm_server import ScriptedLLMServer


@pytest.fixture(scope="module")
def shared_server() -> Iterator[ScriptedLLMServer]:
    """Starting a server costs ~0.2 s, so a module shares one; it runs in its own thread."""
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture
def server(shared_server: ScriptedLLMServer) -> ScriptedLLMServer:
    """The module's server with no scripts queued and no requests recorded."""
    shared_server.reset()
    return shared_server
