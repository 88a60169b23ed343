"""ListTools: the tools an agent config may name (`tools`), for the account that builds agents: the
built-in ones and each configured MCP server's, under the names the config takes."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from application.ports.tools import ToolCatalog, ToolCatalogue


class ListTools:
    def __init__(self, catalog: ToolCatalog) -> None:
        self._catalog = catalog

    def __call__(self) -> ToolCatalogue:
        # Worked out on each call: a server that came up since the last one adds its tools.
        return self._catalog.catalogue()
