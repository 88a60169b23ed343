"""`Provided[...]`: dependency_injector's `Provide[...]` marker, for a route's `Depends`, awaited on the
event loop.

FastAPI gets a dependency by calling it, and it calls a plain function or a callable object in a worker
thread: `Provide`'s marker is one (its `__call__` returns itself for `@inject` to replace), so every
`Depends(Provide[...])` of a request cost a hop to the thread pool and back. `Provided`'s `__call__` is a
coroutine, so FastAPI awaits it on the loop; `@inject` treats it as the `Provide` it is.
"""

from typing import TYPE_CHECKING, Self

from dependency_injector.wiring import Provide

if TYPE_CHECKING:
    Provided = Provide
else:

    class Provided(Provide):
        async def __call__(self) -> Self:
            return self
