"""Whether a backend the service needs answers now: the parts `GET /readyz` checks.

A probe checks one part (the database, Redis, one model profile) and says how it is as one of the
states below. A state is all a client may see: never the part's address, URL, credentials or the
vendor's exception text, which the adapter logs for operators instead.
"""

from typing import Protocol

OK = "ok"
UNCHECKED = "unchecked"  # nothing cheap to ask (e.g. an AgentScope model): counted as ready
UNREACHABLE = "unreachable"  # no connection could be made
TIMEOUT = "timeout"  # no answer in time
REJECTED = "rejected"  # it answered, refusing our credentials
FAILING = "failing"  # it answered with an error of its own
READY_STATES = frozenset({OK, UNCHECKED})


class ReadinessProbe(Protocol):
    @property
    def part(self) -> str:
        """The part as /readyz names it: `database`, `redis`, `model:<profile>`."""
        ...

    async def state(self) -> str:
        """`OK`, or how the part failed; a vendor's failure is a state, never an exception."""
        ...
