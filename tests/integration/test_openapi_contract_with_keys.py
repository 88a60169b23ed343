"""The OpenAPI spec and the API agree on PostgreSQL + Redis with keys required: schemathesis with
every check, as test_openapi_contract.py runs it on the embedded default."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.e2e.test_keys_and_owners import create_key
from tests.integration.streaming_helpers import serving, shared_backends
from tests.integration.test_openapi_contract import assert_no_failures, schemathesis

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


def test_postgres_and_redis_with_keys_answer_as_their_spec_says(tmp_path: Path) -> None:
    with shared_backends({"MEMAGENT_AUTH__REQUIRE_KEYS": "true"}) as env:
        key = create_key(env["MEMAGENT_DATABASE__URL"], "schemathesis")
        with serving(env, tmp_path) as service:
            assert_no_failures(schemathesis(service.base_url, f"Authorization: Bearer {key.raw}"))
