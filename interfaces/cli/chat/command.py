"""`memagent chat`: a streaming chat in the terminal with an agent of a running memagent server.

It talks to the server over its HTTP API only (`MEMAGENT_URL`, default http://127.0.0.1:8000; the
key from `MEMAGENT_KEY` or `--key`, sent as `Authorization: Bearer`). Enter sends a message and
its answer streams as it arrives; Ctrl-C during a turn stops it on the server and keeps the
partial answer; Ctrl-C or Ctrl-D at an empty prompt quits. Commands: see HELP.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

from interfaces.cli.chat.client import ApiError, MemagentClient, Unreachable, path_part, url_problem
from interfaces.cli.chat.turn import run_turn
from interfaces.cli.chat.view import View, prompt_text

if TYPE_CHECKING:
    from collections.abc import Callable

URL_VARIABLE, KEY_VARIABLE, DEFAULT_URL = "MEMAGENT_URL", "MEMAGENT_KEY", "http://127.0.0.1:8000"
LIST_LIMIT = 20
HELP = """\
Type a message and press Enter; Ctrl-C stops an answer, Ctrl-C or Ctrl-D at an empty prompt quits.
  /new          start a new conversation with the next message
  /list         the conversations, newest first (* marks this one)
  /open N|ID    continue conversation N of the last /list, or the one with this id
  /memory       what the agent remembers: this conversation's entities and your facts
  /steps        the last answer's steps: tools, inputs, outputs, tokens, price, latency
  /help         this help
  /quit         leave (also /exit)
  //text        send a message that starts with "/"\
