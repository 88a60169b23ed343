"""The queue of background jobs (docs/ARCHITECTURE.md §10): what a finished turn leaves to a worker.

Delivery is at least once: a job lost with its worker runs again on another, so every handler is
idempotent. Every method raises `StoreUnavailable` when the queue's backend fails.
"""

from typing import Protocol

from domain.jobs import Job


class JobQueue(Protocol):
    async def enqueue(self, job: Job) -> bool:
        """Queue the job; False when a job of the same key waits or runs already (it covers this one)."""
        ...

    async def wait(self, job: Job, within: float) -> bool:
        """Whether the job of that key ended (done, or failed for good) within `within` seconds."""
        ...

    async def lag(self) -> float:
        """Seconds the oldest job not finished has waited since it was queued; 0 when none is."""
        ...


class JobHandler(Protocol):
    async def __call__(self, job: Job, last_try: bool) -> None:
        """Run one job. Raising asks the queue for a retry, up to its limit; `last_try`: no retry
        follows this attempt, so a failure is for good."""
        ...
