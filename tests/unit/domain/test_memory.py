"""Memory tiers: the short-term window policy, archive entries and entities."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest

from domain.conversations.conversation import Message, MessageStatus
from domain.conversations.messages import Msg, Role, text_msg
from domain.errors import DomainError, MalformedHistory
from domain.ids import ConversationId, MessageId, OwnerId, TaskId
from domain.memory.archive import ArchiveEntry
from domain.memory.entities import Entity
from domain.memory.window import TokenCounter, check_history, history_from_turns, trim_history, turn_pair

if TYPE_CHECKING:
    from collections.abc import Sequence

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


# The short-term window as the design states it, composed from the domain's rules (only tests use it).
def completed_turns(messages: Sequence[Message], dialog_round: int) -> list[Message]:
    """The last `dialog_round` turns that finished normally with an answer, oldest first."""
    if dialog_round < 0:
        raise DomainError("dialog_round cannot be negative")
    done = [m for m in messages if m.is_completed_turn]
    return done[-dialog_round:] if dialog_round else []


def short_term_window(
    messages: Sequence[Message], dialog_round: int, max_tokens: int, count: TokenCounter
) -> list[Msg]:
    """The short-term tier: recent completed turns as pairs, within the token budget."""
    return trim_history(history_from_turns(completed_turns(messages, dialog_round)), max_tokens, count)


def words(text: str) -> int:
    return len(text.split())


def turn(n: int, status: MessageStatus = MessageStatus.NORMAL, answer: str | None = None) -> Message:
    """Turn n: a 2-word query and (by default) a 3-word answer."""
    return Message(
        id=MessageId(f"m{n}"), conversation_id=ConversationId("c"), owner=OwnerId("alice"),
        task_id=TaskId(f"t{n}"), query=f"question {n}", created_at=T0 + timedelta(minutes=n),
        updated_at=T0 + timedelta(minutes=n, seconds=5),
        answer=f"answer number {n}" if answer is None else answer, status=status,
    )


def texts(history: list[Msg]) -> list[str]:
    return [m.text for m in history]


def roles(history: list[Msg]) -> list[Role]:
    return [m.role for m in history]


def msg(role: Role, text: str = "x") -> Msg:
    return text_msg(f"{role.value}-{text}", role, text, T0)


def test_window_keeps_only_turns_that_finished_normally_with_an_answer() -> None:
    messages = [
        turn(1),
        turn(2, MessageStatus.STOP),
        turn(3, MessageStatus.ERROR),
        turn(4, MessageStatus.TIMEOUT),
        turn(5, MessageStatus.RUNNING),
        turn(6, answer=""),
        turn(7),
    ]
    window = short_term_window(messages, dialog_round=10, max_tokens=1000, count=words)
    assert texts(window) == ["question 1", "answer number 1", "question 7", "answer number 7"]


def test_window_keeps_the_last_dialog_round_turns_oldest_first() -> None:
    window = short_term_window([turn(n) for n in range(1, 8)], dialog_round=3, max_tokens=1000, count=words)
    assert texts(window) == [
        "question 5", "answer number 5", "question 6", "answer number 6", "question 7", "answer number 7",
    ]


def test_dialog_round_counts_completed_turns_not_all_turns() -> None:
    messages = [turn(1), turn(2), turn(3, MessageStatus.ERROR), turn(4, MessageStatus.STOP)]
    window = short_term_window(messages, dialog_round=2, max_tokens=1000, count=words)
    assert texts(window) == ["question 1", "answer number 1", "question 2", "answer number 2"]


def test_dialog_round_zero_gives_an_empty_window() -> None:
    assert short_term_window([turn(1), turn(2)], dialog_round=0, max_tokens=1000, count=words) == []
    assert completed_turns([turn(1)], 0) == []


def test_negative_dialog_round_is_rejected() -> None:
    with pytest.raises(DomainError):
        completed_turns([turn(1)], -1)


def test_no_turns_give_an_empty_window() -> None:
    assert short_term_window([], dialog_round=5, max_tokens=1000, count=words) == []


def test_window_is_trimmed_from_the_oldest_pair_to_the_token_budget() -> None:
    # each pair is 2 + 3 = 5 words; 3 pairs = 15 words
    messages = [turn(1), turn(2), turn(3)]
    window = short_term_window(messages, dialog_round=10, max_tokens=12, count=words)
    assert texts(window) == ["question 2", "answer number 2", "question 3", "answer number 3"]


def test_window_that_fits_the_budget_exactly_is_kept_whole() -> None:
    window = short_term_window([turn(1), turn(2)], dialog_round=10, max_tokens=10, count=words)
    assert len(window) == 4


def test_window_drops_whole_pairs_never_half_a_pair() -> None:
    # 9 words would fit the newer pair plus the older question, but a lone question never stays
    window = short_term_window([turn(1), turn(2)], dialog_round=10, max_tokens=9, count=words)
    assert texts(window) == ["question 2", "answer number 2"]


def test_window_is_empty_when_even_the_newest_pair_exceeds_the_budget() -> None:
    assert short_term_window([turn(1), turn(2)], dialog_round=10, max_tokens=4, count=words) == []
    assert short_term_window([turn(1)], dialog_round=10, max_tokens=0, count=words) == []


def test_window_counts_tokens_with_the_function_passed_in() -> None:
    counted: list[str] = []

    def characters(text: str) -> int:
        counted.append(text)
        return len(text)

    # by characters: each pair is 10 + 15 = 25; a budget of 30 keeps one pair only
    window = short_term_window([turn(1), turn(2)], dialog_round=10, max_tokens=30, count=characters)
    assert texts(window) == ["question 2", "answer number 2"]
    assert counted
    assert set(counted) <= {"question 1", "answer number 1", "question 2", "answer number 2"}
    # the same budget in words keeps both pairs
    assert len(short_term_window([turn(1), turn(2)], dialog_round=10, max_tokens=30, count=words)) == 4


def test_window_starts_with_a_user_message_and_ends_with_an_assistant_message() -> None:
    messages = [turn(1), turn(2, MessageStatus.STOP), turn(3), turn(4, answer=""), turn(5)]
    for budget in (5, 10, 15, 100):
        window = short_term_window(messages, dialog_round=10, max_tokens=budget, count=words)
        assert window
        assert window[0].role is Role.USER
        assert window[-1].role is Role.ASSISTANT
        assert roles(window) == [Role.USER, Role.ASSISTANT] * (len(window) // 2)


def test_turn_pair_is_the_query_then_the_answer() -> None:
    user, assistant = turn_pair(turn(1))
    assert (user.role, user.text, user.created_at) == (Role.USER, "question 1", T0 + timedelta(minutes=1))
    assert (assistant.role, assistant.text) == (Role.ASSISTANT, "answer number 1")
    assert user.id != assistant.id


@pytest.mark.parametrize(
    "message",
    [turn(1, MessageStatus.STOP), turn(1, MessageStatus.RUNNING), turn(1, answer="")],
)
def test_turn_pair_refuses_a_turn_that_is_not_completed(message: Message) -> None:
    with pytest.raises(DomainError):
        turn_pair(message)


def test_history_from_turns_is_pairs_in_order() -> None:
    history = history_from_turns([turn(1), turn(2)])
    assert roles(history) == [Role.USER, Role.ASSISTANT, Role.USER, Role.ASSISTANT]
    assert texts(history)[2] == "question 2"


def test_odd_length_history_is_malformed_and_not_silently_fixed() -> None:
    history = [msg(Role.USER, "a"), msg(Role.ASSISTANT, "b"), msg(Role.USER, "c")]
    with pytest.raises(MalformedHistory, match="odd"):
        check_history(history)
    with pytest.raises(MalformedHistory):
        trim_history(history, 1000, words)


@pytest.mark.parametrize(
    "order",
    [
        [Role.ASSISTANT, Role.USER],
        [Role.USER, Role.USER],
        [Role.ASSISTANT, Role.ASSISTANT],
        [Role.USER, Role.ASSISTANT, Role.ASSISTANT, Role.USER],
        [Role.SYSTEM, Role.ASSISTANT],
        [Role.USER, Role.TOOL],
    ],
)
def test_wrongly_ordered_history_is_malformed_and_not_silently_fixed(order: list[Role]) -> None:
    history = [msg(role, str(i)) for i, role in enumerate(order)]
    with pytest.raises(MalformedHistory):
        check_history(history)
    with pytest.raises(MalformedHistory):
        trim_history(history, 1000, words)


def test_malformed_history_is_a_domain_error() -> None:
    assert issubclass(MalformedHistory, DomainError)


def test_well_formed_history_passes_the_check() -> None:
    check_history([])
    check_history([msg(Role.USER), msg(Role.ASSISTANT)])


def test_negative_token_budget_is_rejected() -> None:
    with pytest.raises(DomainError):
        trim_history([msg(Role.USER), msg(Role.ASSISTANT)], -1, words)


@pytest.mark.parametrize("confidence", [0.0, 0.5, 1.0])
def test_entity_confidence_within_zero_and_one_is_accepted(confidence: float) -> None:
    assert entity(confidence=confidence).confidence == confidence


@pytest.mark.parametrize("confidence", [-0.01, 1.01, 2.0, float("nan")])
def test_entity_confidence_outside_zero_and_one_is_rejected(confidence: float) -> None:
    with pytest.raises(DomainError, match="confidence"):
        entity(confidence=confidence)


@pytest.mark.parametrize(("kind", "value"), [("", "tomorrow"), ("date", ""), ("  ", "x"), ("date", " ")])
def test_entity_needs_a_type_and_a_value(kind: str, value: str) -> None:
    with pytest.raises(DomainError):
        entity(type=kind, value=value)


def entity(**overrides: object) -> Entity:
    values: dict[str, object] = {
        "type": "date", "value": "tomorrow", "confidence": 0.9,
        "source_message_id": MessageId("m1"), "updated_at": T0,
    }
    values.update(overrides)
    return Entity(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(("confidence", "reaches"), [(0.69, False), (0.7, True), (0.71, True), (1.0, True)])
def test_entity_reaches_the_prompt_only_at_or_above_the_threshold(confidence: float, reaches: bool) -> None:
    assert entity(confidence=confidence).reaches_prompt(0.7) is reaches


def test_superseded_entity_never_reaches_the_prompt() -> None:
    old = entity(confidence=1.0)
    replaced = old.superseded(T0 + timedelta(hours=1))
    assert replaced.superseded_at == T0 + timedelta(hours=1)
    assert not replaced.reaches_prompt(0.0)
    assert old.reaches_prompt(0.7)
    assert old.superseded_at is None


def test_archive_entry_keeps_the_ids_of_its_sources() -> None:
    sources = (MessageId("m1"), MessageId("m2"))
    entry = ArchiveEntry("a1", ConversationId("c"), "they planned a trip", sources, T0)
    assert entry.source_message_ids == ("m1", "m2")


def test_archive_entry_needs_sources() -> None:
    with pytest.raises(DomainError, match="source"):
        ArchiveEntry("a1", ConversationId("c"), "summary", (), T0)
