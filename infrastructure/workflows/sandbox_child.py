"""The child process of `SubprocessCodeSandbox`: one run of a `code` node's `main(**inputs)`.

Run as `python -I -S sandbox_child.py <dir of RestrictedPython>` with an empty environment: no
site-packages, no `.pth` hooks, only the standard library and RestrictedPython's directory. It reads
`{"source", "inputs", "limits"}` as JSON on stdin and writes one JSON object on stdout:
`{"outputs": {...}}` or `{"error": "a sentence"}`.

Order matters: everything the code may use is imported first, because once the limits are set
the process can open no file (RLIMIT_NOFILE), and `import` is then only a look-up in the allow-list.
"""

from __future__ import annotations

import collections
import ctypes
import datetime
import decimal
import functools
import heapq  # noqa: F401 - imported on first use by Counter.most_common: after the limits, too late
import importlib
import itertools
import json
import math
import os
import re
import resource
import statistics
import string
import sys
from types import ModuleType, SimpleNamespace
from typing import TYPE_CHECKING, Any

sys.path.append(sys.argv[1])  # RestrictedPython's directory; -S left site-packages out

from RestrictedPython.compile import compile_restricted_exec  # noqa: E402
from RestrictedPython.Eval import default_guarded_getitem, default_guarded_getiter  # noqa: E402
from RestrictedPython.Guards import (  # noqa: E402
    full_write_guard,
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    safe_builtins,
    safer_getattr_raise,
)
from RestrictedPython.PrintCollector import PrintCollector  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

importlib.import_module("_strptime")  # like heapq: datetime.strptime's, imported on first use

_MODULES = (json, math, re, datetime, statistics, itertools, functools, collections, decimal, string)
# Each reaches attributes by a name given as data, past the compile-time check of names:
# string.Formatter (`{0.__class__}`), functools.update_wrapper/wraps (`updated=("__globals__",)`).
_NOT_EXPOSED = {"Formatter", "update_wrapper", "wraps"}
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_NOBODY = 65534

_EXTRA_BUILTINS = (
    dict, list, tuple, set, frozenset, enumerate, zip, map, filter, sum, min, max, sorted, reversed,
    all, any, iter, next, bytes, format, bin,
)


def _view(module: ModuleType) -> SimpleNamespace:
    """The module's public functions, classes and constants; never another module (`json.codecs`
    reaches `open`, `statistics.sys` reaches every module)."""
    names = {name: value for name, value in vars(module).items()
             if not name.startswith("_") and not isinstance(value, ModuleType) and name not in _NOT_EXPOSED}
    return SimpleNamespace(**names)


_ALLOWED = {module.__name__: _view(module) for module in _MODULES}


def _import(name: str, globals_: Any = None, locals_: Any = None, fromlist: Any = (), level: int = 0) -> Any:
    if level == 0 and name in _ALLOWED:
        return _ALLOWED[name]
    allowed = ", ".join(sorted(_ALLOWED))
    raise ImportError(f"`import {name}` is not allowed; the modules allowed are {allowed}")


_safer_getattr: Callable[..., Any] = safer_getattr_raise  # RestrictedPython's guards are untyped


def _getattr(obj: Any, name: str, *default: Any) -> Any:
    return _safer_getattr(obj, name, *default) if default else _safer_getattr(obj, name)


def _hasattr(obj: Any, name: str) -> bool:
    try:
        _safer_getattr(obj, name)
    except (AttributeError, NotImplementedError):
        return False
    return True


def _open(*_args: Any, **_kwargs: Any) -> Any:
    raise PermissionError("`open` is not allowed: code in a workflow reaches no file")


def _inplace(operator: str, left: Any, right: Any) -> Any:
    operations = {"+=": lambda: left + right, "-=": lambda: left - right, "*=": lambda: left * right,
                  "/=": lambda: left / right, "//=": lambda: left // right, "%=": lambda: left % right,
                  "**=": lambda: left ** right, "|=": lambda: left | right, "&=": lambda: left & right,
                  "^=": lambda: left ^ right, "<<=": lambda: left << right, ">>=": lambda: left >> right}
    return operations[operator]()


