"""The model profiles an agent may pick (`config.model`): `default`, then MEMAGENT_MODELS.

What a client may see of a profile: its name, provider, model, capabilities and price. Never its
key, the variable or file the key comes from, or its base URL (which may name an internal host).

No `from __future__ import annotations`: dependency_injector's wiring reads `Provide[...]` from the
evaluated annotations, and would leave string ones unwired.
"""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends

from application.ports.chat_models import ChatModels, ModelProfile
from domain.ids import OwnerId
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import current_owner
from interfaces.http.provided import Provided

router = APIRouter(responses=ERROR_RESPONSES, tags=["models"])


def profile_data(profile: ModelProfile) -> dict[str, Any]:
    capabilities = profile.capabilities
    return {
        "name": profile.name,
        "provider": profile.provider,
        "model": profile.model,
        "capabilities": {
            "tool_call": capabilities.tool_call,
            "agent_thought": capabilities.agent_thought,
            "image_input": capabilities.image_input,
        },
        "price": {"input": profile.input_price, "output": profile.output_price} if profile.priced else None,
        "priced": profile.priced,
    }


@router.get("/api/models")
@inject
async def list_models(
    _owner: Annotated[OwnerId, Depends(current_owner)],
    models: Annotated[ChatModels, Depends(Provided["chat_models"])],
) -> dict[str, Any]:
    """Every model profile, `default` first; `price` is USD per million tokens (a profile's own, else
    MEMAGENT_LLM__PRICES', else the built-in table's). A model none of them lists is flagged
    `"priced": false` with `"price": null`: its calls cost 0. The offline scripted model is free: 0 and 0."""
    return {"data": [profile_data(p) for p in models.profiles()]}
