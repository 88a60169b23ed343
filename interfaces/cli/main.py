"""`memagent` command line: serve, migrate, mcp, keys (create, list, revoke), agents and workflows (list,
export, import), chat, prune, worker."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import sys
from typing import TYPE_CHECKING, TypeVar

from pydantic import ValidationError
from pydantic_settings import SettingsError

from application.accounts.authenticate import LOCAL_OWNER
from application.errors import ApplicationError
from domain.accounts.keys import ApiKey, ApiKeyId
from domain.ids import AppId, OwnerId
from infrastructure.logs.log_format import TEXT_FORMAT
from infrastructure.models.scripted_model import HOW_TO_CONFIGURE
from infrastructure.persistence.migrate import run_migrations
from interfaces.cli.agents import add_agents_commands, run_agents_command
from interfaces.cli.chat.command import add_chat_command, run_chat
from interfaces.cli.prune import add_prune_command, run_prune
from interfaces.cli.serve_workers import WORKER_APP, shared_metrics_folder, workers_refusal
from interfaces.cli.worker import add_worker_command, run_worker
from interfaces.cli.workflows import add_workflows_commands, run_workflows_command
from interfaces.lifecycle import start_backends, stop_backends
from interfaces.log_setup import configure_job_logging, configure_logging
from interfaces.settings.checks import settings_problem
from interfaces.settings.errors import invalid_settings_line
from interfaces.settings.settings import Settings
from interfaces.wiring.build import build_container

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from application.accounts.create_api_key import CreatedKey
    from interfaces.wiring.container import Container


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memagent", description="A backend for memory-powered chat agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP API with uvicorn")
    serve.add_argument("--host", help="address to bind (default from MEMAGENT_SERVER__HOST, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default from MEMAGENT_SERVER__PORT, 8000)")
    serve.add_argument("--workers", type=int, default=1,
                       help="worker processes on the one port (default 1); more than one needs Redis events and "
                       "memory and PostgreSQL, which every worker shares")
    commands.add_parser("migrate", help="create or upgrade the database schema (Alembic)")
    mcp = commands.add_parser("mcp", help="serve chat, get_memory and search_memory as an MCP server on stdio")
    mcp.add_argument("--owner", help="the account the tools act for (default: the single local owner)")
    keys = commands.add_parser("keys", help="API keys: create, list, revoke").add_subparsers(
        dest="keys_command", required=True
    )
    create = keys.add_parser("create", help="create a key (for a new account unless --owner or --agent; in single-"
                             "user mode, for the owner 'local'); shown once")
    create.add_argument("name", help="what the key is for, e.g. a person or a service")
    create.add_argument("--owner", help="add the key to this existing account instead of a new one (in single-user "
                        "mode the default is 'local')")
    create.add_argument("--agent", help="an agent key: bound to this agent, for the agent's owner; it may only "
                        "chat with the agent and reach its end users' conversations")
    listing = keys.add_parser("list", help="list keys: id, owner, name, created, revoked, agent (never the keys)")
    listing.add_argument("--owner", help="only this account's keys")
    listing.add_argument("--agent", help="only the keys bound to this agent")
    revoke = keys.add_parser("revoke", help="revoke a key by id; requests with it are refused at once")
    revoke.add_argument("id", help="the key's id, as `memagent keys list` shows it")
    add_agents_commands(commands)
    add_workflows_commands(commands)
    add_chat_command(commands)
    add_prune_command(commands)
    add_worker_command(commands)
    return parser


REQUIRE_KEYS_SETTING = "MEMAGENT_AUTH__REQUIRE_KEYS"


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and `localhost`: addresses only this machine can reach."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def refusal_to_bind(settings: Settings, host: str) -> str | None:
    """Why `serve` must not listen on `host`, or None: without keys, only this machine may connect."""
    if settings.auth.require_keys or is_loopback(host):
        return None
    return (
        f"refusing to listen on {host} without API keys: single-user mode only binds to 127.0.0.1, ::1"
        f" or localhost; set {REQUIRE_KEYS_SETTING}=true and create keys with `memagent keys create <name>`"
    )


async def _preflight(settings: Settings) -> bool:
    """Checks the backends; says whether an active API key exists (when keys are required)."""
    container = build_container(settings)
    try:
        await start_backends(container, settings)
        if not settings.auth.require_keys:
            return True
        return any(key.is_active for key in await container.list_api_keys()())
    finally:
        await stop_backends(container)


def _serve(settings: Settings, host: str | None, port: int | None, workers: int) -> int:
    host = host or settings.server.host
    refusal = refusal_to_bind(settings, host) or workers_refusal(settings, workers)
    if refusal is not None:
        print(f"memagent: cannot start: {refusal}", file=sys.stderr)
        return 1
    try:
        configure_job_logging(settings)  # refuses an unknown log level here, not in uvicorn's traceback
        has_keys = asyncio.run(_preflight(settings))
    except ApplicationError as failure:
        print(f"memagent: cannot start: {failure.message}", file=sys.stderr)
        return 1
    if settings.llm.provider == "scripted":
        print(f"memagent: {HOW_TO_CONFIGURE}", file=sys.stderr)
    if not settings.auth.require_keys:
        print(f"memagent: single-user mode: requests without a key act as the owner 'local'"
              f" ({REQUIRE_KEYS_SETTING}=false)", file=sys.stderr)
    elif not has_keys:
        print("memagent: no active API key yet: every request will get 401 until you run"
              " `memagent keys create <name>`", file=sys.stderr)
    _run_uvicorn(settings, host, port or settings.server.port, workers)
    return 0


# Seconds a worker may take to answer uvicorn's first health check: it re-imports the app first,
# 6-7 s of CPU on a small host, which uvicorn's 5 s default turns into a loop of killed workers.
WORKER_START_GRACE = 120


def _run_uvicorn(settings: Settings, host: str, port: int, workers: int) -> None:
    import uvicorn

    # Only `serve` imports the web app (its routes, the MCP and A2A SDKs): the other commands start faster.
    from interfaces.app import create_app

    # log_config=None: uvicorn's loggers go through memagent's handler: one format, secrets masked.
    if workers == 1:
        uvicorn.run(create_app(settings), host=host, port=port, log_level=settings.server.log_level, log_config=None)
        return
    with shared_metrics_folder():
        uvicorn.run(WORKER_APP, factory=True, workers=workers, host=host, port=port,
                    log_level=settings.server.log_level, log_config=None,
                    timeout_worker_healthcheck=WORKER_START_GRACE)


def _migrate(settings: Settings) -> int:
    try:
        run_migrations(settings.database.url)
    except ApplicationError as failure:
        print(f"memagent: migration failed: {failure.message}", file=sys.stderr)
        return 1
    print("memagent: database is up to date")
    return 0


T = TypeVar("T")


def _with_database(settings: Settings, work: Callable[[Container], Awaitable[T]]) -> T:
    """Run `work` against the configured database (SQLite gets its schema; PostgreSQL must be migrated)."""

    async def run() -> T:
        container = build_container(settings)
        try:
            await container.database().start()
            return await work(container)
        finally:
            await container.database().dispose()

    return asyncio.run(run())


def _keys(settings: Settings, args: argparse.Namespace) -> int:
    try:
        if args.keys_command == "create":
            created = _with_database(settings, lambda c: _create_key(c, args, settings.auth.require_keys))
            key = created.key
            # The key goes to stdout once, for the operator to hand on; only its hash is stored.
            print(f"key    {created.raw}\nid     {key.id}\nowner  {key.owner}\nname   {key.name}")
            if key.agent_id is not None:
                print(f"agent  {key.agent_id}")
            print("memagent: keep the key now: only its hash is stored, it cannot be shown again",
                  file=sys.stderr)
        elif args.keys_command == "list":
            for key in _with_database(settings, lambda c: _list_keys(c, args)):
                revoked = f"revoked {key.revoked_at.isoformat()}" if key.revoked_at else "active"
                print(f"{key.id}\t{key.owner}\t{key.name}\t{key.created_at.isoformat()}\t{revoked}"
                      f"\t{key.agent_id or '-'}")
        else:
            key = _with_database(settings, lambda c: c.revoke_api_key()(ApiKeyId(args.id)))
            print(f"memagent: revoked key {key.id} ({key.name!r} of owner {key.owner})")
    except ApplicationError as failure:
        print(f"memagent: keys {args.keys_command}: {failure.message}", file=sys.stderr)
        return 1
    return 0


async def _create_key(container: Container, args: argparse.Namespace, require_keys: bool) -> CreatedKey:
    if args.agent is None:
        # In single-user mode every keyless request is `local`: a key for a client that insists on
        # sending one must reach that same history, not a new, empty account.
        owner = args.owner if args.owner is not None or require_keys else LOCAL_OWNER
        return await container.create_api_key()(args.name, owner)
    # An agent key belongs to the agent's owner: the operator names the agent, not the account.
    owner = OwnerId(args.owner) if args.owner is not None else None
    return await container.create_agent_key()(args.name, AppId(args.agent), owner)


async def _list_keys(container: Container, args: argparse.Namespace) -> list[ApiKey]:
    owner = OwnerId(args.owner) if args.owner else None
    if args.agent is None:
        return await container.list_api_keys()(owner)
    return await container.list_agent_keys()(AppId(args.agent), owner)


def _mcp(settings: Settings, owner: str | None) -> int:
    """stdout carries the protocol: everything else, logs included, goes to stderr."""
    from domain.accounts.keys import check_owner
    from domain.errors import DomainError
    from interfaces.mcp.server import serve_stdio

    try:
        account = check_owner(owner) if owner is not None else LOCAL_OWNER
    except DomainError as invalid:
        print(f"memagent: mcp: {invalid}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve_stdio(build_container(settings), settings, account))
    except ApplicationError as failure:
        print(f"memagent: cannot start: {failure.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "chat":  # a client of a running server: none of the server's settings or logging
        return run_chat(args)
    # Their output is meant to be read, or parsed, by a person.
    quiet = args.command in ("keys", "agents", "workflows", "prune")
    level = logging.WARNING if quiet else logging.INFO
    logging.basicConfig(level=level, format=TEXT_FORMAT)  # until the settings say the format and the secrets
    try:
        settings = Settings()
    except (ValidationError, SettingsError) as invalid:
        print(f"memagent: cannot start: {invalid_settings_line(invalid)}", file=sys.stderr)
        return 1
    configure_logging(settings, level)
    problem = settings_problem(settings)
    if problem is not None:
        print(f"memagent: cannot start: {problem}", file=sys.stderr)
        return 1
    if args.command == "serve":
        return _serve(settings, args.host, args.port, args.workers)
    if args.command == "keys":
        return _keys(settings, args)
    if args.command == "mcp":
        return _mcp(settings, args.owner)
    if args.command == "agents":
        return run_agents_command(args, lambda work: _with_database(settings, work))
    if args.command == "workflows":
        return run_workflows_command(args, lambda work: _with_database(settings, work))
    if args.command == "prune":
        return run_prune(args, settings)
    if args.command == "worker":
        return run_worker(settings)
    return _migrate(settings)


if __name__ == "__main__":
    sys.exit(main())
