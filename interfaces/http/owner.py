"""Who is asking. Single-user mode: everything belongs to the local owner."""

from domain.ids import OwnerId

LOCAL_OWNER = OwnerId("local")


async def current_owner() -> OwnerId:
    return LOCAL_OWNER
