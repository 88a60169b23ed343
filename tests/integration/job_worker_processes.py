"""`memagent worker` as a real process (tests of the job queue over Redis), the settings such tests
run the API and its workers with, and a model whose first digests never end (their worker is
killed meanwhile)."""

from __future__ import annotations

import secrets
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.bench.upkeep_accounting import OfflineMemoryModel, purpose_of
from tests.integration.process_stop import stop_process
from tests.integration.streaming_helpers import shared_backends
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import ChatContext, Reply, stall
from tests.service import ROOT, service_env


class FirstDigestsStall:
    """The offline memory models for every call, except that the first `stalled` digests never end."""

    def __init__(self, stalled: int = 1) -> None:
        self._offline = OfflineMemoryModel()
        self._lock = threading.Lock()
        self._stalled = stalled
        self.digests = 0

    def reply(self, ctx: ChatContext) -> Reply:
        if purpose_of(ctx.body) == "digest":
            with self._lock:
                self.digests += 1
                lost = self.digests <= self._stalled
            if lost:
                return stall(seconds=600).reply(ctx)
        return self._offline.reply(ctx)


@contextmanager
def job_settings(server: ScriptedLLMServer, **overrides: str) -> Iterator[dict[str, str]]:
    """Shared PostgreSQL and Redis, jobs on a queue of their own with a 4 s timeout swept every
    second, and the test server as the model (`overrides`: more settings, or other values)."""
    extra = {
        "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": server.base_url,
        "MEMAGENT_LLM__API_KEY": "sk-test", "MEMAGENT_LLM__MAX_RETRIES": "0", "MEMAGENT_LLM__TIMEOUT": "600",
        "MEMAGENT_MEMORY__UPKEEP_EVERY_TURNS": "1",
        "MEMAGENT_MEMORY__UPKEEP_LEASE": "3",  # the killed worker's locks on conversations lapse by then
        "MEMAGENT_AGENT__TOOLS": "[]", "MEMAGENT_AGENT__USER_MEMORY": "false",
        "MEMAGENT_JOBS__BACKEND": "redis", "MEMAGENT_JOBS__QUEUE": f"memagent-test-{secrets.token_hex(4)}",
        "MEMAGENT_JOBS__TIMEOUT": "4", "MEMAGENT_JOBS__SWEEP_INTERVAL": "1", "MEMAGENT_JOBS__RETRY_DELAY": "0",
    } | overrides
    with shared_backends(extra) as env:
        yield env


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
            [sys.executable, "-m", "interfaces.cli.main", "worker"],
            cwd=ROOT, env=service_env(env), stdout=log, stderr=subprocess.STDOUT,
        )
    worker = JobWorker(process, log_path)
    try:
        yield worker
    finally:
        worker.stop()
