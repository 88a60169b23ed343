"""The backing stores in the operator's metrics: their failures and the event log's appends.

The labels follow `application.ports.metrics`: bounded values only. Recording never fails and never waits.
"""

from typing import Protocol


class StoreMetrics(Protocol):
    def store_error(self, store: str) -> None:
        """A backing store failed: `database`, `event_store`, `memory_store` or `redis`."""
        ...

    def event_appended(self, seconds: float) -> None:
        """One append of a turn's events to its log took `seconds`."""
        ...
