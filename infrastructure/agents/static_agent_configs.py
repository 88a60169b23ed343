from __future__ import annotations

from typing import TYPE_CHECKING

from application.ports.agents import AgentConfigs

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.agent import AgentConfig
    from domain.ids import AppId


class StaticAgentConfigs(AgentConfigs):
    """Agents fixed at start-up (from settings); the draft and the published config are the same."""

    def __init__(self, configs: Sequence[AgentConfig]) -> None:
        self._configs = {config.app_id: config for config in configs}

    async def get(self, app_id: AppId, draft: bool) -> AgentConfig | None:
        return self._configs.get(app_id)
