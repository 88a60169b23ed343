"""What `memagent chat` shows: the streamed answer, tool steps as they happen, and the tables of
`/list`, `/steps` and `/memory` (rich: columns that fit the terminal, colour only on a terminal).

Everything the server sends is shown as text, never as rich markup, and without control
characters, so an answer cannot move the cursor or restyle the terminal.
"""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from domain.billing.money import usd

if TYPE_CHECKING:
    from interfaces.cli.chat.client import Frame

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
SHORT = 60
TERMINAL_WORDS = {"agent_end": "", "stop": "stopped", "timeout": "timed out", "error": "error"}


def clean(text: str) -> str:
    """Text without control characters (newlines and tabs kept)."""
    return _CONTROL.sub("", text)


def shorten(value: Any, limit: int = SHORT) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(clean(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def costs(data: dict[str, Any]) -> str:
    """`237 tokens · $0.00012 · 0.17 s`; `~` marks locally counted tokens."""
    estimated = "~" if data.get("tokens_estimated") else ""
    price = float(data.get("total_price") or 0)
    latency = float(data.get("latency") or 0)
    return f"{estimated}{data.get('total_token_count', 0)} tokens · ${usd(price)} · {latency:.2f} s"


def tool_input(step: dict[str, Any]) -> Any:
    """A step's tool input; a thought's holds each call's input under its tool's name."""
    given = step.get("tool_input") or {}
    tool = step.get("tool")
    if step.get("event") == "agent_thought" and isinstance(given, dict) and list(given) == [tool]:
        return given[tool]
    return given


def step_output(step: dict[str, Any]) -> Any:
    if step.get("event") == "agent_thought":
        return step.get("thought") or step.get("observation") or ""
    return step.get("observation") or step.get("answer") or ""


class View:
    def __init__(self) -> None:
        self.out = Console(highlight=False, emoji=False)
        self.err = Console(stderr=True, highlight=False, emoji=False)
        self._mid_line = False  # the answer's last delta did not end its line

    # --- the turn as it streams --------------------------------------------------------------

    def frame(self, frame: Frame) -> None:
        data = frame.data
        if frame.event == "agent_message":
            self.answer(str(data.get("answer", "")))
        elif frame.event == "agent_thought" and data.get("tool"):
            self.step(f"↳ {clean(str(data['tool']))} {shorten(tool_input(data))}")
        elif frame.event in ("agent_action", "dataset_retrieval"):
            self.step(f"← {clean(str(data.get('tool') or frame.event))}: {shorten(data.get('observation', ''))}")
        elif frame.event in TERMINAL_WORDS:
            self.turn_end(frame.event, data)

    def answer(self, delta: str) -> None:
        text = clean(delta)
        if text:
            self.out.file.write(text)
            self.out.file.flush()
            self._mid_line = not text.endswith("\n")

    def step(self, line: str) -> None:
        self.end_line()
        self.out.print(Text(f"  {line}", style="dim"))

    def end_line(self) -> None:
        if self._mid_line:
            self.out.file.write("\n")
            self._mid_line = False

    def turn_end(self, event: str, data: dict[str, Any]) -> None:
        self.end_line()
        if event == "error":
            self.error(str(data.get("observation") or data.get("message") or "the turn failed"))
        if data.get("finish_reason") == "content_filter":
            self.notice(f"the output review replaced this answer with: {clean(str(data.get('answer', '')))}")
        word = TERMINAL_WORDS[event]
        self.out.print(Text(f"  [{word}] {costs(data)}" if word else f"  {costs(data)}", style="dim"))

    # --- lines and tables --------------------------------------------------------------------

    def notice(self, line: str) -> None:
        self.end_line()
        self.out.print(Text(clean(line), style="dim"))

    def error(self, line: str) -> None:
        self.end_line()
        self.err.print(Text(f"error: {clean(line)}", style="red"))

    def conversations(self, listed: list[dict[str, Any]], current: str | None) -> None:
        if not listed:
            self.notice("no conversations yet")
            return
        table = Table("#", box=box.SIMPLE, header_style="bold")
        ids = [str(item.get("id")) for item in listed]
        table.add_column("id", no_wrap=True, min_width=max(map(len, ids)))  # never cut: /open takes it
        table.add_column("title", overflow="ellipsis")
        table.add_column("messages")
        table.add_column("last active", no_wrap=True)
        for number, item in enumerate(listed, 1):
            mark = "*" if item.get("id") == current else ""
            title = clean(str(item.get("title") or "(untitled)"))
            active = str(item.get("updated_at", ""))[:16].replace("T", " ")
            table.add_row(f"{number}{mark}", ids[number - 1], title, str(item.get("message_count", 0)), active)
        self.out.print(table)
        self.notice("/open N or /open ID continues one")

    def steps(self, steps: list[dict[str, Any]]) -> None:
        table = Table("#", "event", "tool", "input", "output", "tokens", "price", "latency",
                      box=box.SIMPLE, header_style="bold")
        for step in steps:
            table.add_row(
                str(step.get("position", "")), str(step.get("event", "")), shorten(step.get("tool") or "", 24),
                shorten(tool_input(step) or "", 40), shorten(step_output(step)), str(step.get("total_token_count", 0)),
                f"${usd(float(step.get('total_price') or 0))}", f"{float(step.get('latency') or 0):.2f} s",
            )
        self.out.print(table)

    def memory(self, conversation: dict[str, Any] | None, user: dict[str, Any]) -> None:
        if conversation is not None:
            self.out.print(Text("This conversation", style="bold"))
            if conversation.get("summary"):
                self.out.print(Text(f"  summary: {shorten(conversation['summary'], 200)}"))
            self._values(conversation.get("entities") or [], "  no entities yet")
        self.out.print(Text(f"What memagent knows about {clean(str(user.get('user') or 'you'))}", style="bold"))
        self._values(user.get("facts") or [], "  no facts yet")

    def _values(self, values: list[dict[str, Any]], empty: str) -> None:
        if not values:
            self.notice(empty)
        for value in values:
            hidden = "" if value.get("in_prompt", True) else ", below the confidence the prompt needs"
            line = f"  {clean(str(value.get('type')))}: {clean(str(value.get('value')))}"
            self.out.print(Text(line), Text(f"({value.get('confidence')}{hidden})", style="dim"))


def prompt_text() -> str:
    return "you> " if sys.stdin.isatty() else ""
