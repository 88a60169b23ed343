"""The PruneStore port in memory: conversations, messages, steps, ledger rows, workflow runs and
their node runs with their times, for the use case's unit tests. The SQL adapter passes the same
behaviour in tests/integration/test_pruning_contract.py and test_pruning_workflow_runs.py."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from application.ports.pruning import DirectRunsBefore, MessageRef, PrunedRuns, PruneStore, RunsCalledIn
from domain.ids import ConversationId, MessageId, TaskId
from domain.retention import PruneCounts

if TYPE_CHECKING:
    from datetime import datetime

    from domain.retention import Cutoffs


@dataclass(frozen=True)
class Row:
    created_at: datetime  # a run's start
    parent: str = ""  # a message's conversation, a step's message, a run's message ("": direct), a node's run
    prompt: str = ""
    task_id: str = ""


@dataclass
class FakePruneStore(PruneStore):
    conversations: dict[str, datetime | None] = field(default_factory=dict)  # id: deleted_at
    messages: dict[str, Row] = field(default_factory=dict)
    steps: dict[str, Row] = field(default_factory=dict)
    model_calls: dict[str, datetime] = field(default_factory=dict)
    workflow_runs: dict[str, Row] = field(default_factory=dict)
    node_runs: dict[str, Row] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)  # ids, in the order they went
    calls: list[tuple[str, int]] = field(default_factory=list)  # (method, rows it touched)

    async def count(self, cutoffs: Cutoffs) -> PruneCounts:
        expired = set(self._expired(cutoffs.deleted_conversations))
        gone = {m for m, row in self.messages.items() if row.parent in expired}

        def older(row: Row, cutoff: datetime | None) -> bool:
            return cutoff is not None and row.created_at < cutoff
        kept_steps = {s: row for s, row in self.steps.items() if row.parent not in gone}
        return PruneCounts(
            deleted_conversations=len(expired), conversation_messages=len(gone),
            conversation_steps=len(self.steps) - len(kept_steps),
            steps=sum(older(row, cutoffs.steps) for row in kept_steps.values()),
            prompt_snapshots=sum(
                bool(row.prompt) and older(row, cutoffs.prompt_snapshots) and not older(row, cutoffs.steps)
                for row in kept_steps.values()
            ) + sum(bool(row.prompt) and older(row, cutoffs.prompt_snapshots)
                    for m, row in self.messages.items() if m not in gone),
            model_calls=sum(cutoffs.model_calls is not None and at < cutoffs.model_calls
                            for at in self.model_calls.values()),
            **self._run_counts("conversation_", {r for r, row in self.workflow_runs.items() if row.parent in gone}),
            **self._run_counts("", set(self._runs(DirectRunsBefore(cutoffs.workflow_runs)))
                               if cutoffs.workflow_runs is not None else set()),
        )

    async def expired_conversations(self, deleted_before: datetime, limit: int) -> list[ConversationId]:
        return [ConversationId(c) for c in self._expired(deleted_before)][:limit]

    async def delete_conversation_steps(self, conversation_id: ConversationId, limit: int) -> int:
        theirs = [s for s, row in self.steps.items() if self.messages[row.parent].parent == conversation_id]
        return self._remove(self.steps, theirs[:limit], "delete_conversation_steps")

    async def conversation_messages(self, conversation_id: ConversationId, limit: int) -> list[MessageRef]:
        theirs = [(m, row) for m, row in self.messages.items() if row.parent == conversation_id][:limit]
        return [MessageRef(MessageId(m), TaskId(row.task_id)) for m, row in theirs]

    async def delete_messages(self, message_ids: list[MessageId]) -> int:
        assert not any(row.parent in message_ids for row in self.steps.values()), "a message went before its steps"
        return self._remove(self.messages, [m for m in message_ids if m in self.messages], "delete_messages")

    async def delete_conversation(self, conversation_id: ConversationId, deleted_before: datetime) -> bool:
        if conversation_id not in self._expired(deleted_before):
            return False
        if any(row.parent == conversation_id for row in self.messages.values()):
            return False
        del self.conversations[conversation_id]
        self.removed.append(conversation_id)
        return True

    async def delete_steps(self, before: datetime, limit: int) -> int:
        old = sorted((row.created_at, s) for s, row in self.steps.items() if row.created_at < before)
        return self._remove(self.steps, [s for _, s in old[:limit]], "delete_steps")

    async def empty_prompts(self, before: datetime, limit: int) -> int:
        emptied = 0
        for table in (self.steps, self.messages):
            for key, row in sorted(table.items(), key=lambda item: item[1].created_at):
                if emptied < limit and row.prompt and row.created_at < before:
                    table[key] = replace(row, prompt="")
                    emptied += 1
        self.calls.append(("empty_prompts", emptied))
        return emptied

    async def delete_model_calls(self, before: datetime, limit: int) -> int:
        old = sorted((at, k) for k, at in self.model_calls.items() if at < before)
        return self._remove(self.model_calls, [k for _, k in old[:limit]], "delete_model_calls")

    async def delete_node_runs(self, runs: PrunedRuns, limit: int) -> int:
        order = {run: n for n, run in enumerate(self._runs(runs))}
        theirs = sorted((order[row.parent], n) for n, row in self.node_runs.items() if row.parent in order)
        return self._remove(self.node_runs, [n for _, n in theirs[:limit]], "delete_node_runs")

    async def delete_workflow_runs(self, runs: PrunedRuns, limit: int) -> int:
        with_nodes = {row.parent for row in self.node_runs.values()}
        emptied = [run for run in self._runs(runs) if run not in with_nodes]
        return self._remove(self.workflow_runs, emptied[:limit], "delete_workflow_runs")

    def _runs(self, runs: PrunedRuns) -> list[str]:
        """The runs named, the oldest start first."""
        match runs:
            case RunsCalledIn(conversation_id):
                def chosen(row: Row) -> bool:
                    message = self.messages.get(row.parent)
                    return message is not None and message.parent == conversation_id
            case DirectRunsBefore(before):
                def chosen(row: Row) -> bool:
                    return not row.parent and row.created_at < before
        return [r for _, r in sorted((row.created_at, r) for r, row in self.workflow_runs.items() if chosen(row))]

    def _run_counts(self, prefix: str, runs: set[str]) -> dict[str, int]:
        return {f"{prefix}workflow_runs": len(runs),
                f"{prefix}node_runs": sum(row.parent in runs for row in self.node_runs.values())}

    def _expired(self, before: datetime | None) -> list[str]:
        """Deleted before the cut-off, the oldest delete first."""
        if before is None:
            return []
        return [c for _, c in sorted((at, c) for c, at in self.conversations.items() if at is not None and at < before)]

    def _remove(self, table: dict[str, Any], keys: list[str], method: str) -> int:
        for key in keys:
            del table[key]
            self.removed.append(key)
        self.calls.append((method, len(keys)))
        return len(keys)
