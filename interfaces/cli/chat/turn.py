"""One turn of `memagent chat`: stream it, and on Ctrl-C stop it on the server.

Ctrl-C during a turn asks the server to stop the task (`POST /api/tasks/{task_id}/stop`), then
replays the task's events after the last one shown (`GET /api/tasks/{task_id}/events`), so the
screen ends with exactly the partial answer the server stored and its `stop` event. The task id
comes with the first frame: a Ctrl-C before it is held until it arrives (a second one gives up
waiting).
"""

from __future__ import annotations

import signal
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from interfaces.cli.chat.client import ApiError, Frame, MemagentClient, path_part

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import FrameType

    from interfaces.cli.chat.view import View

TERMINAL = frozenset({"agent_end", "stop", "timeout", "error"})


@dataclass
class Turn:
    """What the frames of a turn said about it."""

    task_id: str | None = None
    conversation_id: str | None = None
    message_id: str | None = None
    last_event_id: int = 0
    ended: bool = False

    def take(self, frame: Frame) -> None:
        data = frame.data
        self.task_id = self.task_id or _text(data.get("task_id"))
        self.conversation_id = self.conversation_id or _text(data.get("conversation_id"))
        self.message_id = self.message_id or _text(data.get("message_id"))
        if frame.id is not None:
            self.last_event_id = frame.id
        self.ended = self.ended or frame.event in TERMINAL


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


class HeldInterrupt:
    """SIGINT while a turn streams: raises once the task id is known, else is held until it is."""

    def __init__(self) -> None:
        self.armed = False
        self.held = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.armed or self.held:
            raise KeyboardInterrupt
        self.held = True

    def arm(self) -> None:
        self.armed = True
        if self.held:
            raise KeyboardInterrupt


@contextmanager
def _on_sigint(handler: Callable[[int, FrameType | None], Any]) -> Iterator[None]:
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_turn(client: MemagentClient, view: View, body: dict[str, Any]) -> Turn:
    """Send one message and show its answer as it streams; ApiError and Unreachable propagate."""
    turn = Turn()
    interrupt = HeldInterrupt()
    try:
        with _on_sigint(interrupt), client.stream("POST", "/api/chat", json=body) as frames:
            _show(frames, turn, view, interrupt.arm)
    except KeyboardInterrupt:
        if turn.task_id is not None and not turn.ended:
            _stop(client, view, turn)
        else:  # before the first frame: a turn that did start stops once no client follows it
            view.notice("interrupted")
        return turn
    if not turn.ended:
        view.notice("the answer stream ended before the turn did")
    return turn


def _show(frames: Iterator[Frame], turn: Turn, view: View, started: Callable[[], None]) -> None:
    for frame in frames:
        turn.take(frame)
        view.frame(frame)
        if turn.task_id is not None:
            started()
        if turn.ended:
            return


def _stop(client: MemagentClient, view: View, turn: Turn) -> None:
    """Stop the task on the server, then show what it did after the last frame shown."""
    task = path_part(turn.task_id or "")
    try:
        try:
            client.post(f"/api/tasks/{task}/stop", {})
        except ApiError as refused:
            if refused.status != 409:  # 409: it had ended first; its end is still worth showing
                raise
        with client.stream("GET", f"/api/tasks/{task}/events",
                           headers={"Last-Event-ID": str(turn.last_event_id)}) as frames:
            _show(frames, turn, view, lambda: None)
    except KeyboardInterrupt:
        pass
    if not turn.ended:
        view.notice("stop requested; not waiting for the turn to end")
