"""Runs `memagent serve` as a real process on a free port, for tests that drive it over HTTP."""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


# Each pytest-xdist worker draws ports from its own block, below Linux's ephemeral range (32768 on),
# so no two workers, and no outgoing connection, can pick the port one is about to bind.
_PORT_BLOCK = 1000
_FIRST_PORT = 20000 + _PORT_BLOCK * int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
_next_ports = itertools.cycle(range(_FIRST_PORT, _FIRST_PORT + _PORT_BLOCK))


def free_port() -> int:
    """A port nothing listens on, never the same twice in a row (two servers of one test may both
    ask before either binds)."""
    for _ in range(_PORT_BLOCK):
        port = next(_next_ports)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {_FIRST_PORT}-{_FIRST_PORT + _PORT_BLOCK - 1}")


@dataclass
class Service:
    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass(frozen=True)
class AccountKey:
    raw: str
    owner: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.raw}"}


def create_account_key(db_url: str, name: str) -> AccountKey:
    """`memagent keys create NAME` with keys required, as an operator runs it: a new account's key."""
    done = subprocess.run(
        [sys.executable, "-m", "interfaces.cli.main", "keys", "create", name], cwd=ROOT, capture_output=True, text=True,
        timeout=60, check=False,
        env=service_env({"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true"}),
    )
    assert done.returncode == 0, done.stderr
    fields = dict(line.split(maxsplit=1) for line in done.stdout.splitlines())
    return AccountKey(fields["key"], fields["owner"])


# pytest-xdist's workers set COLUMNS=80 and LINES=24, which a program's terminal library takes over
# the size of the terminal it really runs in (a test's pseudo-terminal).
NOT_PASSED_ON = ("COLUMNS", "LINES")


def service_env(extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMAGENT_") and k not in NOT_PASSED_ON}
    return env | dict(extra)


@contextmanager
def running_service(env: Mapping[str, str], log_dir: Path, port: int | None = None) -> Iterator[Service]:
    port = port or free_port()
    log_path = log_dir / f"memagent-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "interfaces.cli.main", "serve", "--port", str(port)],
            cwd=ROOT, env=service_env(env), stdout=log, stderr=subprocess.STDOUT,
        )
    service = Service(process, f"http://127.0.0.1:{port}", log_path)
    try:
        _wait_ready(service)
        yield service
    finally:
        service.stop()


def _wait_ready(service: Service, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if service.process.poll() is not None:
            raise RuntimeError(f"memagent exited with {service.process.returncode}:\n{service.log()}")
        try:
            if httpx.get(f"{service.base_url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"memagent did not become ready:\n{service.log()}")


def parse_sse(body: str) -> list[dict[str, object]]:
    """SSE text → frames with `event`, `id` and parsed `data` (comments kept as event ':')."""
    frames = []
    for block in body.split("\n\n"):
        if not block.strip():
            continue
        frame: dict[str, object] = {}
        for line in block.splitlines():
            if line.startswith(":"):
                frame["event"] = ":"
            else:
                key, _, value = line.partition(": ")
                frame[key] = json.loads(value) if key == "data" else value
        frames.append(frame)
    return frames
