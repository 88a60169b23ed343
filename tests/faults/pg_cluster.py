"""A private PostgreSQL cluster for fault tests, stopped and started at will; never the shared one."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.service import free_port


def _version() -> str:
    return sorted(p.name for p in Path("/etc/postgresql").iterdir())[-1]


@dataclass
class PgCluster:
    name: str
    port: int
    version: str

    @property
    def url(self) -> str:
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def ctl(self, action: str, *extra: str) -> None:
        subprocess.run(  # noqa: S603 - fixed arguments
            ["pg_ctlcluster", "--skip-systemctl-redirect", self.version, self.name, action, *extra],  # noqa: S607
            check=True, capture_output=True, timeout=60,
        )

    def start(self) -> None:
        self.ctl("start")
        deadline = time.monotonic() + 30
        while subprocess.run(["pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port)],  # noqa: S603, S607
                             check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the private cluster on port {self.port} did not start")
            time.sleep(0.1)

    def stop(self) -> None:
        self.ctl("stop", "-m", "fast")


@contextmanager
def private_pg_cluster() -> Iterator[PgCluster]:
    if shutil.which("pg_createcluster") is None or not Path("/etc/postgresql").is_dir():
        pytest.skip("PostgreSQL's cluster tools are not installed")
    cluster = PgCluster(f"fault{uuid.uuid4().hex[:8]}", free_port(), _version())
    subprocess.run(  # noqa: S603 - fixed arguments
        ["pg_createcluster", cluster.version, cluster.name, "-p", str(cluster.port), "--",  # noqa: S607
         "--auth=trust"],
        check=True, capture_output=True, timeout=120,
    )
    try:
        cluster.start()
        yield cluster
    finally:
        subprocess.run(  # noqa: S603 - fixed arguments
            ["pg_dropcluster", "--stop", cluster.version, cluster.name],  # noqa: S607
            check=False, capture_output=True, timeout=120,
        )
