"""Parsing long text off the event loop.

The parsers of a model's output (domain.tools.react, domain.conversations.structured_output, the scripted model's
markers, a tool call's arguments) are linear, but linear in a megabyte is still tens of
milliseconds of CPU, and on the loop those are milliseconds in which no other turn streams and
no probe answers. Text past OFF_LOOP_CHARS is parsed in a worker thread; shorter text, nearly all
of it, in place, where a thread hop would cost more than the parse.

A worker thread gives the loop the GIL back between a parser's Python steps (every 5 ms, CPython's
switch interval), not within one long call into C: `json.loads` of a megabyte still holds the loop
for its whole length (tests/bench/parse_off_loop.py prints both).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

P = ParamSpec("P")
T = TypeVar("T")

OFF_LOOP_CHARS = 16 * 1024  # at most about a millisecond of parsing (arguments of many numbers)


async def parsed(parse: Callable[Concatenate[str, P], T], text: str, *args: P.args, **kwargs: P.kwargs) -> T:
    """`parse(text, *args, **kwargs)`: in a worker thread when `text` is long, else right here.
    `parse` must be pure (the domain's parsers are): it runs beside the loop."""
    if len(text) <= OFF_LOOP_CHARS:
        return parse(text, *args, **kwargs)
    return await asyncio.to_thread(parse, text, *args, **kwargs)
