"""A chat model from `agentscope.model` (OpenAIChatModel, DashScopeChatModel, AnthropicChatModel…)
behind the ChatModel port.

The AgentScope model is built on first use: importing `agentscope.model` takes seconds and
building it may fail on settings, neither of which should slow or break start-up when
another provider is chosen. AgentScope retries by itself (fixed delay, `max_retries` from
our settings unless its kwargs say otherwise), so the SDK's own retries are turned off.
It also swallows cancellation, answering an "interrupted" response instead; the adapter
turns that back into `CancelledError` so that stopping a turn stops it. Its responses carry no
provider's finish reason, so a call that ended normally says "stop" (or "tool_calls").
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import aclosing
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentscope import message as am

from application.errors import ModelError
from application.ports.chat_model import ChatModel, ModelChunk
from domain.tools.calls import ToolCall, ToolSpec, parse_arguments
from domain.tools.client_tools import ChoiceMode
from infrastructure.models.agentscope_convert import to_agentscope
from infrastructure.models.openai_convert import openai_sampling, openai_tools
from infrastructure.models.openai_errors import ModelErrors
from infrastructure.models.provider_config import NO_KEY, ProviderConfig
from infrastructure.models.tool_names import ToolNames

if TYPE_CHECKING:
    from agentscope.model import ChatModelBase, ChatResponse

    from domain.agents.config import ModelCapabilities, ModelParams
    from domain.conversations.messages import Msg

INTERRUPTED = "interrupted"


class AgentScopeChatModel(ChatModel):
    def __init__(self, config: ProviderConfig, class_name: str, kwargs: Mapping[str, Any]) -> None:
        self._config = config
        self._class_name = class_name
        self._kwargs = dict(kwargs)
        self._model: ChatModelBase | None = None
        self._errors = ModelErrors(config.model, config.base_url, config.timeout, config.api_key)

    @property
    def name(self) -> str:
        return self._config.model

    @property
    def capabilities(self) -> ModelCapabilities:
        # agentscope's models take a pydantic class for structured output, not a JSON Schema: the
        # format goes in the system prompt and the answer is checked (application/chat_turn/output_check.py).
        return replace(self._config.capabilities, structured_output=False)

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], params: ModelParams | None = None
    ) -> AsyncGenerator[ModelChunk, None]:
        names = ToolNames.of(tools, messages)
        reply = await self._call(messages, tools, names, params)
        if not isinstance(reply, AsyncGenerator):  # built with stream=False: one whole response
            for text in _texts(reply):
                yield ModelChunk(text=text)
            final: ChatResponse | None = reply
        else:
            final = None
            async with aclosing(reply):  # on our aclose() too: AgentScope then closes its HTTP stream
                try:
                    async for response in reply:
                        if response.is_last:  # the whole reply again, with its usage
                            final = response
                            continue
                        for text in _texts(response):
                            yield ModelChunk(text=text)
                except Exception as error:
                    raise self._errors.translate(error) from error
        for chunk in self._ending(final, names):
            yield chunk

    async def aclose(self) -> None:
        """Closes the SDK client of a model that was built; call it on the loop that used it."""
        client = getattr(self._model, "client", None)
        close = getattr(client, "close", None)
        if close is not None:
            await close()

    async def _call(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], names: ToolNames, params: ModelParams | None
    ) -> ChatResponse | AsyncGenerator[ChatResponse, None]:
        model = self._agentscope_model()
        choice = _tool_choice(params, names) if tools else None
        try:
            return await model(
                to_agentscope(messages, names.wire), tools=openai_tools(tools, names) or None, tool_choice=choice,
                **openai_sampling(params),
            )
        except Exception as error:  # AgentScope opens the response here: nothing of an answer came yet
            raise self._errors.translate(error, before_answer=True) from error

    def _ending(self, final: ChatResponse | None, names: ToolNames) -> list[ModelChunk]:
        if final is None or final.finished_reason == INTERRUPTED:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError
            raise ModelError("The model server closed the connection before the answer was complete.")
        calls = tuple(
            ToolCall(block.id, names.domain(block.name), parse_arguments(block.input))
            for block in final.content
            if isinstance(block, am.ToolCallBlock)
        )
        # AgentScope keeps no provider's finish reason ("completed" is all it says): a call that
        # ended normally stopped, or stopped for its tool calls.
        reason = "tool_calls" if calls else "stop"
        usage = final.usage
        if usage is None:
            return [ModelChunk(tool_calls=calls, finish_reason=reason)]
        ending = [ModelChunk(tool_calls=calls)] if calls else []
        price = self._config.price.usage(usage.input_tokens, usage.output_tokens)
        return [*ending, ModelChunk(usage=price, finish_reason=reason)]

    def _agentscope_model(self) -> ChatModelBase:
        if self._model is None:
            try:
                self._model = build_agentscope_model(self._class_name, self._kwargs, self._config)
            except ModelError:
                raise
            except Exception as error:  # bad kwargs, a missing optional SDK…
                raise self._errors.translate(error) from error
        return self._model


def _texts(response: ChatResponse) -> list[str]:
    return [block.text for block in response.content if isinstance(block, am.TextBlock) and block.text]


def build_agentscope_model(class_name: str, kwargs: Mapping[str, Any], config: ProviderConfig) -> ChatModelBase:
    """`kwargs` may hold `credential` and `parameters` as dicts; our settings fill what they omit."""
    from agentscope import model as models

    cls = getattr(models, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, models.ChatModelBase)):
        raise ModelError(f"agentscope.model has no chat model class {class_name!r}.")
    options = dict(kwargs)
    accepted = inspect.signature(cls.__init__).parameters
    credential = _credential(accepted["credential"].annotation, options.pop("credential", {}), config)
    parameters = dict(options.pop("parameters", {}))
    if "temperature" in cls.Parameters.model_fields:
        parameters.setdefault("temperature", config.temperature)
    options.setdefault("max_retries", config.max_retries)
    options.setdefault("retry_delay", config.retry_initial_delay)
    if "client_kwargs" in accepted:
        options["client_kwargs"] = {
            "timeout": config.timeout,
            "max_retries": 0,
            **options.get("client_kwargs", {}),
        }
    return cls(credential=credential, model=config.model, parameters=cls.Parameters(**parameters), **options)


def _credential(credential_class: Any, given: Mapping[str, Any], config: ProviderConfig) -> Any:
    ours = {"api_key": config.api_key or NO_KEY, "base_url": config.base_url}
    fields = credential_class.model_fields
    return credential_class(**{k: v for k, v in ours.items() if k in fields and v is not None} | dict(given))


def _tool_choice(params: ModelParams | None, names: ToolNames) -> Any:
    """The call's forced choice among its tools, in AgentScope's terms (None: the model decides)."""
    from agentscope.tool import ToolChoice  # imported with the model, on first use (see above)

    choice = params.tool_choice if params is not None else None
    if choice is None or not choice.forces:
        return None
    return ToolChoice(mode="required" if choice.mode is ChoiceMode.REQUIRED else names.wire(choice.name))
