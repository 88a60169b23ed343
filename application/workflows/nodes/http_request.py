"""`http_request`: `method`, `url`, `headers`, `body` (templates) and `timeout`, sent through the
guarded client → `<id>.status`, `<id>.body`, and `<id>.json` (None when the body is no JSON)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from application.ports.outbound_http import OutboundRequest
from application.workflows.node_work import NodeResult

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.ports.outbound_http import OutboundHttp
    from application.ports.templates import Templates
    from application.workflows.node_work import RunContext
    from domain.workflows.graph import Node

DEFAULT_TIMEOUT = 10.0


class HttpRequestWork:
    """A response of any status is the node's outputs: a 404 is for the graph to branch on, not a failure."""

    def __init__(self, http: OutboundHttp, templates: Templates) -> None:
        self._http = http
        self._templates = templates

    async def __call__(self, node: Node, scope: Mapping[str, Any], context: RunContext) -> NodeResult:
        request = await self._request(node.config, scope)
        response = await self._http.send(request)
        inputs = {"method": request.method, "url": request.url, "headers": dict(request.headers), "body": request.body}
        return NodeResult({"status": response.status, "body": response.body, "json": _json(response.body)},
                          inputs=inputs)

    async def _request(self, config: Mapping[str, Any], scope: Mapping[str, Any]) -> OutboundRequest:
        render = self._templates.render
        headers = tuple([(name, await render(value, scope)) for name, value in config.get("headers", {}).items()])
        body = config.get("body")
        return OutboundRequest(
            method=str(config.get("method", "GET")).upper(), url=await render(config["url"], scope), headers=headers,
            body=await render(body, scope) if body is not None else None,
            timeout=float(config.get("timeout", DEFAULT_TIMEOUT)),
        )


def _json(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None