def _scope() -> dict[str, Any]:
    builtins = dict(safe_builtins)
    builtins.update({b.__name__: b for b in _EXTRA_BUILTINS})
    builtins.update({"__import__": _import, "getattr": _getattr, "hasattr": _hasattr, "open": _open})
    return {
        "__builtins__": builtins, "__name__": "workflow_code", "__metaclass__": type,
        "_getattr_": _getattr, "_getitem_": default_guarded_getitem, "_getiter_": default_guarded_getiter,
        "_write_": full_write_guard, "_print_": PrintCollector, "_inplacevar_": _inplace,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence, "_unpack_sequence_": guarded_unpack_sequence,
    }


def _isolate(limits: dict[str, Any]) -> None:
    """No network (a new, empty network namespace, where the kernel allows one), no privileges, no
    new files or processes, bounded CPU and memory."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, 9)  # SIGKILL when the service process ends first
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if libc.unshare(_CLONE_NEWNET) != 0:
        libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET)  # unprivileged: a user namespace first
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(_NOBODY)
        os.setuid(_NOBODY)
    os.chdir("/")
    os.closerange(3, 1024)
    cpu = math.ceil(limits["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (_address_space() + limits["memory_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (3, 3))  # stdin, stdout, stderr: no file opens past them


def _address_space() -> int:
    """Bytes the interpreter maps already: the memory limit counts from here."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


def _error_line(error: BaseException) -> str:
    trace = error.__traceback__
    line = None
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == "<code>":
            line = trace.tb_lineno
        trace = trace.tb_next
    return f" (line {line})" if line else ""


def _run(request: dict[str, Any]) -> dict[str, Any]:
    limits = request["limits"]
    compiled = compile_restricted_exec(request["source"], filename="<code>")
    if compiled.errors or compiled.code is None:
        return {"error": "The code is not allowed: " + "; ".join(compiled.errors)}
    scope = _scope()
    _isolate(limits)
    try:
        exec(compiled.code, scope)  # noqa: S102 - RestrictedPython's compiled code, in its guarded scope
        if not callable(scope.get("main")):
            return {"error": "The code defines no `def main(**inputs)`."}
        outputs = scope["main"](**request["inputs"])
    except MemoryError:
        return {"error": f"The code used more than {limits['memory_bytes'] // 2**20} MB of memory."}
    except RecursionError:
        return {"error": "The code recursed too deeply."}
    except BaseException as error:  # noqa: BLE001 - whatever the code raises is its failure, told as a sentence
        return {"error": f"The code raised {type(error).__name__}{_error_line(error)}: {error}"}
    return _checked(outputs, limits)


def _checked(outputs: Any, limits: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(outputs, dict):
        return {"error": f"main() returned {_kind(outputs)}, not a dict."}
    if not all(isinstance(key, str) for key in outputs):
        return {"error": "main() returned a dict whose keys are not all text."}
    try:
        text = json.dumps({"outputs": outputs}, allow_nan=False)
    except (TypeError, ValueError):
        return {"error": "main() returned values JSON cannot hold: use text, numbers, booleans, None, lists and dicts."}
    except MemoryError:
        return {"error": f"The code used more than {limits['memory_bytes'] // 2**20} MB of memory."}
    if len(text) > limits["output_bytes"]:
        return {"error": f"main() returned more than {limits['output_bytes']:,} bytes of JSON."}
    return {"raw": text}


def _kind(value: Any) -> str:
    kinds = {list: "a list", tuple: "a tuple", str: "a text", int: "a number", float: "a number",
             bool: "a boolean", type(None): "None"}
    return kinds.get(type(value), "an object")


def main() -> None:
    result = _run(json.loads(sys.stdin.buffer.read()))
    sys.stdout.write(result["raw"] if "raw" in result else json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
