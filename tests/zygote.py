"""Starts `memagent serve` for the tests by forking a process that has imported memagent already.

A service's start is mostly the import of about 1,700 modules (2 s of CPU); the suite starts a few
hundred services on two cores. Each pytest-xdist worker keeps one zygote: a process that imported
`interfaces.cli.main` and `interfaces.app` once, then forks a child per service, which takes the
service's environment, folder and log, and runs `main(argv)` exactly as `python -m
interfaces.cli.main` would. The zygote reaps its children and tells their exit status.

Only a start whose environment differs from the zygote's in `MEMAGENT_*` settings alone is forked:
a library may read another variable when it is imported (prometheus-client's multiprocess folder,
a `sitecustomize` on `PYTHONPATH`), so any other difference, and `--workers`, gets a process of its
own (`can_fork`). `ForkedProcess` answers as much of `subprocess.Popen` as the tests use.

    python -m tests.zygote SOCKET     the zygote itself (tests/service.py starts it)
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Mapping

Request = dict[str, object]
ASK_TIMEOUT = 30.0  # seconds: a zygote that does not answer fails the test, never hangs it


def _ask(path: str, request: Request) -> Request:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(ASK_TIMEOUT)
        sock.connect(path)
        sock.sendall(json.dumps(request).encode() + b"\n")
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                raise RuntimeError("the test zygote closed the connection")
            answer += chunk
    reply: Request = json.loads(answer)
    return reply


class ForkedProcess:
    """A service the zygote forked: `pid`, `poll`, `wait`, `returncode` and the signals, as `Popen`'s."""

    def __init__(self, socket_path: str, pid: int) -> None:
        self._socket = socket_path
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            code = _ask(self._socket, {"status": self.pid})["code"]
            self.returncode = code if isinstance(code, int) else None
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(["memagent"], timeout or 0)
            time.sleep(0.02)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _compared(env: Mapping[str, str]) -> dict[str, str]:
    """What of an environment must be the zygote's for a fork: all but memagent's settings and the
    name of the test that runs, which pytest sets in it for each test."""
    return {k: v for k, v in env.items() if not k.startswith("MEMAGENT_") and k != "PYTEST_CURRENT_TEST"}


class Zygote:
    """This worker's zygote, started on first use with `base_env`, stopped when the worker exits."""

    def __init__(self, root: str, base_env: Mapping[str, str]) -> None:
        self._root = root
        self._base = _compared(base_env)
        self._socket = os.path.join(tempfile.mkdtemp(prefix="memagent-zygote-"), "socket")
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def can_fork(self, argv: list[str], env: Mapping[str, str]) -> bool:
        return "--workers" not in argv and _compared(env) == self._base

    def spawn(self, argv: list[str], env: Mapping[str, str], out: str, err: str | None = None) -> ForkedProcess:
        """`memagent ARGV` forked, its standard output in the file `out`, its errors in `err` (else `out`)."""
        self._start()
        request: Request = {"argv": argv, "env": dict(env), "cwd": self._root, "out": out, "err": err or out}
        answer = _ask(self._socket, request)
        return ForkedProcess(self._socket, int(str(answer["pid"])))

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    def _start(self) -> None:
        with self._lock:
            if self._process is not None and self._process.poll() is None:
                return
            if os.path.exists(self._socket):
                os.unlink(self._socket)
            self._process = subprocess.Popen([sys.executable, "-m", "tests.zygote", self._socket], cwd=self._root,
                                             env=dict(self._base), stdin=subprocess.DEVNULL)
            deadline = time.monotonic() + 60
            while not os.path.exists(self._socket):
                if self._process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the test zygote did not start")
                time.sleep(0.05)


def _child(request: Request, *inherited: socket.socket) -> None:
    """In the forked child: become the service the request describes, and never return."""
    code = 1
    try:
        for sock in inherited:
            sock.close()
        random.seed()  # the zygote's state is every child's: each draws its own
        os.chdir(str(request["cwd"]))
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})  # type: ignore[call-overload]
        files = {path: os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                 for path in {str(request["out"]), str(request["err"])}}  # a fresh log, as `open("wb")` makes
        os.dup2(files[str(request["out"])], 1)
        os.dup2(files[str(request["err"])], 2)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        from interfaces.cli import main as cli

        argv = [str(a) for a in list(request["argv"])]  # type: ignore[call-overload]
        sys.argv = [cli.__file__, *argv]  # as `python -m interfaces.cli.main ARGV` has it
        code = cli.main(argv)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # noqa: BLE001  (whatever ends it is printed, as the interpreter would)
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _serve(path: str) -> None:
    import interfaces.app  # noqa: F401  (imported once here, for every child)
    import interfaces.cli.main  # noqa: F401

    assert threading.active_count() == 1, "a thread started at import: forking would copy its locks"
    exited: dict[int, int] = {}
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(f"{path}.binding")
    listener.listen(64)
    os.rename(f"{path}.binding", path)  # the path appears once connections are taken
    while os.getppid() == parent:  # a zygote whose test worker is gone ends too
        while True:  # reap every child that ended
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            exited[pid] = os.waitstatus_to_exitcode(status)
        if not select.select([listener], [], [], 0.05)[0]:
            continue
        connection, _ = listener.accept()
        with connection:
            request: Request = json.loads(connection.makefile().readline())
            if "status" in request:
                answer: Request = {"code": exited.get(int(str(request["status"])))}
            else:
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    _child(request, listener, connection)
                exited.pop(pid, None)  # a pid the kernel gave again is not the child that ended before
                answer = {"pid": pid}
            connection.sendall(json.dumps(answer).encode() + b"\n")


if __name__ == "__main__":
    _serve(sys.argv[1])
