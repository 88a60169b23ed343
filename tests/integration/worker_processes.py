"""`memagent serve --workers N` as a real process, and which of its workers served a response.

The workers share one listening socket, so the port cannot tell them apart. The kernel can: the
server end of a client's connection is a socket that exactly one worker holds open. Linux lists
every TCP socket in /proc/net/tcp with its inode, and each process's descriptors in
/proc/PID/fd, so a test finds the worker of any response without the server telling it.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.integration.process_stop import stop_process
from tests.integration.streaming_helpers import READY_WITHIN, wait_until
from tests.service import ROOT, free_port, service_env

WORKER_STARTED = re.compile(r"Started server process \[(\d+)\]")
STARTUP_COMPLETE = "Application startup complete"


@dataclass
class Workers:
    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    @property
    def pids(self) -> list[int]:
        """The worker processes uvicorn started, as they logged themselves."""
        return [int(pid) for pid in WORKER_STARTED.findall(self.log())]

    def client(self) -> httpx.Client:
        """A client of its own: its first request opens a new connection, which any worker may accept."""
        return httpx.Client(base_url=self.base_url, timeout=30, limits=httpx.Limits(max_connections=1))

    def stop(self) -> int:
        """SIGINT to uvicorn's parent process, which stops its workers; its exit status."""
        return stop_process(self.process, signal.SIGINT)


@contextmanager
def serving_workers(env: Mapping[str, str], log_dir: Path, workers: int) -> Iterator[Workers]:
    """`memagent serve --workers N` on a free port, once every worker has started; stopped afterwards."""
    port = free_port()
    log_path = log_dir / f"memagent-workers-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "interfaces.cli.main", "serve", "--port", str(port), "--workers", str(workers)],
            cwd=ROOT, env=service_env(env), stdout=log, stderr=subprocess.STDOUT,
        )
    served = Workers(process, f"http://127.0.0.1:{port}", log_path)
    try:
        wait_until(lambda: _all_started(served, workers), READY_WITHIN, f"{workers} workers to start", every=0.2)
        yield served
    finally:
        served.stop()


def _all_started(served: Workers, workers: int) -> bool:
    if served.process.poll() is not None:
        raise RuntimeError(f"memagent exited with {served.process.returncode}:\n{served.log()}")
    return served.log().count(STARTUP_COMPLETE) >= workers


def serving_pid(response: httpx.Response, pids: Collection[int]) -> int:
    """The worker, among `pids`, holding the server end of the connection `response` came over."""
    host, port = response.extensions["network_stream"].get_extra_info("client_addr")[:2]
    socket_name = f"socket:[{_server_end_inode(host, port)}]"
    holders = [pid for pid in pids if socket_name in _descriptors(pid)]
    assert len(holders) == 1, f"{socket_name} is held by {holders} of the workers {sorted(pids)}"
    return holders[0]


def _server_end_inode(host: str, port: int) -> str:
    """The inode of the TCP socket whose remote end is the client's (host, port)."""
    remote = f"{socket.inet_aton(host)[::-1].hex().upper()}:{port:04X}"  # /proc/net/tcp's notation
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[2] == remote:
            return fields[9]
    raise AssertionError(f"no server socket connected to {host}:{port}")


def _descriptors(pid: int) -> set[str]:
    folder = Path(f"/proc/{pid}/fd")
    found = set()
    for entry in folder.iterdir():
        try:
            found.add(os.readlink(entry))
        except FileNotFoundError:  # closed while listed
            continue
    return found
