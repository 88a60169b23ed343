"""`memagent chat` in a pseudo-terminal (pexpect), against a real `memagent serve` (offline model, SQLite).

The scripted model streams a chunk every 50 ms, so a long message's answer is still streaming
when the test looks at the server or presses Ctrl-C.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import httpx
import pexpect
import pytest

from interfaces.lifecycle import start_backends, stop_backends
from interfaces.settings.settings import Settings
from interfaces.wiring.build import build_container
from tests.service import ROOT, Service, free_port, running_service, service_env

PROMPT = "you> "
SLOW = {"MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.05"}
LONG_MESSAGE = "Please repeat " + " ".join(f"word{i}" for i in range(200))  # about 70 chunks: 3.5 s
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def sqlite(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """Single-user mode: no key needed."""
    env = {"MEMAGENT_DATABASE__URL": sqlite(tmp_path_factory.mktemp("chat") / "memagent.db")} | SLOW
    with running_service(env, tmp_path_factory.mktemp("logs")) as running:
        yield running


@pytest.fixture
def api(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=30) as client:
        yield client


@dataclass
class Terminal:
    """`memagent chat` running in a pseudo-terminal, and everything it wrote."""

    child: pexpect.spawn
    written: StringIO

    def send(self, line: str) -> None:
        self.child.sendline(line)

    def expect(self, pattern: str) -> re.Match[str]:
        self.child.expect(pattern)
        match: re.Match[str] = self.child.match
        return match

    def prompt(self) -> None:
        self.child.expect_exact(PROMPT)

    def say(self, message: str) -> str:
        """Send a message, wait for its answer's end; the id of the conversation it began, if any."""
        self.send(message)
        self.expect(r"tokens · \$")
        index = self.child.expect([r"new conversation (\w+)\W", re.escape(PROMPT)])
        if index == 1:
            return ""
        began = str(self.child.match.group(1))
        self.prompt()
        return began

    def screen(self) -> str:
        """What was written, without colours; `^C` is the terminal's own echo of Ctrl-C."""
        return _ANSI.sub("", self.written.getvalue()).replace("\r\n", "\n").replace("^C", "")

    def quit(self) -> int:
        self.child.sendeof()
        self.child.expect(pexpect.EOF)
        self.child.close()
        return int(self.child.exitstatus)


def _spawn(args: list[str], env: dict[str, str]) -> tuple[pexpect.spawn, StringIO]:
    written = StringIO()
    child = pexpect.spawn(
        sys.executable, ["-m", "interfaces.cli.entry", "chat", *args], cwd=str(ROOT), env=service_env(env),
        encoding="utf-8", timeout=30, dimensions=(50, 220),
    )
    child.logfile_read = written
    return child, written


@contextmanager
def terminal(url: str, *args: str, key: str | None = None) -> Iterator[Terminal]:
    child, written = _spawn(list(args), {"MEMAGENT_URL": url} | ({"MEMAGENT_KEY": key} if key else {}))
    try:
        child.expect_exact(PROMPT)
        yield Terminal(child, written)
    finally:
        child.close(force=True)


def run_to_exit(url: str, *args: str, key: str | None = None) -> tuple[int, str]:
    """`memagent chat` in a pseudo-terminal that exits at start: its exit status and its output."""
    child, written = _spawn(list(args), {"MEMAGENT_URL": url} | ({"MEMAGENT_KEY": key} if key else {}))
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus), _ANSI.sub("", written.getvalue()).strip()


def messages(api: httpx.Client, conversation_id: str) -> list[dict[str, Any]]:
    response = api.get(f"/api/conversations/{conversation_id}/messages", params={"limit": 100})
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["data"]
    return found


# --- chatting ----------------------------------------------------------------------------------


def test_a_message_streams_its_answer_while_the_turn_still_runs(service: Service, api: httpx.Client) -> None:
    with terminal(service.base_url) as chat:
        chat.send(LONG_MESSAGE)
        chat.expect(r"You said: \"Please repeat word0")
        newest = api.get("/api/conversations", params={"limit": 1}).json()["data"][0]
        assert newest["last_message"]["status"] == "running"  # the answer is on screen before it ended
        conversation = chat.expect(r"new conversation (\w+)\W").group(1)
        chat.prompt()
        stored = messages(api, conversation)[-1]
        assert stored["status"] == "normal"
        assert stored["answer"] in chat.screen()
        assert chat.quit() == 0


