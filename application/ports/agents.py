from typing import Protocol

from domain.agent import AgentConfig
from domain.ids import AppId


class AgentConfigs(Protocol):
    async def get(self, app_id: AppId, draft: bool) -> AgentConfig | None:
        """The draft config (for the debugger) or the published one."""
        ...
