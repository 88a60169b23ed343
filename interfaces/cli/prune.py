"""`memagent prune [--dry-run]`: remove now what the retention settings no longer keep, as the
scheduled prune does (one prune at a time: while another holds the lock this one removes nothing)."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

from application.errors import ApplicationError
from interfaces.lifecycle import uses_redis
from interfaces.wiring.build import build_container

if TYPE_CHECKING:
    import argparse

    from application.retention.prune import Prune
    from domain.retention import PruneReport
    from interfaces.settings.settings import Settings


def add_prune_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    prune = commands.add_parser(
        "prune", help="remove what the retention settings (MEMAGENT_RETENTION__*) no longer keep"
    )
    prune.add_argument("--dry-run", action="store_true", help="print what would be removed, per kind; remove nothing")


def run_prune(args: argparse.Namespace, settings: Settings) -> int:
    try:
        report = asyncio.run(_prune(settings, dry_run=args.dry_run))
    except ApplicationError as failure:
        print(f"memagent: prune: {failure.message}", file=sys.stderr)
        return 1
    if report.skipped:
        print("memagent: prune: another prune is running; this one removed nothing", file=sys.stderr)
        return 0
    print("would remove" if report.dry_run else "removed")
    for kind, rows in report.counts.as_dict().items():
        print(f"{kind}\t{rows}")
    # Event logs expire by themselves; a removed conversation's go with it.
    print(f"event_logs\texpire {settings.events.retention:g} s after their turn (MEMAGENT_EVENTS__RETENTION)")
    if not report.dry_run:
        print(f"batches\t{len(report.batches)}")
    return 0


async def _prune(settings: Settings, *, dry_run: bool) -> PruneReport:
    container = build_container(settings)
    try:
        await container.database().start()
        if uses_redis(settings):
            await container.redis().ping()
        prune: Prune = container.retention.prune()
        return await prune(dry_run=dry_run)
    finally:
        await container.redis().close()
        await container.database().dispose()