def test_new_then_list_shows_both_conversations_newest_first(service: Service) -> None:
    with terminal(service.base_url) as chat:
        first = chat.say("Alpha: plan the trip")
        chat.send("/new")
        chat.prompt()
        second = chat.say("Bravo: review the budget")
        assert first
        assert second not in ('', first)
        chat.send("/list")
        chat.prompt()
        listing = chat.screen().rsplit("/list", 1)[1]
        assert second in listing
        assert first in listing
        assert listing.index(second) < listing.index(first)
        assert re.search(rf"1\*\s+{second}", listing)  # the star marks the conversation at hand


def test_list_then_open_or_the_conversation_flag_continues_a_conversation(
    service: Service, api: httpx.Client
) -> None:
    with terminal(service.base_url) as chat:
        conversation = chat.say("Charlie: my first question")
        chat.send("/new")
        chat.prompt()
        chat.say("Delta: another subject")
        chat.send("/list")
        chat.prompt()
        number = re.search(rf"(\d+)\s+{conversation}", chat.screen().rsplit("/list", 1)[1])
        assert number is not None
        chat.send(f"/open {number.group(1)}")
        chat.expect(f"continuing {conversation}")
        chat.prompt()
        chat.say("Echo: a follow-up")
        assert 'Earlier you said: "Charlie: my first question"' in chat.screen()
    with terminal(service.base_url, "--conversation", conversation) as chat:
        assert f"continuing {conversation}" in chat.screen()
        chat.say("Foxtrot: one more")
    assert [m["query"] for m in messages(api, conversation)] == [
        "Charlie: my first question", "Echo: a follow-up", "Foxtrot: one more"]


def test_memory_shows_the_conversation_entities_and_a_fact_said_earlier(service: Service) -> None:
    with terminal(service.base_url) as chat:
        chat.say("My name is Ada. Book a table for tomorrow.")
        deadline = time.monotonic() + 15
        while True:  # the upkeep extracts entities after the turn's end
            chat.send("/memory")
            chat.prompt()
            shown = chat.screen().rsplit("/memory", 1)[1]
            # The fact comes with the turn, the entities with its upkeep: wait for both.
            if ("name: Ada" in shown and "date: tomorrow" in shown) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert re.search(r"This conversation.*date: tomorrow.*knows about you.*name: Ada", shown, re.DOTALL), shown


def test_steps_show_the_memory_recall_the_tool_call_and_their_costs(service: Service) -> None:
    with terminal(service.base_url) as chat:
        chat.say('What is 2+3? [[tool:calculator {"expression": "2+3"}]]')
        assert "↳ calculator" in chat.screen()  # the tool call, as it happened
        chat.send("/steps")
        chat.prompt()
        table = chat.screen().rsplit("/steps", 1)[1]
        rows = {line.split()[1]: line for line in table.splitlines() if re.match(r"\s+\d+\s+\w", line)}
        assert list(rows) == ["long_term_memory_recall", "agent_thought", "agent_action", "agent_message"]
        assert re.search(r"calculator\s+\{\"expression\": \"2\+3\"\}.*\"result\": \"5\"", rows["agent_action"])
        assert re.search(r"\s\d+\s+\$0\.00\s+\d+\.\d\d s", rows["agent_message"])  # tokens, price, latency


def test_ctrl_c_mid_turn_stops_it_on_the_server_and_keeps_the_partial_answer(
    service: Service, api: httpx.Client
) -> None:
    with terminal(service.base_url) as chat:
        chat.send(LONG_MESSAGE)
        chat.expect(r"You said: \"Please repeat word0 word1")
        chat.child.sendintr()
        chat.expect(r"\[stopped\]")
        conversation = chat.expect(r"new conversation (\w+)\W").group(1)
        chat.prompt()
        stopped = messages(api, conversation)[-1]
        assert stopped["status"] == "stop"  # at once: not the client grace of a client gone
        assert stopped["answer"].startswith("(offline scripted model")
        assert "word199" not in stopped["answer"]
        assert stopped["answer"] in chat.screen()  # the partial answer stays on screen, as stored
        chat.say("Still here?")  # back at the prompt, the conversation goes on
        assert messages(api, conversation)[-1]["status"] == "normal"


