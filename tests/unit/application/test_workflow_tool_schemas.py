"""StoredWorkflowTools.specs: a pinned version's tool schema is read from the store once, since a
version never changes, while the workflow is read every turn (an archived one is no tool); a version
not there yet is looked for again, another owner finds nothing, and only the most recently used
schemas are kept."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from application.workflows.graph_check import GraphCheck
from application.workflows.workflow_tool import StoredWorkflowTools
from domain.agents.config import WorkflowRef
from domain.ids import OwnerId
from domain.tools.calls import ToolSpec
from domain.workflows.workflow import Workflow, WorkflowId
from tests.fake_workflow_store import FakeWorkflowStore
from tests.fake_workflows import FakeCodeSandbox, FakeTemplates
from tests.fakes import FakeChatModels, FakeKnowledgeBase, FakeToolBox
from tests.unit.application.workflow_engine import ALICE, Engine
from tests.workflow_graphs import SIMPLE, simple

if TYPE_CHECKING:
    from domain.workflows.workflow import WorkflowVersion

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


class CountingWorkflowStore(FakeWorkflowStore):
    """Counts the versions read, as (workflow id, number)."""

    def __init__(self) -> None:
        super().__init__()
        self.version_reads: list[tuple[str, int]] = []

    async def version(self, workflow_id: WorkflowId, owner: OwnerId, number: int) -> WorkflowVersion | None:
        self.version_reads.append((workflow_id, number))
        return await super().version(workflow_id, owner, number)


async def created(store: FakeWorkflowStore, workflow_id: str, versions: int = 1) -> None:
    workflow = Workflow(WorkflowId(workflow_id), ALICE, workflow_id, "Greets.", SIMPLE, 1, 0, False, T0, T0)
    await store.create(workflow)
    await publish(store, workflow_id, versions)


async def publish(store: FakeWorkflowStore, workflow_id: str, versions: int = 1) -> None:
    for _ in range(versions):
        current = await store.get(WorkflowId(workflow_id), ALICE)
        assert current is not None
        # Each version's graph differs from the last, as publishing asks.
        graph = simple(edges=SIMPLE["edges"] * (current.latest_version + 1))
        changed = current.saved_draft(current.revision, graph, T0)
        last = store.published.get((current.id, current.latest_version))  # not counted as a turn's read
        workflow, version = changed.published("", SCHEMA, last, T0)
        assert await store.publish(workflow, version)


def tools(store: FakeWorkflowStore, kept: int = 8) -> StoredWorkflowTools:
    check = GraphCheck(FakeTemplates(), FakeCodeSandbox(), FakeToolBox({}), FakeKnowledgeBase(), FakeChatModels())
    return StoredWorkflowTools(store, check, Engine().run_workflow, kept=kept)


async def test_a_pinned_versions_schema_is_read_once_and_gives_the_same_tool_every_turn() -> None:
    store = CountingWorkflowStore()
    await created(store, "greet")
    offered = tools(store)

    first = await offered.specs([WorkflowRef("greet", 1)], ALICE)
    second = await offered.specs([WorkflowRef("greet", 1)], ALICE)

    assert first == second == {"greet": ToolSpec("greet", "Greets.", SCHEMA)}
    assert store.version_reads == [("greet", 1)]


async def test_a_turn_that_changes_its_tool_schema_leaves_the_next_turns_as_published() -> None:
    store = CountingWorkflowStore()
    await created(store, "greet")
    offered = tools(store)
    published = copy.deepcopy(SCHEMA)
    first = await offered.specs([WorkflowRef("greet", 1)], ALICE)
    first["greet"].parameters["properties"]["city"]["type"] = "number"  # as a model adapter might

    assert (await offered.specs([WorkflowRef("greet", 1)], ALICE))["greet"].parameters == published


async def test_an_archived_workflow_is_no_tool_once_its_schema_is_kept() -> None:
    store = CountingWorkflowStore()
    await created(store, "greet")
    offered = tools(store)
    await offered.specs([WorkflowRef("greet", 1)], ALICE)
    current = await store.get(WorkflowId("greet"), ALICE)
    assert current is not None
    assert await store.save(current.archived_at(T0), current.revision)

    assert await offered.specs([WorkflowRef("greet", 1)], ALICE) == {}


async def test_another_owner_finds_no_tool_in_the_kept_schemas() -> None:
    store = CountingWorkflowStore()
    await created(store, "greet")
    offered = tools(store)
    await offered.specs([WorkflowRef("greet", 1)], ALICE)

    assert await offered.specs([WorkflowRef("greet", 1)], OwnerId("bob")) == {}


async def test_a_version_not_there_yet_is_looked_for_again_and_offered_once_published() -> None:
    store = CountingWorkflowStore()
    await created(store, "greet")
    offered = tools(store)

    assert await offered.specs([WorkflowRef("greet", 2)], ALICE) == {}
    await publish(store, "greet")
    assert set(await offered.specs([WorkflowRef("greet", 2)], ALICE)) == {"greet"}
    assert store.version_reads == [("greet", 2), ("greet", 2)]


async def test_only_the_most_recently_used_schemas_are_kept() -> None:
    store = CountingWorkflowStore()
    await created(store, "greet", versions=3)
    offered = tools(store, kept=2)
    one, two, three = (WorkflowRef("greet", n) for n in (1, 2, 3))

    await offered.specs([one, two], ALICE)
    await offered.specs([one], ALICE)  # `one` is the most recently used now
    await offered.specs([three], ALICE)  # …so `two` makes room
    await offered.specs([one, two], ALICE)

    assert store.version_reads == [("greet", 1), ("greet", 2), ("greet", 3), ("greet", 2)]
