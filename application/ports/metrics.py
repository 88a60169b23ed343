"""What the service tells its operator's metrics: one method per thing that happened.

Every label value is bounded: an agent id, a model profile's name, a status, a purpose, a tool's name
(one the turn offered; "unknown" otherwise), an outcome or a store. Never a user id, a conversation
id or anything a client wrote, so one tenant's traffic cannot grow the series without bound.
Recording never fails and never waits: a metric is not worth a turn.

Callers depend on the role they record (`TurnMetrics`, `ModelMetrics`, `StoreMetrics`,
`LoadMetrics`, `LimitMetrics`); `Metrics` is all of them, for the adapters and the wiring.
"""

from typing import Protocol

from application.ports.limit_metrics import LimitMetrics
from application.ports.load_metrics import LoadMetrics
from application.ports.model_metrics import ModelMetrics
from application.ports.store_metrics import StoreMetrics
from application.ports.turn_metrics import TurnMetrics


class Metrics(TurnMetrics, ModelMetrics, StoreMetrics, LoadMetrics, LimitMetrics, Protocol):
    """Every metric the service records."""


class MetricsPage(Protocol):
    def render(self) -> tuple[bytes, str]:
        """The metrics in an exposition format, and its content type."""
        ...
