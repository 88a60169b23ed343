"""Runs `memagent serve` as a real process on a free port, for tests that drive it over HTTP."""

from __future__ import annotations

import atexit
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.zygote import ForkedProcess, Zygote

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
    process: subprocess.Popen[bytes] | ForkedProcess
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
    env = service_env({"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true"})
    done = run_memagent(["keys", "create", name], env, timeout=60)
    assert done.returncode == 0, done.stderr
    fields = dict(line.split(maxsplit=1) for line in done.stdout.splitlines())
    return AccountKey(fields["key"], fields["owner"])


# pytest-xdist's workers set COLUMNS=80 and LINES=24, which a program's terminal library takes over
# the size of the terminal it really runs in (a test's pseudo-terminal).
NOT_PASSED_ON = ("COLUMNS", "LINES")


def service_env(extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMAGENT_") and k not in NOT_PASSED_ON}
    return env | dict(extra)


# This worker's services are forked from one process that imported memagent once (tests/zygote.py).
_ZYGOTE = Zygote(str(ROOT), service_env({}))
atexit.register(_ZYGOTE.stop)


def start_memagent(argv: list[str], env: Mapping[str, str], log_path: Path) -> subprocess.Popen[bytes] | ForkedProcess:
    """`memagent ARGV` with `env` (as `service_env` makes it), its output in `log_path`: forked from
    the zygote where nothing but memagent's settings differ, else a process of its own."""
    if _ZYGOTE.can_fork(argv, env):
        return _ZYGOTE.spawn(argv, env, str(log_path))
    with log_path.open("wb") as log:
        return subprocess.Popen([sys.executable, "-m", "interfaces.cli.main", *argv], cwd=ROOT, env=dict(env),
                                stdout=log, stderr=subprocess.STDOUT)


def run_memagent(argv: list[str], env: Mapping[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """`memagent ARGV` to its end, as `subprocess.run(..., capture_output=True, text=True)` answers
    it (`env` as `service_env` makes it), forked from the zygote where `start_memagent` would."""
    command = [sys.executable, "-m", "interfaces.cli.main", *argv]
    if not _ZYGOTE.can_fork(argv, env):
        return subprocess.run(command, cwd=ROOT, env=dict(env), capture_output=True, text=True, timeout=timeout,
                              check=False)
    with tempfile.TemporaryDirectory() as folder:
        out, err = Path(folder) / "out", Path(folder) / "err"
        process = _ZYGOTE.spawn(argv, env, str(out), str(err))
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        return subprocess.CompletedProcess(command, code, _read(out), _read(err))


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


@contextmanager
def running_service(env: Mapping[str, str], log_dir: Path, port: int | None = None) -> Iterator[Service]:
    port = port or free_port()
    log_path = log_dir / f"memagent-{port}.log"
    process = start_memagent(["serve", "--port", str(port)], service_env(env), log_path)
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
