"""Python of workflow `code` nodes, run where it reaches no file, no network and no other process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping


@dataclass(frozen=True, slots=True)
class CodeLimits:
    cpu_seconds: float = 2.0
    memory_bytes: int = 256 * 1024 * 1024
    wall_seconds: float = 5.0
    output_bytes: int = 1024 * 1024  # the returned dict, as JSON


class CodeSandbox(Protocol):
    def problem(self, source: str) -> str | None:
        """Why the code cannot run (a syntax error, a forbidden name, no `def main(**inputs)`), in a
        sentence; None when it may."""
        ...

    async def run(self, source: str, inputs: Mapping[str, Any], limits: CodeLimits) -> dict[str, Any]:
        """`main(**inputs)`'s returned dict (JSON values). Raises `NodeFailed`: the code raised, broke
        a limit, returned no dict, or tried what the sandbox refuses."""
        ...
