"""`memagent workflows list | export ID | import FILE [--publish]`: workflows kept in git, deployed from a pipeline.

An export is the workflow's id, name, description and draft graph as JSON. An import of a file whose
`id` names one of the owner's workflows saves the file's graph as that workflow's draft (and
publishes it with `--publish`); any other file creates the workflow, under the file's id when it has one.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from application.errors import ApplicationError, NotFound
from domain.ids import OwnerId
from domain.workflows.workflow import WorkflowId
from interfaces.cli.exported_files import read_exported

if TYPE_CHECKING:
    import argparse
    from collections.abc import Awaitable, Callable

    from interfaces.wiring.container import Container

    RunOnDatabase = Callable[[Callable[[Container], Awaitable[Any]]], Any]


def add_workflows_commands(commands: Any) -> None:
    workflows = commands.add_parser("workflows", help="workflows: list, export, import").add_subparsers(
        dest="workflows_command", required=True
    )
    for name, help_text in (("list", "list the owner's workflows"),
                            ("export", "a workflow's name, description and draft graph as JSON on stdout"),
                            ("import", "create a workflow from a JSON file, or save it as the draft of its `id`")):
        command = workflows.add_parser(name, help=help_text)
        command.add_argument("--owner", default="local", help="the account (default: the single local owner)")
        if name == "export":
            command.add_argument("id", help="the workflow's id")
        if name == "import":
            command.add_argument("file", help="a file as `memagent workflows export` writes it")
            command.add_argument("--publish", action="store_true", help="publish it as the next version too")


def run_workflows_command(args: argparse.Namespace, on_database: RunOnDatabase) -> int:
    owner = OwnerId(args.owner)
    try:
        if args.workflows_command == "list":
            for workflow in on_database(lambda c: c.workflows.list_workflows()(owner)):
                state = "archived" if workflow.archived else "active"
                print(f"{workflow.id}\t{workflow.name}\t{state}\tversion {workflow.latest_version or '-'}")
        elif args.workflows_command == "export":
            workflow = on_database(lambda c: c.workflows.get_workflow()(WorkflowId(args.id), owner))
            exported = {"id": workflow.id, "name": workflow.name, "description": workflow.description,
                        "graph": workflow.graph}
            print(json.dumps(exported, ensure_ascii=False, indent=2))
        else:
            print(on_database(lambda c: _import(c, owner, read_exported(args.file, "workflow"), args.publish)))
    except ApplicationError as failure:
        print(f"memagent: workflows {args.workflows_command}: {failure.message}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as unreadable:
        print(f"memagent: workflows import: {args.file}: {unreadable}", file=sys.stderr)
        return 1
    return 0


async def _import(container: Container, owner: OwnerId, data: dict[str, Any], publish: bool) -> str:
    workflows, workflow_id = container.workflows, data.get("id")
    try:
        current = await workflows.get_workflow()(WorkflowId(str(workflow_id)), owner) if workflow_id else None
    except NotFound:
        current = None
    if current is None:
        made = await workflows.create_workflow()(owner, data["name"], data.get("description", ""), data.get("graph"),
                                                 workflow_id=str(workflow_id) if workflow_id else None)
        workflow_id, revision = made.id, made.revision
    else:
        saved = await workflows.save_draft()(current.id, owner, current.revision, data.get("graph"))
        workflow_id, revision = saved.id, saved.revision
    if publish:
        note = "Imported with memagent workflows import."
        version = await workflows.publish_workflow()(WorkflowId(str(workflow_id)), owner, note)
        return f"{workflow_id}\tdraft revision {revision}\tpublished version {version.number}"
    return f"{workflow_id}\tdraft revision {revision}"
