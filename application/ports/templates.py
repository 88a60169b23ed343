"""Templates and expressions of workflow nodes (`{{ start.city }}`, `l1.json.score > 3`), evaluated
in a sandbox: a template is client input, and what it reads is model and tool output."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping


class Templates(Protocol):
    def problem(self, template: str) -> str | None:
        """What is wrong with the template's syntax, in a sentence; None when it parses."""
        ...

    def names(self, template: str) -> frozenset[str]:
        """The root names the template reads (`start`, `l1`, `item`): what must run before it."""
        ...

    async def render(self, template: str, scope: Mapping[str, Any]) -> str:
        """The template's text with `scope`'s values. Raises `NodeFailed` (an unknown name, an
        unsafe operation, an output over the size limit)."""
        ...

    async def evaluate(self, expression: str, scope: Mapping[str, Any]) -> Any:
        """An expression's value (with or without `{{ }}` around it): a condition's truth, the
        list an iteration walks. Raises `NodeFailed`."""
        ...
