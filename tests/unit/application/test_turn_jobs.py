"""A finished turn's background work as jobs (application/chat_turn/queued_after_turn.py,
application/memory/queued_upkeep.py, application/chat_turn/turn_jobs.py): queued by the API
process, run from the record alone by whoever takes the job, idempotent when run twice, and never
failing a turn when the queue does."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from application.errors import InvalidInput, StoreUnavailable
from application.ports.chat_model import ModelChunk
from domain.agents.config import AgentConfig
from domain.ids import AppId, ConversationId
from domain.jobs import Job, JobKind
from tests.fakes import ScriptedModel
from tests.unit.application.harness import OWNER, Harness

if TYPE_CHECKING:
    from application.chat_turn.turn import TurnHandle
    from domain.conversations.conversation import Message
    from domain.ids import MessageId, OwnerId

ANSWER = [ModelChunk(text="Noted.")]
QUERY = "My name is Ada and I live in Paris"
CONFIG = AgentConfig(AppId("default"), suggested_questions_after_answer=True)


class Recorded:
    """A job handler that keeps the jobs it was given."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    async def __call__(self, job: Job, last_try: bool) -> None:
        self.jobs.append(job)


def queued(**kwargs: object) -> Harness:
    return Harness(ScriptedModel([ANSWER] * 4), config=CONFIG, memory_tiers=True, queued_jobs=True,
                   title_wait=30.0, **kwargs)  # type: ignore[arg-type]


def job_of(kind: JobKind, handle: TurnHandle, turns: int = 1) -> Job:
    return Job(kind, OWNER, handle.conversation_id, handle.message_id, turns)


async def test_a_finished_turn_queues_its_upkeep_title_and_follow_ups_as_jobs_naming_it() -> None:
    handler = Recorded()
    h = queued(job_handler=handler)
    handle = await h.turn(QUERY)
    assert sorted(handler.jobs, key=lambda j: j.kind) == sorted(
        [job_of(JobKind.FOLLOW_UPS, handle), job_of(JobKind.TITLE, handle), job_of(JobKind.UPKEEP, handle)],
        key=lambda j: j.kind,
    )
    assert h.summarizer.updates == []  # nothing of it ran in the API process


async def test_the_jobs_run_from_the_record_make_the_summary_the_title_and_the_questions() -> None:
    h = queued()
    handle = await h.turn(QUERY)
    conversation = h.store.conversations[handle.conversation_id]
    assert conversation.summary == QUERY
    assert conversation.title == "My name is Ada and I"
    end = (await h.thoughts(handle.task_id))[-1]
    assert end.conversation_title == conversation.title  # the job ended within the wait
    assert h.store.messages[handle.message_id].follow_ups


async def test_the_jobs_keep_the_memory_on_the_memory_model_and_title_and_ask_on_the_agent_s_model() -> None:
    config = AgentConfig(AppId("default"), model="second", memory_model="cheap", suggested_questions_after_answer=True)
    h = Harness(ScriptedModel([ANSWER]), config=config, memory_tiers=True, queued_jobs=True, title_wait=30.0)
    await h.turn(QUERY)
    assert sorted(set(h.profiles_asked)) == [("digest", "cheap"), ("follow_ups", "second"), ("title", "second")]


async def test_a_job_run_twice_changes_nothing_the_first_run_did() -> None:
    h = queued()
    handle = await h.turn(QUERY)
    conversation_id = ConversationId(handle.conversation_id)
    before = (h.store.conversations[conversation_id], await h.memory.entity_sheet(conversation_id),
              h.store.messages[handle.message_id].follow_ups, len(h.summarizer.updates))
    for kind in (JobKind.UPKEEP, JobKind.TITLE, JobKind.FOLLOW_UPS):
        await h.run_job(job_of(kind, handle))
    after = (h.store.conversations[conversation_id], await h.memory.entity_sheet(conversation_id),
             h.store.messages[handle.message_id].follow_ups, len(h.summarizer.updates))
    assert after == before


async def test_a_job_of_a_message_gone_meanwhile_does_nothing() -> None:
    h = queued(job_handler=Recorded())
    handle = await h.turn(QUERY)
    del h.store.messages[handle.message_id]
    await h.run_job(job_of(JobKind.UPKEEP, handle))
    await h.run_job(job_of(JobKind.TITLE, handle))
    assert h.summarizer.updates == []
    assert h.store.conversations[handle.conversation_id].title == ""


class Unreadable:
    async def get_message(self, message_id: MessageId, owner: OwnerId) -> Message | None:
        raise StoreUnavailable("The database is unavailable.")


async def test_an_ingestion_given_to_the_turn_jobs_is_refused_before_it_reads_or_writes_anything() -> None:
    h = queued()
    # Any read would raise StoreUnavailable or MemoryUnavailable instead of the refusal.
    h.store.get_message = Unreadable().get_message  # type: ignore[method-assign]
    h.memory.fail = True
    with pytest.raises(InvalidInput, match="'ingest'"):
        await h.run_job(Job.ingest(OWNER, "dataset-1", "document-1"), last_try=True)
    assert (h.store.conversations, h.store.messages, h.summarizer.updates) == ({}, {}, [])


class Unavailable:
    async def enqueue(self, job: Job) -> bool:
        raise StoreUnavailable("The job queue is unavailable.")


async def test_a_queue_that_fails_costs_the_turn_nothing() -> None:
    h = queued()
    h.jobs.enqueue = Unavailable().enqueue  # type: ignore[method-assign]
    handle = await h.turn(QUERY)
    assert (await h.events(handle))[-1] == "agent_end"
    assert h.store.messages[handle.message_id].answer == "Noted."
    assert h.store.conversations[handle.conversation_id].title == ""  # the next turn asks again
    second = await h.turn("And I like tea", handle.conversation_id)
    assert (await h.events(second))[-1] == "agent_end"
