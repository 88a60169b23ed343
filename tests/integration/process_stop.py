"""Stopping a `memagent` process that a test started, so that none outlives its test."""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import signal


def stop_process(process: subprocess.Popen[bytes], sig: signal.Signals, within: float = 30) -> int:
    """`sig` unless it has exited already, then SIGKILL if it has not stopped `within` seconds (a hung
    shutdown would otherwise hang the test run); its exit status."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=within)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode
