"""`memagent agents list | export ID | import FILE [--publish]`: agents kept in git, deployed from a pipeline.

An export is the agent's name, description and draft config as JSON. An import of a file whose
`id` names one of the owner's agents saves the file's config as that agent's draft (and publishes
it with `--publish`); any other file creates the agent, under the file's id when it has one.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from application.errors import ApplicationError, NotFound
from domain.agents.config_codec import config_to_dict
from domain.ids import AppId, OwnerId
from interfaces.cli.exported_files import read_exported

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable

    from interfaces.wiring.container import Container

    RunOnDatabase = Callable[[Callable[[Container], Awaitable[Any]]], Any]


def add_agents_commands(commands: Any) -> None:
    agents = commands.add_parser("agents", help="agents: list, export, import").add_subparsers(
        dest="agents_command", required=True
    )
    for name, help_text in (("list", "list the owner's agents (and the default agent)"),
                            ("export", "an agent's name, description and draft config as JSON on stdout"),
                            ("import", "create an agent from a JSON file, or save it as the draft of its `id`")):
        command = agents.add_parser(name, help=help_text)
        command.add_argument("--owner", default="local", help="the account (default: the single local owner)")
        if name == "export":
            command.add_argument("id", help="the agent's id")
        if name == "import":
            command.add_argument("file", help="a file as `memagent agents export` writes it")
            command.add_argument("--publish", action="store_true", help="publish it as the next version too")


def run_agents_command(args: argparse.Namespace, on_database: RunOnDatabase) -> int:
    owner = OwnerId(args.owner)
    try:
        if args.agents_command == "list":
            for agent in on_database(lambda c: c.agents.list_agents()(owner)):
                active = agent.active_version or "-"
                print(f"{agent.id}\t{agent.name}\t{agent.status.value}\tversion {active}\t{agent.owner}")
        elif args.agents_command == "export":
            agent = on_database(lambda c: c.agents.get_agent()(AppId(args.id), owner))
            exported = {"id": agent.id, "name": agent.name, "description": agent.description,
                        "config": config_to_dict(agent.draft.config)}
            print(json.dumps(exported, ensure_ascii=False, indent=2))
        else:
            print(on_database(lambda c: _import(c, owner, read_exported(args.file, "agent"), args.publish)))
    except ApplicationError as failure:
        print(f"memagent: agents {args.agents_command}: {failure.message}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as unreadable:
        print(f"memagent: agents import: {args.file}: {unreadable}", file=sys.stderr)
        return 1
    return 0


async def _import(container: Container, owner: OwnerId, data: dict[str, Any], publish: bool) -> str:
    agents, agent_id = container.agents, data.get("id")
    try:
        current = await agents.get_agent()(AppId(str(agent_id)), owner) if agent_id else None
    except NotFound:
        current = None
    if current is None:
        made = await agents.create_agent()(owner, data["name"], data.get("description", ""), data.get("config"),
                                           agent_id=str(agent_id) if agent_id else None)
        agent_id, revision = made.id, made.draft.revision
    else:
        saved = await agents.save_draft()(current.id, owner, current.draft.revision, data.get("config") or {})
        agent_id, revision = saved.id, saved.draft.revision
    if publish:
        version = await agents.publish_agent()(AppId(str(agent_id)), owner, "Imported with memagent agents import.")
        return f"{agent_id}\tdraft revision {revision}\tpublished version {version.version}"
    return f"{agent_id}\tdraft revision {revision}"
