"""The workflows, as a container of their own inside the main one (`Container.workflows`): workflows
as data (drafts, versions), and their runs: the DAG scheduler with a worker per node type, the three
sandboxes a workflow's own text runs in (templates, code, outbound HTTP), the run record, and a
streamed run as a task (its event log, stop flag and leases are the chat turns' own backends)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dependency_injector import containers, providers

from application.chat_turn.turn_watch import TurnWatch, WatchTimes
from application.ports.code_sandbox import CodeLimits
from application.ports.model_metrics import ModelPurpose
from application.tasks.find_task import FindTask
from application.tasks.follow_task import FollowTask, FollowTimes
from application.workflows.archive_workflow import ArchiveWorkflow
from application.workflows.create_workflow import CreateWorkflow
from application.workflows.follow_run import FollowRun
from application.workflows.get_workflow import GetWorkflow
from application.workflows.get_workflow_run import GetWorkflowRun
from application.workflows.get_workflow_version import GetWorkflowVersion
from application.workflows.graph_check import GraphCheck
from application.workflows.launch_run import LaunchRun
from application.workflows.list_workflow_versions import ListWorkflowVersions
from application.workflows.list_workflows import ListWorkflows
from application.workflows.logged_run import LoggedRun
from application.workflows.nodes.basic import EndWork, IfElseWork, TemplateWork
from application.workflows.nodes.code import CodeWork
from application.workflows.nodes.http_request import HttpRequestWork
from application.workflows.nodes.iteration import IterationWork
from application.workflows.nodes.llm import LlmWork
from application.workflows.nodes.tool import DatasetSearch, ToolWork
from application.workflows.prepare_run import PrepareRun
from application.workflows.publish_workflow import PublishWorkflow
from application.workflows.published_workflows import PublishedWorkflows
from application.workflows.run_workflow import RunWorkflow
from application.workflows.save_workflow_draft import SaveWorkflowDraft
from application.workflows.scheduler import Scheduler
from application.workflows.stop_run import StopRun
from application.workflows.workflow_tool import StoredWorkflowTools
from domain.workflows.graph import NodeType
from infrastructure.metrics.metered_chat_model import MeteredChatModels
from infrastructure.persistence.sqlalchemy_workflow_run_store import SqlAlchemyWorkflowRunStore
from infrastructure.persistence.sqlalchemy_workflow_store import SqlAlchemyWorkflowStore
from infrastructure.tools.jsonschema_check import JsonSchemaCheck
from infrastructure.tracing.traced_chat_model import TracedChatModels
from infrastructure.workflows.guarded_http import GuardedHttp
from infrastructure.workflows.jinja_templates import JinjaTemplates
from infrastructure.workflows.subprocess_code_sandbox import SubprocessCodeSandbox

if TYPE_CHECKING:
    from application.model_calls.record_model_calls import RecordModelCalls
    from application.ports.chat_models import ChatModels
    from application.ports.embedder import Embedder
    from application.ports.event_log import EventLog
    from application.ports.knowledge_base import KnowledgeBase
    from application.ports.message_store import MessageStore
    from application.ports.model_metrics import ModelMetrics
    from application.ports.runtime import Clock, IdGenerator, TaskSpawner, Tokenizer
    from application.ports.task_control import TaskControl
    from application.ports.task_presence import TaskPresence
    from application.ports.tools import ToolBox
    from application.ports.tracing import Tracer
    from infrastructure.persistence.database import Database


def code_limits(workflows: dict[str, float]) -> CodeLimits:
    return CodeLimits(
        cpu_seconds=float(workflows["code_cpu_seconds"]), memory_bytes=int(workflows["code_memory_mb"]) * 2**20,
        wall_seconds=float(workflows["code_wall_seconds"]), output_bytes=int(workflows["code_output_bytes"]),
    )


class WorkflowsContainer(containers.DeclarativeContainer):
    config = providers.Configuration()
    database: providers.Dependency[Database] = providers.Dependency()
    toolbox: providers.Dependency[ToolBox] = providers.Dependency()
    knowledge: providers.Dependency[KnowledgeBase] = providers.Dependency()
    models: providers.Dependency[ChatModels] = providers.Dependency()
    clock: providers.Dependency[Clock] = providers.Dependency()
    ids: providers.Dependency[IdGenerator] = providers.Dependency()
    embedder: providers.Dependency[Embedder] = providers.Dependency()
    metrics: providers.Dependency[ModelMetrics] = providers.Dependency()
    tracer: providers.Dependency[Tracer] = providers.Dependency()
    tokenizer: providers.Dependency[Tokenizer] = providers.Dependency()
    recorder: providers.Dependency[RecordModelCalls] = providers.Dependency()
    # A streamed run is a task on the chat turns' backends (MEMAGENT_EVENTS__BACKEND).
    events: providers.Dependency[EventLog] = providers.Dependency()
    tasks: providers.Dependency[TaskControl] = providers.Dependency()
    presence: providers.Dependency[TaskPresence] = providers.Dependency()
    spawner: providers.Dependency[TaskSpawner] = providers.Dependency()
    messages: providers.Dependency[MessageStore] = providers.Dependency()

    store = providers.Singleton(SqlAlchemyWorkflowStore, database=database)
    templates = providers.Singleton(
        JinjaTemplates, max_output_chars=config.workflows.template_max_chars,
        max_steps=config.workflows.template_max_steps,
    )
    code_sandbox = providers.Singleton(SubprocessCodeSandbox, max_processes=config.workflows.code_max_processes)
    check = providers.Singleton(
        GraphCheck, templates=templates, sandbox=code_sandbox, toolbox=toolbox, knowledge=knowledge, models=models
    )

    create_workflow = providers.Singleton(CreateWorkflow, store=store, check=check, clock=clock, ids=ids)
    list_workflows = providers.Singleton(ListWorkflows, store=store)
    get_workflow = providers.Singleton(GetWorkflow, store=store)
    save_draft = providers.Singleton(SaveWorkflowDraft, store=store, check=check, clock=clock)
    publish_workflow = providers.Singleton(PublishWorkflow, store=store, check=check, clock=clock)
    list_versions = providers.Singleton(ListWorkflowVersions, store=store)
    get_version = providers.Singleton(GetWorkflowVersion, store=store)
    archive_workflow = providers.Singleton(ArchiveWorkflow, store=store, clock=clock)

    # Running: llm nodes' calls count in the metrics, the ledger (purpose `workflow`) and the traces.
    models_for_runs = providers.Singleton(
        TracedChatModels, tracer=tracer, tokenizer=tokenizer, purpose=ModelPurpose.WORKFLOW,
        models=providers.Singleton(
            MeteredChatModels, models=models, metrics=metrics, tokenizer=tokenizer, recorder=recorder,
            purpose=ModelPurpose.WORKFLOW,
        ),
    )
    outbound_http = providers.Singleton(
        GuardedHttp, allow_private_networks=config.workflows.allow_private_networks,
        max_body_bytes=config.workflows.http_max_body_bytes, max_timeout=config.workflows.http_max_timeout,
    )
    work = providers.Dict({
        NodeType.LLM: providers.Singleton(
            LlmWork, models=models_for_runs, templates=templates, schemas=providers.Singleton(JsonSchemaCheck),
            clock=clock, ids=ids,
        ),
        NodeType.TOOL: providers.Singleton(
            ToolWork, tools=toolbox, templates=templates, ids=ids,
            datasets=providers.Singleton(DatasetSearch, knowledge=knowledge, embedder=embedder),
        ),
        NodeType.TEMPLATE: providers.Singleton(TemplateWork, templates=templates),
        NodeType.IF_ELSE: providers.Singleton(IfElseWork, templates=templates),
        NodeType.END: providers.Singleton(EndWork, templates=templates),
        NodeType.HTTP_REQUEST: providers.Singleton(HttpRequestWork, http=outbound_http, templates=templates),
        NodeType.CODE: providers.Singleton(
            CodeWork, sandbox=code_sandbox, templates=templates,
            limits=providers.Singleton(code_limits, workflows=config.workflows),
        ),
        NodeType.ITERATION: providers.Singleton(
            IterationWork, templates=templates, parallelism=config.workflows.iteration_parallelism
        ),
    })
    runs = providers.Singleton(SqlAlchemyWorkflowRunStore, database=database)
    run_workflow = providers.Singleton(
        RunWorkflow, scheduler=providers.Singleton(Scheduler, work=work, clock=clock), runs=runs, clock=clock,
        ids=ids, timeout=config.workflows.timeout, max_depth=config.workflows.max_depth,
    )
    prepare_run = providers.Singleton(PrepareRun, store=store, check=check)
    get_run = providers.Singleton(GetWorkflowRun, runs=runs)
    # Published versions as tools: an agent's pinned ones in its turns, the account's latest over MCP.
    # One instance, so that both share its kept schemas.
    tools = providers.Singleton(StoredWorkflowTools, store=store, check=check, run_workflow=run_workflow)
    published_tools = providers.Singleton(
        PublishedWorkflows, store=store, tools=tools, prepare=prepare_run, run=run_workflow
    )
    # A streamed run: spawned with its watch (a stop from any worker, no client for the run's grace),
    # its events in a log of its own, followed as a turn's task is.
    launch_run = providers.Singleton(
        LaunchRun, tasks=tasks, events=events, spawner=spawner, ids=ids, task_ttl=config.turn.task_ttl,
        logged=providers.Singleton(
            LoggedRun, run=run_workflow, events=events, retention=config.events.retention,
            new_watch=providers.Factory(
                TurnWatch, tasks=tasks, presence=presence, clock=clock, times=providers.Singleton(
                    WatchTimes, stop_check_interval=config.turn.stop_check_interval,
                    client_grace=config.workflows.client_grace, worker_lease=config.turn.worker_lease,
                    task_ttl=config.turn.task_ttl,
                ),
            ).provider,
        ),
    )
    # A task's follower with the run's client grace. Its `owned` is a turn's and is never asked:
    # who may follow a run is the run record's to say (FollowRun).
    follow_run = providers.Singleton(
        FollowRun, runs=runs, tasks=tasks, events=events, follow=providers.Singleton(
            FollowTask, tasks=tasks, events=events, presence=presence, store=messages, clock=clock,
            find=providers.Singleton(FindTask, tasks=tasks, messages=messages, task_ttl=config.turn.task_ttl),
            times=providers.Singleton(
                FollowTimes, keepalive=config.events.keepalive, client_grace=config.workflows.client_grace
            ),
        ),
    )
    stop_run = providers.Singleton(StopRun, runs=runs, tasks=tasks)