def test_ctrl_c_clears_typed_text_and_quits_at_an_empty_prompt(service: Service) -> None:
    with terminal(service.base_url) as chat:
        chat.child.send("half a thought")
        time.sleep(0.2)
        chat.child.sendintr()
        chat.prompt()  # a new prompt, still running
        chat.child.sendintr()
        chat.child.expect(pexpect.EOF)
        chat.child.close()
        assert chat.child.exitstatus == 0
    with terminal(service.base_url) as chat:
        assert chat.quit() == 0  # Ctrl-D


def test_a_server_error_is_one_readable_line(service: Service) -> None:
    with terminal(service.base_url) as chat:
        chat.send("/open no-such-conversation")
        chat.expect(r"error: Conversation 'no-such-conversation' was not found\. \(not_found\)")
        chat.prompt()
        chat.say("still answering")
        assert "Traceback" not in chat.screen()
    status, output = run_to_exit(service.base_url, "--agent", "nobody")
    assert (status, output) == (1, "memagent chat: no agent named 'nobody' (one name or id of GET /api/agents)"
                                   " (not_found)")


def test_the_agent_flag_chats_with_that_agent_by_name(service: Service, api: httpx.Client) -> None:
    created = api.post("/api/agents", json={"name": "Concierge", "config": {"preset_prompt": "You book tables."}})
    assert created.status_code == 201, created.text
    agent = created.json()["id"]
    assert api.post(f"/api/agents/{agent}/publish", json={}).status_code == 201
    with terminal(service.base_url, "--agent", "concierge") as chat:
        assert "agent Concierge" in chat.screen()
        conversation = chat.say("A table for two")
    assert api.get(f"/api/conversations/{conversation}").json()["agent_id"] == agent


def test_an_unreachable_server_is_one_line_and_exit_1() -> None:
    status, output = run_to_exit(f"http://127.0.0.1:{free_port()}")
    assert status == 1
    assert len(output.splitlines()) == 1
    assert output.startswith("memagent chat: cannot reach memagent at http://127.0.0.1:")


# --- with API keys -----------------------------------------------------------------------------


def create_key(database_url: str, name: str) -> str:
    """A key made in-process (the use case `memagent keys create` runs)."""

    async def create() -> str:
        settings = Settings(database={"url": database_url})
        container = build_container(settings)
        await start_backends(container, settings)  # creates the SQLite schema
        try:
            return (await container.create_api_key()(name)).raw
        finally:
            await stop_backends(container)

    return asyncio.run(create())


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, str]]:
    database = sqlite(tmp_path_factory.mktemp("keyed") / "memagent.db")
    key = create_key(database, "alice")
    env = {"MEMAGENT_DATABASE__URL": database, "MEMAGENT_AUTH__REQUIRE_KEYS": "true"}
    with running_service(env, tmp_path_factory.mktemp("keyed-logs")) as running:
        yield running, key


def test_with_keys_required_the_key_chats_and_is_never_shown(keyed: tuple[Service, str]) -> None:
    service, key = keyed
    with terminal(service.base_url, key=key) as chat:
        conversation = chat.say("Hello with a key")
        chat.send("/list")
        chat.prompt()
        assert conversation in chat.screen().rsplit("/list", 1)[1]
        assert key not in chat.screen()


def test_a_bad_or_missing_key_is_one_line_and_exit_1(keyed: tuple[Service, str]) -> None:
    service, _ = keyed
    bad = "mk_" + "x" * 43
    for args, key in ((["--key", bad], None), ([], None), ([], bad)):
        status, output = run_to_exit(service.base_url, *args, key=key)
        assert status == 1, output
        assert len(output.splitlines()) == 1, output
        assert output.startswith("memagent chat: ")
        assert output.endswith("(unauthorized); the key comes from MEMAGENT_KEY or --key"), output
        assert bad not in output
