from typing import Annotated, Any

from dependency_injector.wiring import Provide, inject
from fastapi import APIRouter, Depends

from application.ports.chat_model import ChatModel

router = APIRouter()


@router.get("/healthz")
@inject
async def healthz(model: Annotated[ChatModel, Depends(Provide["chat_model"])]) -> dict[str, Any]:
    """Liveness, and which model answers (the offline scripted one is named as such)."""
    return {"status": "ok", "model": model.name}
