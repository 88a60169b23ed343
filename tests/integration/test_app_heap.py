"""The app's lifespan freezes its start-up heap (see `frozen_startup_heap`) and thaws it at shutdown."""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

import pytest

from interfaces.app import create_app
from interfaces.settings.settings import Settings

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


async def test_a_running_app_keeps_its_start_up_heap_out_of_full_collections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMAGENT_DATABASE__URL", f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}")
    monkeypatch.setenv("MEMAGENT_MCP__ENDPOINT", "false")
    app = create_app(Settings())
    async with app.router.lifespan_context(app):
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
