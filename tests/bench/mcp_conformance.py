"""The MCP conformance suite's server scenarios against memagent's `/mcp`, each failure classified.

    python -m tests.bench.mcp_conformance --conformance PATH [--node-bin DIR]

PATH is the `conformance` command of the npm package `@modelcontextprotocol/conformance`, which
needs Node 22 (the npm package `node@22` brings one: pass its `.bin` folder as `--node-bin`).
It is not in the test command: the suite comes from the npm registry, not from PyPI.

One `memagent serve` (single-user mode, SQLite) is started; each scenario of the active suite runs
on its own (`--scenario NAME --verbose`). A failure is one of:

- `fixture`: the scenario calls a tool, prompt or resource of the reference server's own fixtures
  (`test_*`, `test://…`, or a tool it names as not found), which memagent does not have, and should not;
- `undeclared`: the method belongs to a capability memagent does not declare at `initialize`
  (logging, completions, resource subscriptions), and the answer is JSON-RPC -32601;
- `protocol`: anything else, a real conformance failure; the script exits 1 when there is one.

Printed as JSON: counts by outcome, and each scenario's outcome and message.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import httpx

from tests.service import running_service

ANSI = re.compile(r"\x1b\[[0-9;]*m")
FIXTURE = re.compile(r"\btest_[a-z0-9_]+|test://")
MISSING_TOOL = re.compile(r"Tool '[^']+' not found")  # a fixture tool the scenario names in its message only
# The capability (as `initialize` declares it) that each scenario's method needs.
CAPABILITY_OF = {
    "logging-set-level": ("logging",), "completion-complete": ("completions",),
    "resources-subscribe": ("resources", "subscribe"), "resources-unsubscribe": ("resources", "subscribe"),
}


def scenarios(conformance: str, env: dict[str, str]) -> list[str]:
    listed = subprocess.run([conformance, "list", "--server"], capture_output=True, text=True, env=env,
                            check=True, timeout=60).stdout
    return re.findall(r"^\s+- (\S+)", ANSI.sub("", listed), flags=re.MULTILINE)


def run_scenario(conformance: str, env: dict[str, str], url: str, name: str) -> tuple[dict[str, Any], str]:
    done = subprocess.run([conformance, "server", "--url", url, "--scenario", name, "--verbose"],
                          capture_output=True, text=True, env=env, check=False, timeout=120)
    text = ANSI.sub("", done.stdout + done.stderr)
    start, end = text.find("\n[\n"), text.find("\n]\n")
    checks = json.loads(text[start + 1:end + 2]) if start >= 0 and end > start else []
    failed = [check for check in checks if check.get("status") == "FAILURE"]
    result = {"checks": len(checks), "failed": len(failed),
              "message": "; ".join(str(check.get("errorMessage", "")) for check in failed)[:300]}
    return result, text[end:]


def declared(url: str) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
    answer = httpx.post(url, json=body, timeout=10, headers={"Accept": "application/json, text/event-stream"})
    data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
    parsed = json.loads(data[-1]) if data else answer.json()
    return dict(parsed["result"]["capabilities"])


def outcome(name: str, result: dict[str, Any], requirements: str, capabilities: dict[str, Any]) -> str:
    if result["checks"] == 0 or result["failed"] == 0:
        return "passed" if result["checks"] else "skipped"
    needed = CAPABILITY_OF.get(name)
    if needed and "-32601" in result["message"]:
        held: Any = capabilities
        for part in needed:
            held = held.get(part) if isinstance(held, dict) else None
        if not held:
            return "undeclared"
    fixture = FIXTURE.search(requirements) or MISSING_TOOL.search(result["message"])
    return "fixture" if fixture else "protocol"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conformance", required=True, help="the conformance command (npm's .bin/conformance)")
    parser.add_argument("--node-bin", help="a folder holding Node 22's `node`, put first on PATH")
    args = parser.parse_args()
    env = dict(os.environ)
    if args.node_bin:
        env["PATH"] = f"{args.node_bin}:{env['PATH']}"
    with tempfile.TemporaryDirectory() as folder:
        database = f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}"
        with running_service({"MEMAGENT_DATABASE__URL": database}, Path(folder)) as service:
            url = f"{service.base_url}/mcp"
            capabilities = declared(url)
            results: dict[str, dict[str, Any]] = {}
            for name in scenarios(args.conformance, env):
                result, requirements = run_scenario(args.conformance, env, url, name)
                results[name] = {"outcome": outcome(name, result, requirements, capabilities), **result}
    counts: dict[str, int] = {}
    for result in results.values():
        counts[result["outcome"]] = counts.get(result["outcome"], 0) + 1
    print(json.dumps({"declared": sorted(capabilities), "counts": counts, "scenarios": results}, indent=2))
    raise SystemExit(1 if counts.get("protocol") else 0)


if __name__ == "__main__":
    main()
