"""SubprocessCodeSandbox: a `code` node's `main(**inputs)` in RestrictedPython inside a limited child
process; each escape attempt is refused with a sentence. These tests start real processes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from application.errors import NodeFailed
from application.ports.code_sandbox import CodeLimits
from infrastructure.workflows import subprocess_code_sandbox
from infrastructure.workflows.subprocess_code_sandbox import SubprocessCodeSandbox

pytestmark = pytest.mark.integration

# Generous wall time: the suite runs on busy machines; the CPU limit is what a loop meets first.
LIMITS = CodeLimits(cpu_seconds=1.0, memory_bytes=128 * 2**20, wall_seconds=20.0, output_bytes=64 * 1024)
_CHILD_DIR = str(Path(subprocess_code_sandbox.__file__).parent)
_RESTRICTED_PYTHON_DIR = subprocess_code_sandbox._RESTRICTED_PYTHON_DIR
ALLOWED = "collections, datetime, decimal, functools, itertools, json, math, re, statistics, string"


@pytest.fixture
def sandbox() -> SubprocessCodeSandbox:
    return SubprocessCodeSandbox()


async def refusal(sandbox: SubprocessCodeSandbox, source: str, limits: CodeLimits = LIMITS) -> str:
    with pytest.raises(NodeFailed) as raised:
        await sandbox.run(source, {}, limits)
    return raised.value.message


async def test_main_returns_its_dict_built_from_the_inputs(sandbox: SubprocessCodeSandbox) -> None:
    source = (
        "import json, statistics\n"
        "from collections import Counter\n"
        "def main(words, scores):\n"
        "    counts = Counter(w.lower() for w in words)\n"
        "    return {'top': counts.most_common(1)[0][0], 'mean': statistics.mean(scores),\n"
        "            'echo': json.loads(json.dumps({'n': len(words)}))}\n"
    )
    outputs = await sandbox.run(source, {"words": ["a", "B", "b"], "scores": [1, 2, 3]}, LIMITS)
    assert outputs == {"top": "b", "mean": 2, "echo": {"n": 3}}


@pytest.mark.parametrize(("source", "sentence"), [
    ("def main():\n    return {'x': open('/etc/passwd').read()}",
     "The code raised PermissionError (line 2): `open` is not allowed: code in a workflow reaches no file"),
    ("import os\ndef main():\n    return {}",
     f"The code raised ImportError (line 1): `import os` is not allowed; the modules allowed are {ALLOWED}"),
    ("import subprocess\ndef main():\n    return {}",
     f"The code raised ImportError (line 1): `import subprocess` is not allowed; the modules allowed are {ALLOWED}"),
    ("import socket\ndef main():\n    return {}",
     f"The code raised ImportError (line 1): `import socket` is not allowed; the modules allowed are {ALLOWED}"),
    ("def main():\n    return {'os': __import__('os')}",
     "The code is not allowed: Line 2: \"__import__\" is an invalid variable name because it starts with \"_\""),
    ("def main():\n    return {'n': len(().__class__.__bases__[0].__subclasses__())}",
     "The code is not allowed: Line 2: \"__subclasses__\" is an invalid attribute name because it starts with "
     "\"_\".; Line 2: \"__bases__\" is an invalid attribute name because it starts with \"_\".; Line 2: "
     "\"__class__\" is an invalid attribute name because it starts with \"_\"."),
    ("def main():\n    return {'g': getattr(main, '__globals__')}",
     "The code raised AttributeError (line 2): \"__globals__\" is an invalid attribute name because it starts "
     "with \"_\""),
    ("import json\ndef main():\n    return {'f': json.codecs.open('/etc/passwd').read()}",
     "The code raised AttributeError (line 3): 'types.SimpleNamespace' object has no attribute 'codecs'"),
    ("import functools\ndef main():\n    functools.update_wrapper(main, len, (), ('__globals__',))\n    return {}",
     "The code raised AttributeError (line 3): 'types.SimpleNamespace' object has no attribute 'update_wrapper'"),
])
async def test_an_escape_attempt_is_refused_with_a_sentence(sandbox: SubprocessCodeSandbox, source: str,
                                                            sentence: str) -> None:
    assert await refusal(sandbox, source) == sentence


async def test_the_code_problem_is_named_before_it_runs(sandbox: SubprocessCodeSandbox) -> None:
    assert sandbox.problem("def main(**inputs):\n    return {}") is None
    assert sandbox.problem("def helper():\n    return {}") == "The code defines no `def main(**inputs)`."
    assert sandbox.problem("def main(:\n") == "Line 1: SyntaxError: invalid syntax at statement: 'def main(:'"
    assert sandbox.problem("def main():\n    return ().__class__") == \
        "Line 2: \"__class__\" is an invalid attribute name because it starts with \"_\"."


async def test_an_endless_loop_stops_at_the_cpu_limit(sandbox: SubprocessCodeSandbox) -> None:
    assert await refusal(sandbox, "def main():\n    while True:\n        pass") == \
        "The code ran past its 1 s of CPU time."


async def test_a_sleeping_process_stops_at_the_wall_clock_limit(sandbox: SubprocessCodeSandbox) -> None:
    # No sleep is importable: a regular expression that backtracks for ever stands in, under a CPU
    # limit longer than the wall-clock one.
    limits = CodeLimits(cpu_seconds=30.0, memory_bytes=LIMITS.memory_bytes, wall_seconds=1.0,
                        output_bytes=LIMITS.output_bytes)
    source = "import re\ndef main():\n    return {'m': bool(re.match('(a+)+$', 'a' * 64 + 'b'))}"
    started = time.monotonic()
    assert await refusal(sandbox, source, limits) == "The code ran past its 1 s of wall-clock time."
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("source", [
    "def main():\n    return {'x': 'x' * 10**10}",
    "def main():\n    return {'x': len([0] * 10**10)}",
])
async def test_a_huge_allocation_stops_at_the_memory_limit(sandbox: SubprocessCodeSandbox, source: str) -> None:
    assert await refusal(sandbox, source) == "The code used more than 128 MB of memory."


async def test_a_huge_output_is_refused(sandbox: SubprocessCodeSandbox) -> None:
    assert await refusal(sandbox, "def main():\n    return {'x': 'x' * 100000}") == \
        "main() returned more than 65,536 bytes of JSON."


@pytest.mark.parametrize(("source", "sentence"), [
    ("def main():\n    return [1]", "main() returned a list, not a dict."),
    ("def main():\n    return {'s': {1, 2}}",
     "main() returned values JSON cannot hold: use text, numbers, booleans, None, lists and dicts."),
    ("def main():\n    return {'x': 1 / 0}", "The code raised ZeroDivisionError (line 2): division by zero"),
])
async def test_a_wrong_answer_is_named(sandbox: SubprocessCodeSandbox, source: str, sentence: str) -> None:
    assert await refusal(sandbox, source) == sentence


async def test_two_runs_at_once_each_get_their_own_answer(sandbox: SubprocessCodeSandbox) -> None:
    source = "def main(n):\n    return {'square': n * n}"
    answers = await asyncio.gather(*(sandbox.run(source, {"n": n}, LIMITS) for n in (3, 4)))
    assert answers == [{"square": 9}, {"square": 16}]


@pytest.mark.parametrize("attempt", [
    "open('/etc/passwd').read()",
    "socket.socket(socket.AF_INET, socket.SOCK_STREAM)",
    "os.fork()",
    "open('/tmp/sandbox-written', 'w')",
])
def test_past_restricted_python_the_child_process_opens_no_file_socket_or_process(attempt: str) -> None:
    # The second layer alone: the child's isolation, then plain Python, as if RestrictedPython were beaten.
    program = (
        f"import sys; sys.argv = ['child', {_RESTRICTED_PYTHON_DIR!r}]; sys.path.insert(0, {_CHILD_DIR!r})\n"
        "import os, socket, sandbox_child\n"
        "sandbox_child._isolate({'cpu_seconds': 2, 'memory_bytes': 2**27})\n"
        f"try:\n    {attempt}\n    print('allowed')\nexcept OSError:\n    print('refused')\n"
    )
    done = subprocess.run([sys.executable, "-I", "-S", "-c", program], capture_output=True, env={},
                          timeout=60, check=False)
    assert done.stdout.decode().strip() == "refused", done.stderr.decode()
