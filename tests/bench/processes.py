"""Servers the benchmarks run as processes of their own (the floor app, a profiled or multi-worker
`memagent serve`), and the process tree whose CPU they report."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.service import ROOT, Service, free_port, service_env


@contextmanager
def running_server(command: list[str], log_dir: Path, env: Mapping[str, str] | None = None,
                   port: int | None = None) -> Iterator[Service]:
    """`command` (ending in the port it is to bind) started, and ready once its /healthz answers 200;
    stopped with SIGINT when the block ends. `env`: MEMAGENT_* settings, replacing ours."""
    port = port or free_port()
    log_path = log_dir / f"server-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*command, str(port)], cwd=ROOT, env=service_env(env or {}), stdout=log, stderr=subprocess.STDOUT,
        )
    service = Service(process, f"http://127.0.0.1:{port}", log_path)
    try:
        wait_ready(service)
        yield service
    finally:
        service.stop()


def wait_ready(service: Service, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if service.process.poll() is not None:
            raise RuntimeError(f"the server exited with {service.process.returncode}:\n{service.log()}")
        try:
            if httpx.get(f"{service.base_url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"the server did not become ready:\n{service.log()}")


def process_tree(pid: int) -> list[int]:
    """The process and all its descendants (uvicorn's workers under its supervisor), from /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # gone meanwhile
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(parents.get(current, []))
    return tree
