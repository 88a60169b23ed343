"""LangGraph Server, the peer of tests/bench/server_peers.py: `langgraph dev` (langgraph-api's in-memory
runtime) serving `langchain.agents.create_agent` on ChatOpenAI, pointed at the benchmark's model server.

LangGraph Server has dependencies of its own that do not belong in memagent's environment, so it runs
from a virtual environment of its own (`--langgraph-venv`, the repository's `.venv-langgraph` by default),
made with (the README's test command makes it so, in the background, beside memagent's own):

    python3 -m venv .venv-langgraph && .venv-langgraph/bin/pip install 'langgraph-cli[inmem]==0.4.40' \
        langgraph-api==0.16.7 langchain-openai==1.8.1 langchain==1.5.2

The graph folder (langgraph.json and agent.py) is written into a temporary folder at run time, with
a launcher (LAUNCHER) that runs `langgraph dev` in its own process after shortening the queue poll:
the in-memory runtime's scheduler sleeps a fixed 0.5 s (`asyncio.sleep(0.5)` in
langgraph_runtime_inmem.ops.Runs.next, no setting) after finding its run queue empty, so a run
started while it sleeps waits up to 0.5 s before it begins. The launcher wraps `Runs.next` to sleep
`BENCH_QUEUE_POLL_S` instead (the benchmark's `--langgraph-poll`, 0.02 by default; unset: the 0.5 s),
so that the server's work is measured rather than its timer; its polling while idle is reported as
idle CPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import httpx

from tests.service import Service, free_port

AGENT = '''\
import os

from langchain_openai import ChatOpenAI

try:
    from langchain.agents import create_agent
except ImportError:  # langchain before 1.0
    create_agent = None
    from langgraph.prebuilt import create_react_agent

model = ChatOpenAI(model="gpt-4o-mini", base_url=os.environ["BENCH_MODEL_URL"], api_key="bench-key",
                   streaming=True, max_retries=0, stream_usage=True)
if create_agent is not None:
    graph = create_agent(model, tools=[], system_prompt="You are a helpful assistant.")
else:
    graph = create_react_agent(model, tools=[], prompt="You are a helpful assistant.")
'''

LAUNCHER = '''\
import asyncio
import os
import sys

from langgraph_runtime_inmem import ops

poll = os.environ.get("BENCH_QUEUE_POLL_S")
if poll:
    polled = ops.Runs.next

    async def next_run(wait, limit=1):
        if wait:
            await asyncio.sleep(float(poll))
        async for found in polled(False, limit):
            yield found

    ops.Runs.next = staticmethod(next_run)

from langgraph_cli.cli import cli

sys.exit(cli())
'''


def agent_factory(venv: Path) -> str:
    """Which agent factory the graph runs: create_agent (langchain ≥ 1.0) or create_react_agent."""
    probe = "import langchain.agents as a; print('create_agent' if hasattr(a, 'create_agent') else 'none')"
    done = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, check=False)
    return "langchain.agents.create_agent" if done.stdout.strip() == "create_agent" else \
        "langgraph.prebuilt.create_react_agent"


def versions(venv: Path) -> dict[str, str]:
    probe = ("import importlib.metadata as m, json; print(json.dumps({p: m.version(p) for p in "
             "('langgraph', 'langgraph-api', 'langgraph-runtime-inmem', 'langgraph-cli', 'langchain', "
             "'langchain-openai')}))")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True, text=True, check=False)
    return json.loads(done.stdout) if done.returncode == 0 else {"error": done.stderr[-500:]}


def write_graph(folder: Path) -> Path:
    (folder / "agent.py").write_text(AGENT)
    config = {"dependencies": ["."], "graphs": {"agent": "./agent.py:graph"}}
    (folder / "langgraph.json").write_text(json.dumps(config))
    (folder / "launch.py").write_text(LAUNCHER)
    return folder / "langgraph.json"


@contextmanager
def running_langgraph(venv: Path, model_url: str, folder: Path, poll_s: float | None) -> Iterator[Service]:
    """`langgraph dev` on a free port, ready once GET /ok answers, stopped when the block ends."""
    port = free_port()
    config = write_graph(folder)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMAGENT_", "VIRTUAL_ENV"))}
    env |= {"BENCH_MODEL_URL": model_url, "OPENAI_API_KEY": "bench-key", "LANGSMITH_TRACING": "false",
            "LANGCHAIN_TRACING_V2": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LOG_LEVEL": "WARNING",
            "PATH": f"{venv / 'bin'}:{env.get('PATH', '')}"}
    if poll_s is not None:
        env["BENCH_QUEUE_POLL_S"] = str(poll_s)
    command = [str(venv / "bin" / "python"), str(folder / "launch.py"), "dev", "--no-browser", "--no-reload",
               "--host", "127.0.0.1", "--port", str(port), "--config", str(config), "--server-log-level", "WARNING"]
    log_path = folder / f"langgraph-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    service = Service(process, f"http://127.0.0.1:{port}", log_path)
    try:
        wait_ok(service)
        yield service
    finally:
        service.stop()


def wait_ok(service: Service, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if service.process.poll() is not None:
            raise RuntimeError(f"langgraph dev exited with {service.process.returncode}:\n{service.log()[-4000:]}")
        try:
            if httpx.get(f"{service.base_url}/ok", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"langgraph dev did not become ready:\n{service.log()[-4000:]}")


class LangGraphClient:
    """Streamed runs of the `agent` graph; a thread per conversation, created by its first run."""

    def __init__(self, client: aiohttp.ClientSession, service: Service) -> None:
        self.client, self.service = client, service

    @staticmethod
    def new_conversation() -> str:
        return str(uuid.uuid4())

    async def turn(self, thread: str, query: str, user: str) -> int:
        """One run streamed to its end (`messages-tuple`: a frame per token); returns the content frames."""
        body: dict[str, Any] = {
            "assistant_id": "agent", "input": {"messages": [{"role": "user", "content": query}]},
            "stream_mode": ["messages-tuple"], "if_not_exists": "create", "metadata": {"user_id": user},
        }
        url = f"{self.service.base_url}/threads/{thread}/runs/stream"
        frames, event = 0, ""
        async with self.client.post(url, json=body) as response:
            if response.status != 200:
                raise RuntimeError(f"LangGraph run: HTTP {response.status}: {(await response.read())[:300]!r}")
            async for raw in response.content:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("event: "):
                    event = line[7:]
                    if event == "error":
                        raise RuntimeError(f"LangGraph run failed:\n{self.service.log()[-3000:]}")
                elif line.startswith("data: ") and event.startswith("messages") and '"content"' in line:
                    frames += 1
        return frames
