"""A turn the review refused (input) or replaced (output) says so on its message, and its exchange
stays out of the window, the live one and the one rebuilt from the record alike."""

from __future__ import annotations

from application.ports.chat_model import ModelChunk
from domain.agents.config import AgentConfig
from domain.agents.review import KeywordReview
from domain.conversations.conversation import ReviewStage
from domain.conversations.messages import Usage
from domain.ids import AppId
from tests.fakes import ScriptedModel
from tests.unit.application.harness import Harness

GUARDED = AgentConfig(AppId("default"), input_review=KeywordReview(("forbidden",), "[refused]"),
                      output_review=KeywordReview(("secret",), "[refused]"))
HELLO = [ModelChunk(text="Hel"), ModelChunk(text="lo"), ModelChunk(usage=Usage(10, 2, 0.5))]
SECRET = [ModelChunk(text="the secret is 42")]  # the output review replaces it


def texts(h: Harness, call: int) -> list[str]:
    """The history and query of the model's `call`-th request (the system message left out)."""
    return [m.text for m in h.model.calls[call][0][1:]]


async def test_the_message_records_which_review_blocked_its_exchange() -> None:
    h = Harness(ScriptedModel([HELLO, SECRET]), GUARDED)
    passed = await h.turn("hi")
    refused = await h.turn("the forbidden recipe?", passed.conversation_id)
    replaced = await h.turn("tell me", passed.conversation_id)
    blocked = [h.store.messages[t.message_id].blocked_by for t in (passed, refused, replaced)]
    assert blocked == [None, ReviewStage.INPUT, ReviewStage.OUTPUT]


async def test_a_replaced_exchange_stays_out_of_the_live_window() -> None:
    h = Harness(ScriptedModel([HELLO, SECRET, HELLO]), GUARDED)
    first = await h.turn("hi")
    await h.turn("tell me", first.conversation_id)
    await h.turn("and now?", first.conversation_id)
    assert texts(h, 2) == ["hi", "Hello", "and now?"]
    assert len(await h.memory.get_window(first.conversation_id) or []) == 4  # hi and "and now?" only


async def test_refused_and_replaced_exchanges_stay_out_of_the_window_rebuilt_from_the_record() -> None:
    h = Harness(ScriptedModel([HELLO, SECRET, HELLO]), GUARDED)
    first = await h.turn("hi")
    await h.turn("the forbidden recipe?", first.conversation_id)
    await h.turn("tell me", first.conversation_id)
    h.memory.evict_window(first.conversation_id)
    await h.turn("and now?", first.conversation_id)
    assert texts(h, 2) == ["hi", "Hello", "and now?"]
