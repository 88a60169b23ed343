"""An agent's A2A card: its name, description, one `chat` skill, where to call it (A2A 1.0 and 0.3,
JSON-RPC), and how: a Bearer key in the `Authorization` header."""

from __future__ import annotations

from typing import Any

from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import TransportProtocol

VERSIONS = ("1.0", "0.3")  # the first interface of each version is the one its clients take
HOW_TO_AUTHENTICATE = "A memagent key (mk_…) as a Bearer token; none in single-user mode."


def agent_card(url: str, name: str, description: str) -> AgentCard:
    """The card of the agent called `name` (as `/v1/models` names it), served at `url`."""
    return AgentCard(
        name=name,
        description=description or f"The memagent agent {name}.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding=TransportProtocol.JSONRPC, protocol_version=version)
            for version in VERSIONS
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(
            id="chat", name="Chat", tags=["chat", "memory"],
            description="A chat turn with the agent, which remembers the conversation and what the user told it.",
        )],
        security_schemes={"bearer": SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(
            scheme="bearer", description=HOW_TO_AUTHENTICATE))},
        security_requirements=[SecurityRequirement(schemes={"bearer": StringList(list=[])})],
    )


def card_data(url: str, name: str, description: str) -> dict[str, Any]:
    """The card as JSON, with the 0.3 fields beside the 1.0 ones (the SDK's own merge)."""
    return agent_card_to_dict(agent_card(url, name, description))
