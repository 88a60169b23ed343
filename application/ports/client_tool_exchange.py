from dataclasses import dataclass
from typing import Protocol

from application.ports.task_control import TaskInfo
from domain.ids import OwnerId
from domain.tools.client_tools import Resumption


@dataclass(frozen=True, slots=True)
class PausedTurn:
    """A turn waiting for its client to run `call_ids` (domain.tools.client_tools)."""

    task: TaskInfo
    call_ids: tuple[str, ...]

    @property
    def key(self) -> str:
        """What names this pause of its turn: its first call's id (memagent's, unique)."""
        return self.call_ids[0]


class ClientToolExchange(Protocol):
    """Paused turns and the results their clients send back, seen by every server process.

    The worker running a turn pauses it and waits; whichever worker the client's next request
    reaches finds it by a call id and delivers the results. Several turns may wait for one id,
    each its own pause. Raises `EventStoreUnavailable` when
    the backend fails.
    """

    async def pause(self, paused: PausedTurn, ttl: float) -> None:
        """The turn waits for these calls, for at most `ttl` seconds."""
        ...

    async def find(self, owner: OwnerId, call_id: str) -> tuple[PausedTurn, ...]:
        """The owner's paused turns waiting for `call_id`: none (never paused, resumed already, or
        lapsed), one, or, for an id named by what the client asked (`legacy_call_id`), each turn
        that identical requests paused."""
        ...

    async def deliver(self, paused: PausedTurn, resumption: Resumption) -> bool:
        """Hand the results to the paused turn; False when this pause no longer waits (another
        request resumed it first, it lapsed, or the turn has paused again since). Only one delivery
        of a pause succeeds."""
        ...

    async def collect(self, paused: PausedTurn, wait: float) -> Resumption | None:
        """The results delivered to this pause, waiting up to `wait` seconds; None when none came."""
        ...

    async def end(self, paused: PausedTurn) -> None:
        """The pause is over (resumed, lapsed or stopped): forget it. Never fails for a missing one."""
        ...
