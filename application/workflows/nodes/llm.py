"""`llm`: `prompt` and an optional `system` (templates) to a model profile → `<id>.text`; with an
`output_schema`, the answer is parsed and checked against it → `<id>.json` as well.

The profile is the node's `model`, else the calling agent's, else `default`. `models` must be the
profiles' models metered under the purpose `workflow` (infrastructure/metrics/metered_chat_model.py):
so each call lands in the cost ledger as one of the workflow's, billed to the scope the run set
(application/model_calls/call_scope.py), and its usage (tokens, price) is the node's.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from application.errors import NodeFailed
from application.workflows.node_work import NodeResult
from domain.conversations.messages import Msg, Role, TextBlock, Usage
from domain.conversations.structured_output import OutputFormat, OutputKind, parsed_answer
from domain.workflows.runs import Spent

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.ports.chat_model import ChatModel
    from application.ports.chat_models import ChatModels
    from application.ports.runtime import Clock, IdGenerator
    from application.ports.schema_check import SchemaCheck
    from application.ports.templates import Templates
    from application.workflows.node_work import RunContext
    from domain.workflows.graph import Node

DEFAULT_PROFILE = "default"


class LlmWork:
    def __init__(
        self, models: ChatModels, templates: Templates, schemas: SchemaCheck, clock: Clock, ids: IdGenerator,
    ) -> None:
        self._models = models
        self._templates = templates
        self._schemas = schemas
        self._clock = clock
        self._ids = ids

    async def __call__(self, node: Node, scope: Mapping[str, Any], context: RunContext) -> NodeResult:
        config = node.config
        profile = config.get("model") or context.model or DEFAULT_PROFILE
        model = self._models.get(profile)
        if model is None:
            raise NodeFailed(f"The model profile {profile!r} is not configured on this server.")
        prompt = await self._templates.render(config["prompt"], scope)
        system = await self._templates.render(config["system"], scope) if config.get("system") else ""
        schema = config.get("output_schema")
        if schema:
            system = f"{system}\n\n{OutputFormat(OutputKind.JSON_SCHEMA, schema).instructions()}".strip()
        text, usage = await self._ask(model, system, prompt)
        inputs = {"model": profile, "system": system, "prompt": prompt}
        outputs: dict[str, Any] = {"text": text}
        spent = Spent(usage.total_tokens, usage.price)
        if schema:
            outputs["json"] = await self._checked(text, schema)
        return NodeResult(outputs, inputs=inputs, spent=spent)

    async def _ask(self, model: ChatModel, system: str, prompt: str) -> tuple[str, Usage]:
        messages = [self._msg(Role.USER, prompt)]
        if system:
            messages.insert(0, self._msg(Role.SYSTEM, system))
        parts: list[str] = []
        usage = Usage()
        async with aclosing(model.stream(messages, ())) as chunks:  # a cancelled run cancels the call
            async for chunk in chunks:
                parts.append(chunk.text)
                usage = chunk.usage or usage
        return "".join(parts), usage

    async def _checked(self, text: str, schema: Mapping[str, Any]) -> Any:
        value, problem = parsed_answer(text)
        if problem is None:
            problem = await self._schemas.value_problem(value, schema)
        if problem is not None:
            raise NodeFailed(f"The model's answer does not match the output schema: {problem}.")
        return value

    def _msg(self, role: Role, text: str) -> Msg:
        return Msg(self._ids.new_id(), role.value, role, (TextBlock(text),), self._clock.now())
