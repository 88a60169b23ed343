"""`Provided[...]` is a `Provide[...]` that FastAPI awaits on the event loop: FastAPI awaits a callable
dependency whose `__call__` is a coroutine function, and calls any other in its thread pool
(interfaces/http/provided.py). The routes' tests prove `@inject` still replaces it."""

from __future__ import annotations

import inspect

from dependency_injector.wiring import Provide

from interfaces.http.provided import Provided


async def test_a_provided_marker_is_awaited_and_gives_itself_back_where_provide_is_called() -> None:
    marker = Provided["start_turn"]
    assert inspect.iscoroutinefunction(marker.__call__)
    assert not inspect.iscoroutinefunction(Provide["start_turn"].__call__)  # a thread hop per request
    assert await marker() is marker


def test_a_provided_marker_is_the_provide_dependency_injector_injects() -> None:
    marker = Provided["start_turn"]
    assert isinstance(marker, Provide)
    assert marker.provider == "start_turn"