"""


def add_chat_command(commands: Any) -> None:
    chat = commands.add_parser("chat", help="chat with an agent of a running memagent server, in the terminal",
                               description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    chat.add_argument("--agent", help="the agent's name or id (default: the default agent)")
    chat.add_argument("--conversation", help="continue this conversation (its id, as /list shows it)")
    chat.add_argument("--user", help="the end user the turns are for (default: the account itself)")
    chat.add_argument("--url", help=f"the server (default from {URL_VARIABLE}, else {DEFAULT_URL})")
    chat.add_argument("--key", help=f"the API key (default from {KEY_VARIABLE}, which is better: a flag shows "
                      "in the process list); none is needed in single-user mode")


def run_chat(args: argparse.Namespace) -> int:
    url = args.url or os.environ.get(URL_VARIABLE) or DEFAULT_URL
    problem = url_problem(url)
    if problem is not None:
        print(f"memagent chat: {problem}", file=sys.stderr)
        return 2
    client = MemagentClient(url, args.key or os.environ.get(KEY_VARIABLE) or None)
    try:
        session = Session(client, View(), args.user)
        try:
            session.connect(args.agent, args.conversation)
        except (ApiError, Unreachable) as failure:
            print(f"memagent chat: {_one_line(failure)}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 130
        if sys.stdin.isatty():  # in a terminal Ctrl-C is ours, even when started with SIGINT ignored (`cmd &`)
            signal.signal(signal.SIGINT, signal.default_int_handler)
        session.loop(_typed_text())
    finally:
        client.close()
    return 0


def _one_line(failure: ApiError | Unreachable) -> str:
    if not isinstance(failure, ApiError):
        return str(failure)
    hint = f"; the key comes from {KEY_VARIABLE} or --key" if failure.status == 401 else ""
    return failure.line() + hint


def _typed_text() -> Callable[[], str] | None:
    """What is typed at the prompt so far (readline gives line editing and history too), or None."""
    try:
        import readline
    except ImportError:  # no readline (Windows): no line editing, and Ctrl-C at the prompt always quits
        return None
    return readline.get_line_buffer


class Session:
    """The conversation at hand and the commands around it."""

    def __init__(self, client: MemagentClient, view: View, user: str | None) -> None:
        self.client, self.view, self.user = client, view, user
        self.agent_id: str | None = None  # None: the default agent (or a continued conversation's own)
        self.conversation_id: str | None = None
        self.last_message_id: str | None = None
        self.listed: list[str] = []
        self.commands: dict[str, Callable[[str], bool]] = {
            "new": self.new_conversation, "list": self.list_conversations, "open": self.open_conversation,
            "memory": self.show_memory, "steps": self.show_steps, "help": self.show_help,
            "quit": self.quit, "exit": self.quit,
        }

    def connect(self, agent: str | None, conversation: str | None) -> None:
        """Reach the server, check the key, find the agent and the conversation; announce them."""
        model = self._health().get("model", "?")
        self.client.get("/api/conversations", self._params(limit=1))  # a bad key fails here, once
        name = "default"
        if agent is not None:
            self.agent_id, name = self._agent(agent)
        found = self._conversation(conversation) if conversation is not None else None
        self.view.notice(f"memagent chat · {self.client.url} · agent {name} · model {model}")
        if found is not None:
            self._continue(found)
        self.view.notice("/help lists the commands; Ctrl-D quits")

    def _health(self) -> dict[str, Any]:
        try:
            return self.client.get("/healthz")
        except ApiError as refused:
            raise Unreachable(f"{self.client.url} does not look like memagent: GET /healthz answered "
                              f"HTTP {refused.status}") from None

    def _agent(self, wanted: str) -> tuple[str, str]:
        try:
            agents = self.client.get("/api/agents")["data"]
        except ApiError as refused:
            if refused.status == 403:  # an agent key may not list agents: it names its own agent by id
                return wanted, wanted
            raise
        for match in (lambda a: a["id"] == wanted, lambda a: a["name"] == wanted,
                      lambda a: str(a["name"]).casefold() == wanted.casefold()):
            found = [a for a in agents if match(a)]
            if len(found) == 1:
                return str(found[0]["id"]), str(found[0]["name"])
            if found:
                raise ApiError(409, "conflict", f"{len(found)} agents are named {wanted!r}: pass the agent's id")
        raise ApiError(404, "not_found", f"no agent named {wanted!r} (one name or id of GET /api/agents)")

    def _params(self, **params: Any) -> dict[str, Any]:
        return params | ({"user": self.user} if self.user else {})

    def loop(self, typed: Callable[[], str] | None) -> None:
        while (line := self._read(typed)) is not None:
            if not line.strip():
                continue
            try:
                if not self._handle(line.strip()):
                    return
            except ApiError as refused:
                self.view.error(refused.line())
            except Unreachable as gone:
                self.view.error(str(gone))
            except KeyboardInterrupt:  # Ctrl-C while a command waits for the server
                self.view.notice("interrupted")

    def _read(self, typed: Callable[[], str] | None) -> str | None:
        try:
            return input(prompt_text())
        except EOFError:
            self.view.out.print()
            return None
        except KeyboardInterrupt:
            self.view.out.print()
            return "" if typed is not None and typed() else None  # Ctrl-C clears typed text, else quits

    def _handle(self, line: str) -> bool:
        """Run a command or send a message; False to quit."""
        if not line.startswith("/") or line.startswith("//"):
            self.send(line.removeprefix("/") if line.startswith("//") else line)
            return True
        name, _, argument = line[1:].partition(" ")
        command = self.commands.get(name.lower())
        if command is None:
            self.view.error(f"unknown command /{name}: /help lists them")
            return True
        return command(argument.strip())

    def send(self, text: str) -> None:
        body: dict[str, Any] = {"query": text, "stream": True}
        if self.conversation_id is not None:
            body["conversation_id"] = self.conversation_id
        elif self.agent_id is not None:
            body["agent_id"] = self.agent_id
        if self.user:
            body["user"] = self.user
        turn = run_turn(self.client, self.view, body)
        self.last_message_id = turn.message_id or self.last_message_id
        if self.conversation_id is None and turn.conversation_id is not None:
            self.conversation_id = turn.conversation_id
            self.view.notice(f"new conversation {turn.conversation_id}")

    # --- commands: each answers whether the session goes on ----------------------------------

    def new_conversation(self, _: str) -> bool:
        self.conversation_id = self.last_message_id = None
        self.view.notice("a new conversation starts with your next message")
        return True

    def list_conversations(self, _: str) -> bool:
        params = self._params(limit=LIST_LIMIT) | ({"agent_id": self.agent_id} if self.agent_id else {})
        listed = self.client.get("/api/conversations", params)["data"]
        self.listed = [str(item["id"]) for item in listed]
        self.view.conversations(listed, self.conversation_id)
        return True

    def open_conversation(self, argument: str) -> bool:
        if not argument:
            self.view.error("/open needs a number from /list or a conversation id")
            return True
        number = int(argument) if argument.isdigit() and len(argument) < 4 else 0
        wanted = self.listed[number - 1] if 0 < number <= len(self.listed) else argument
        self._continue(self._conversation(wanted))
        return True

    def _conversation(self, conversation_id: str) -> dict[str, Any]:
        return self.client.get(f"/api/conversations/{path_part(conversation_id)}", self._params())

    def _continue(self, found: dict[str, Any]) -> None:
        self.conversation_id = str(found["id"])
        last = found.get("last_message") or {}
        self.last_message_id = last.get("id")
        title = found.get("title") or "(untitled)"
        self.view.notice(f"continuing {self.conversation_id} «{title}» (messages: {found.get('message_count', 0)})")
        if last.get("preview"):
            self.view.notice(f"last answer: {last['preview']}")

    def show_memory(self, _: str) -> bool:
        conversation = None
        if self.conversation_id is not None:
            conversation = self.client.get(f"/api/conversations/{path_part(self.conversation_id)}/memory",
                                           self._params())
        user = self.client.get(f"/api/users/{path_part(self.user or 'me')}/memory", self._params())
        self.view.memory(conversation, user)
        return True

    def show_steps(self, _: str) -> bool:
        if self.last_message_id is None:
            self.view.notice("no answer yet in this conversation")
            return True
        thoughts = self.client.get(f"/api/messages/{path_part(self.last_message_id)}/thoughts", self._params())
        self.view.steps(thoughts["data"])
        return True

    def show_help(self, _: str) -> bool:
        self.view.out.print(HELP, markup=False)
        return True

    def quit(self, _: str) -> bool:
        return False
