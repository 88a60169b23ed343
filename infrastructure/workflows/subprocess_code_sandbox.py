"""`code` nodes run in two layers, each enough for most of what it stops:

1. RestrictedPython (the Zope Foundation's, maintained since 2000, the language guard of Plone and
   Zope) compiles the code: no names or attributes starting with `_` (`__subclasses__`,
   `__globals__`, `__builtins__`), no `exec`/`eval`/`open`, guarded `getattr`, item access and
   iteration, and `import` only from an allow-list of pure modules (json, math, re, datetime,
   statistics, itertools, functools, collections, decimal, string), exposed without their
   submodules.
2. The compiled code runs in a short-lived child process (`sandbox_child.py`, `python -I -S`, empty
   environment, its own session) that, before running it, enters a new empty network namespace
   where the kernel allows it, drops root to `nobody`, and sets RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE=0,
   RLIMIT_NOFILE=3 (no file can be opened) and RLIMIT_NPROC=0 (no process can be started). The
   parent kills the process group past the wall-clock limit and reads at most the output limit.

Why not only one of them: an escape from RestrictedPython still meets a process that can open no
file, start no process and (with a network namespace) reach no network; and a process alone would
leave the code the whole of Python's introspection. Containers (gVisor, nsjail, Firecracker) would
isolate more but need a runtime or privileges a plain `pip install` does not bring.

A run costs one interpreter start, about 60-100 ms; runs at once are bounded by `max_processes`.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import RestrictedPython
from RestrictedPython.compile import compile_restricted_exec

from application.errors import NodeFailed
from application.ports.code_sandbox import CodeLimits, CodeSandbox

if TYPE_CHECKING:
    from collections.abc import Mapping

_CHILD = str(Path(__file__).with_name("sandbox_child.py"))
_RESTRICTED_PYTHON_DIR = str(Path(RestrictedPython.__file__).parent.parent)
_ENVELOPE_BYTES = 4096  # the child's JSON around the outputs, or its error sentence
_READ_CHUNK = 65536


class SubprocessCodeSandbox(CodeSandbox):
    def __init__(self, python: str = sys.executable, max_processes: int = 8) -> None:
        self._python = python
        self._slots = asyncio.Semaphore(max_processes)

    def problem(self, source: str) -> str | None:
        compiled = compile_restricted_exec(source, filename="<code>")
        if compiled.errors:
            return "; ".join(compiled.errors)
        defines_main = any(isinstance(node, ast.FunctionDef) and node.name == "main"
                           for node in ast.parse(source).body)
        return None if defines_main else "The code defines no `def main(**inputs)`."

    async def run(self, source: str, inputs: Mapping[str, Any], limits: CodeLimits) -> dict[str, Any]:
        try:
            request = json.dumps({"source": source, "inputs": dict(inputs), "limits": {
                "cpu_seconds": limits.cpu_seconds, "memory_bytes": limits.memory_bytes,
                "output_bytes": limits.output_bytes}}).encode()
        except (TypeError, ValueError):
            raise NodeFailed("The code's inputs are not all JSON values.") from None
        async with self._slots:
            answer, returncode = await self._exchange(request, limits)
        return _outputs(answer, returncode, limits)

    async def _exchange(self, request: bytes, limits: CodeLimits) -> tuple[bytes, int]:
        child = await asyncio.create_subprocess_exec(
            self._python, "-I", "-S", _CHILD, _RESTRICTED_PYTHON_DIR,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env={}, start_new_session=True,
        )
        try:
            answer = await asyncio.wait_for(_talk(child, request, limits.output_bytes), limits.wall_seconds)
        except TimeoutError:
            raise NodeFailed(f"The code ran past its {limits.wall_seconds:g} s of wall-clock time.") from None
        finally:
            if child.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)  # its session: nothing it started outlives it
                await child.wait()
        return answer, child.returncode or 0


async def _talk(child: asyncio.subprocess.Process, request: bytes, output_bytes: int) -> bytes:
    stdin, stdout = child.stdin, child.stdout
    if stdin is None or stdout is None:
        raise NodeFailed("The sandbox's process started without its pipes.")
    stdin.write(request)
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # it may end before reading all
        await stdin.drain()
        stdin.close()
    answer = bytearray()
    while chunk := await stdout.read(_READ_CHUNK):
        answer += chunk
        if len(answer) > output_bytes + _ENVELOPE_BYTES:
            raise NodeFailed(f"main() returned more than {output_bytes:,} bytes of JSON.")
    await child.wait()
    return bytes(answer)


def _outputs(answer: bytes, returncode: int, limits: CodeLimits) -> dict[str, Any]:
    if returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise NodeFailed(f"The code ran past its {limits.cpu_seconds:g} s of CPU time.")
    try:
        result = json.loads(answer)
    except ValueError:
        raise NodeFailed(_crash_sentence(returncode, limits)) from None
    if "error" in result:
        raise NodeFailed(str(result["error"]))
    outputs: dict[str, Any] = result["outputs"]
    return outputs


def _crash_sentence(returncode: int, limits: CodeLimits) -> str:
    if returncode < 0:
        return (f"The code's process was ended by signal {-returncode}; it may have needed more than "
                f"{limits.memory_bytes // 2**20} MB of memory.")
    return f"The code's process ended with status {returncode} without an answer."
