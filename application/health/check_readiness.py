"""Readiness: every probe's state, checked at most once per `ttl` (10 s) however often it is asked.

Orchestrators probe every few seconds from every replica; a check costs a database connection, a
Redis PING and a request to each model's server, so the result is kept for `ttl` and shared by the
requests that come meanwhile (a request that arrives while a check runs waits for that check
instead of starting its own). The probes run side by side, each bounded by `probe_timeout`, so a
part that hangs makes /readyz answer `timeout` for it rather than hang too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.ports.readiness import READY_STATES, TIMEOUT

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from application.ports.readiness import ReadinessProbe
    from application.ports.runtime import Clock


@dataclass(frozen=True, slots=True)
class Readiness:
    checks: Mapping[str, str]  # part → state, in the probes' order

    @property
    def ready(self) -> bool:
        return all(state in READY_STATES for state in self.checks.values())

    @property
    def failing(self) -> dict[str, str]:
        return {part: state for part, state in self.checks.items() if state not in READY_STATES}


class CheckReadiness:
    def __init__(
        self, probes: Sequence[ReadinessProbe], clock: Clock, ttl: float = 10.0, probe_timeout: float = 5.0
    ) -> None:
        self._probes = list(probes)
        self._clock = clock
        self._ttl = ttl
        self._probe_timeout = probe_timeout
        self._lock = asyncio.Lock()
        self._last: tuple[float, Readiness] | None = None

    async def __call__(self) -> Readiness:
        async with self._lock:
            started = self._clock.monotonic()
            if self._last is not None and started - self._last[0] < self._ttl:
                return self._last[1]
            states = await asyncio.gather(*(self._state(probe) for probe in self._probes))
            readiness = Readiness({probe.part: state for probe, state in zip(self._probes, states, strict=True)})
            self._last = (started, readiness)
            return readiness

    async def _state(self, probe: ReadinessProbe) -> str:
        try:
            return await asyncio.wait_for(probe.state(), self._probe_timeout)
        except TimeoutError:
            return TIMEOUT
