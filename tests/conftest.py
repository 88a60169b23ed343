# Fixtures shared by several test modules, found by name wherever a test asks for them.
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

pytest_plugins = ["tests.integration.llm_server_fixtures"]

# The files that take longest (a minute or more on 2 cores: service starts, browsers, schemathesis,
# benchmarks), longest first. `--dist loadfile` hands files to workers in collection order, so these
# go first and the run does not end waiting on one of them started last.
SLOW_FIRST = (
    "tests/integration/test_openapi_contract_with_keys.py",
    "tests/integration/test_openapi_contract.py",
    "tests/e2e/test_keys_and_owners.py",
    "tests/integration/test_user_memory_bench_quick.py",
    "tests/integration/test_server_peers_bench_quick.py",
    "tests/integration/test_local_embedder.py",
    "tests/integration/test_serve_workers.py",
    "tests/integration/test_workflow_runs_over_http.py",
    "tests/integration/test_workflows_over_http.py",
    "tests/integration/test_startup_failures.py",
    "tests/integration/test_mcp_server.py",
    "tests/integration/test_config_matrix.py",
    "tests/integration/test_openai_api.py",
    "tests/integration/test_openai_client_tools.py",
    "tests/integration/test_titles_and_follow_ups_over_http.py",
    "tests/integration/test_openai_responses.py",
    "tests/integration/test_user_memory_api_over_http.py",
    "tests/integration/test_agent_loop_over_http.py",
    "tests/e2e/test_web_controls.py",
    "tests/e2e/test_web_builder.py",
    "tests/e2e/test_builder_workflows.py",
    "tests/integration/test_workflow_tools_in_a_turn.py",
    "tests/e2e/test_web_chat.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: index for index, path in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: the rest keep their order
