"""What well-known models can do, by name, so that most deployments need no overrides.

The table is matched against the model's base name (lower case, without an
`org/` prefix, as vLLM and OpenRouter spell them); the first matching pattern
wins, so specific patterns come before the families they belong to. A model
no pattern knows gets ReAct (reasoning, no native tool calls, no images): it
works with any text model, where native tool calls would fail on a server that
does not support them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from domain.agents.config import ModelCapabilities

if TYPE_CHECKING:
    from collections.abc import Mapping

_ALL = ModelCapabilities(tool_call=True, agent_thought=True, image_input=True)
_OPENAI = ModelCapabilities(tool_call=True, agent_thought=True, image_input=True, structured_output=True)
_TOOLS = ModelCapabilities(tool_call=True, agent_thought=True, image_input=False)
_REASONING = ModelCapabilities(tool_call=False, agent_thought=True, image_input=False)

_TABLE: tuple[tuple[str, ModelCapabilities], ...] = (
    (r"gpt-3\.5", _TOOLS),
    (r"gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5", _OPENAI),  # OpenAI's JSON Schema output
    (r"gpt-4-turbo", _ALL),
    (r"o1-mini|o1-preview", _REASONING),  # no tools, no images
    (r"o3-mini", _TOOLS),
    (r"o\d", _OPENAI),  # o1, o3, o4-mini
    (r"deepseek-reasoner|deepseek-r1", _REASONING),
    (r"deepseek", _TOOLS),
    (r"qwen.*-vl|qvq", _ALL),
    (r"qwen|qwq", _TOOLS),
    (r"llama-?3\.2.*vision", _ALL),
    (r"llama-?3\.[1-3]|llama-?4", _TOOLS),
    (r"llama-?3", _REASONING),  # Llama 3.0 has no tool-call template
    (r"claude|gemini", _ALL),
    (r"mistral|mixtral|glm-4|kimi|moonshot", _TOOLS),
)
_UNKNOWN = _REASONING
_FIELDS = ("tool_call", "agent_thought", "image_input", "structured_output")


def default_capabilities(model: str) -> ModelCapabilities:
    base = model.lower().rsplit("/", 1)[-1]
    return next((caps for pattern, caps in _TABLE if re.match(pattern, base)), _UNKNOWN)


def capabilities_for(model: str, overrides: Mapping[str, bool | None]) -> ModelCapabilities:
    """The table's answer for `model`, with each override that is set (not None) applied."""
    found = default_capabilities(model)
    values = {name: getattr(found, name) for name in _FIELDS}
    values.update({name: bool(v) for name, v in overrides.items() if name in _FIELDS and v is not None})
    return ModelCapabilities(**values)
