"""The calling account's published workflows as tools of memagent's MCP server, besides its built-in
tools (docs/workflows.md, "As MCP tools").

The SDK's `@server.tool()` registry is one list for every caller, but over HTTP each request acts for
the owner of its key. So the server answers `tools/list` from its own registered handler, which the
SDK's low-level server calls with the request's context (the SDK expects that catalogue to be scoped
to the caller: it is also what it reads to check a call's `Mcp-Param-*` headers), and `tools/call`
from `call_tool`, which looks a name that is no built-in tool up among the caller's workflows.

A workflow named like a built-in tool is not offered: the built-in keeps its name, as in a turn,
where an agent is offered no workflow whose name another tool has.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, CallToolResult, ListToolsResult, TextContent, Tool

from application.errors import NotFound
from interfaces.mcp.tool_errors import tool_errors

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from mcp.server.context import ServerRequestContext
    from mcp.types import InputRequiredResult, PaginatedRequestParams

    from application.workflows.published_workflows import PublishedWorkflows
    from domain.ids import OwnerId
    from domain.tools.calls import ToolSpec

    # The owner a request acts for; raises `ToolError` when it cannot be told.
    OwnerOfRequest = Callable[[Context], Awaitable[OwnerId]]

# Where a workflow tool's result names its run, for GET /api/workflow-runs/{id}.
RUN_ID_META = "memagent/workflow_run_id"


class WithWorkflowTools(MCPServer):
    def __init__(self, *args: Any, owner: OwnerOfRequest, workflows: PublishedWorkflows, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._owner = owner
        self._workflows = workflows

    async def _handle_list_tools(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        built_in = await self.list_tools()
        taken = {tool.name for tool in built_in}
        try:
            with tool_errors():
                specs = await self._workflows.specs(await self._owner(Context(request_context=ctx, mcp_server=self)))
        except ToolError as failure:  # a listing has no tool result to carry it
            raise MCPError(INTERNAL_ERROR, str(failure)) from None
        return ListToolsResult(tools=[*built_in, *(_tool(spec) for spec in specs if spec.name not in taken)])

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        if context is None or name in {tool.name for tool in await self.list_tools()}:
            return await super().call_tool(name, arguments, context)
        owner = await self._owner(context)
        with tool_errors():
            workflow = await self._workflows.named(owner, name)
        if workflow is None:
            raise ToolError(f"{NotFound.code}: Unknown tool: {name[:100]}.")
        try:
            with tool_errors():
                run = await self._workflows.run(workflow, arguments)
        # As the SDK words a built-in tool's failure; a crash's own text stays in the server's log.
        except ToolError as failure:
            raise ToolError(f"Error executing tool {name}: {failure}") from None
        except Exception as crash:
            raise UnexpectedToolError(f"Error executing tool {name}") from crash
        outputs = dict(run.outputs)
        text = json.dumps(outputs, indent=2, ensure_ascii=False, default=str)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=outputs,
                              _meta={RUN_ID_META: run.id})


def _tool(spec: ToolSpec) -> Tool:
    return Tool(name=spec.name, description=spec.description, input_schema=dict(spec.parameters))
