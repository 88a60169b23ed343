"""What a worker carries, in the operator's metrics: its open event streams and its upkeep lag.

Recording never fails and never waits.
"""

from typing import Protocol


class LoadMetrics(Protocol):
    def stream_opened(self) -> None:
        """An event stream to a client opened (it counts as active until `stream_closed`)."""
        ...

    def stream_closed(self) -> None: ...

    def upkeep_lag(self, seconds: float) -> None:
        """The age of this process's oldest memory upkeep not finished yet (0: none)."""
        ...
