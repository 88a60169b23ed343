"""`memagent worker` as a real process (tests of the job queue over Redis)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.integration.process_stop import stop_process
from tests.service import ROOT, service_env


@dataclass
class JobWorker:
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: no chance to finish or report its jobs."""
        self.process.kill()
        self.process.wait()

    def stop(self) -> int:
        """SIGTERM, which lets its running jobs finish; its exit status."""
        return stop_process(self.process, signal.SIGTERM)


@contextmanager
def job_worker(env: Mapping[str, str], log_dir: Path, name: str) -> Iterator[JobWorker]:
    """`memagent worker` with these settings, stopped (SIGTERM) afterwards unless it was killed."""
    log_path = log_dir / f"memagent-worker-{name}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "interfaces.cli", "worker"],
            cwd=ROOT, env=service_env(env), stdout=log, stderr=subprocess.STDOUT,
        )
    worker = JobWorker(process, log_path)
    try:
        yield worker
    finally:
        worker.stop()
