"""`memagent` command line: serve, migrate."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from application.errors import ApplicationError
from infrastructure.models.scripted_model import HOW_TO_CONFIGURE
from infrastructure.persistence.migrate import run_migrations
from interfaces.app import build_container, create_app
from interfaces.lifecycle import start_backends, stop_backends
from interfaces.settings import Settings


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memagent", description="A backend for memory-powered chat agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the HTTP API with uvicorn")
    serve.add_argument("--host", help="address to bind (default from MEMAGENT_SERVER__HOST, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default from MEMAGENT_SERVER__PORT, 8000)")
    commands.add_parser("migrate", help="create or upgrade the database schema (Alembic)")
    return parser


async def _preflight(settings: Settings) -> None:
    container = build_container(settings)
    try:
        await start_backends(container, settings)
    finally:
        await stop_backends(container)


def _serve(settings: Settings, host: str | None, port: int | None) -> int:
    import uvicorn

    try:
        asyncio.run(_preflight(settings))
    except ApplicationError as failure:
        print(f"memagent: cannot start: {failure.message}", file=sys.stderr)
        return 1
    if settings.llm.provider == "scripted":
        print(f"memagent: {HOW_TO_CONFIGURE}", file=sys.stderr)
    uvicorn.run(
        create_app(settings),
        host=host or settings.server.host,
        port=port or settings.server.port,
        log_level=settings.server.log_level,
    )
    return 0


def _migrate(settings: Settings) -> int:
    try:
        run_migrations(settings.database.url)
    except ApplicationError as failure:
        print(f"memagent: migration failed: {failure.message}", file=sys.stderr)
        return 1
    print("memagent: database is up to date")
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args = _parser().parse_args(argv)
    settings = Settings()
    if args.command == "serve":
        return _serve(settings, args.host, args.port)
    return _migrate(settings)


if __name__ == "__main__":
    sys.exit(main())
