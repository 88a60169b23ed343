"""Memory tier policies: the short-term store, archive folding, summaries, entities, recall."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.conversations.conversation import Message, MessageStatus
from domain.conversations.messages import Role, text_msg
from domain.errors import DomainError, MalformedHistory
from domain.ids import ConversationId, MessageId, OwnerId, TaskId
from domain.memory.archive import ArchiveEntry, RankedEntry, due_for_archive, newest_entries, rank_archive, unarchived
from domain.memory.entities import Entity, EntitySheet, entity_type, merge_entities, merge_entity
from domain.memory.recall import select_recall
from domain.memory.summary import SummaryLimit, UpkeepState, is_cjk, pending_for_summary
from domain.memory.window import (
    Exchange,
    MemoryPolicy,
    exchanges_of,
    history_from_turns,
    message_id_of,
    recent_window,
    turn_pair,
    window_turn_ids,
)

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
CONV = ConversationId("c")


def words(text: str) -> int:
    return len(text.split())


def turn(n: int, status: MessageStatus = MessageStatus.NORMAL) -> Message:
    return Message(
        id=MessageId(f"m{n}"), conversation_id=CONV, owner=OwnerId("alice"), task_id=TaskId(f"t{n}"),
        query=f"question {n}", created_at=T0 + timedelta(minutes=n), updated_at=T0 + timedelta(minutes=n, seconds=5),
        answer=f"answer {n}", status=status,
    )


def store(*ns: int) -> list:  # type: ignore[type-arg]
    return history_from_turns([turn(n) for n in ns])


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def entity(kind: str, value: str, confidence: float = 0.9, minute: int = 0, source: str = "m1") -> Entity:
    return Entity(kind, value, confidence, MessageId(source), at(minute))


def entry(n: int, summary: str = "", minute: int = 0) -> ArchiveEntry:
    return ArchiveEntry(f"a{n}", CONV, summary or f"entry {n}", (MessageId(f"m{n}"),), at(minute))


# --- the short-term store ---------------------------------------------------------------------


def test_a_pair_names_the_turn_it_comes_from() -> None:
    user, assistant = turn_pair(turn(7))
    assert message_id_of(user) == message_id_of(assistant) == "m7"
    assert message_id_of(text_msg("plain", Role.USER, "x", T0)) == "plain"


def test_window_turn_ids_lists_one_id_per_pair_oldest_first() -> None:
    assert window_turn_ids(store(1, 2, 3)) == ["m1", "m2", "m3"]
    with pytest.raises(MalformedHistory):
        window_turn_ids(store(1, 2)[:3])


def test_the_prompt_window_is_the_last_dialog_round_turns_of_the_store() -> None:
    window = recent_window(store(*range(1, 16)), 10, 10_000, words)
    assert window_turn_ids(window) == [f"m{n}" for n in range(6, 16)]


def test_the_prompt_window_is_the_whole_store_when_it_holds_fewer_turns() -> None:
    assert window_turn_ids(recent_window(store(1, 2), 10, 10_000, words)) == ["m1", "m2"]
    assert recent_window(store(1, 2), 0, 10_000, words) == []


def test_the_prompt_window_is_trimmed_from_the_oldest_pair_to_the_budget() -> None:
    # each pair: "question n" (2) + "answer n" (2) = 4 words
    assert window_turn_ids(recent_window(store(1, 2, 3), 3, 9, words)) == ["m2", "m3"]


def test_nothing_is_due_for_archive_up_to_the_threshold() -> None:
    assert due_for_archive(store(*range(1, 21)), 20, 10) == []


def test_the_oldest_batch_is_due_once_the_store_holds_more_than_the_threshold() -> None:
    due = due_for_archive(store(*range(1, 22)), 20, 10)
    assert window_turn_ids(due) == [f"m{n}" for n in range(1, 11)]


@pytest.mark.parametrize(("threshold", "batch"), [(0, 1), (5, 0), (5, 6)])
def test_archive_threshold_and_batch_must_make_sense(threshold: int, batch: int) -> None:
    with pytest.raises(DomainError):
        due_for_archive(store(1), threshold, batch)


def test_a_rebuilt_store_leaves_out_archived_turns() -> None:
    archived = ArchiveEntry("a", CONV, "s", (MessageId("m1"), MessageId("m2")), T0)
    assert [t.id for t in unarchived([turn(1), turn(2), turn(3)], [archived])] == ["m3"]


def test_exchanges_of_a_window_are_its_pairs() -> None:
    assert exchanges_of(store(4)) == [Exchange(MessageId("m4"), "question 4", "answer 4", at(4))]
    assert Exchange.of(turn(4)) == Exchange(MessageId("m4"), "question 4", "answer 4", at(4))


def test_the_rebuild_reads_enough_turns_for_the_window_and_the_store() -> None:
    assert MemoryPolicy().rebuild_turns(10) == 30
    assert MemoryPolicy().rebuild_turns(50) == 50


@pytest.mark.parametrize(
    "values",
    [{"compact_threshold": 0}, {"compact_batch": 21}, {"compact_batch": 0}, {"archive_top_k": -1},
     {"entity_min_confidence": 1.5}, {"recall_max_tokens": -1}],
)
def test_memory_policy_refuses_nonsense(values: dict[str, float]) -> None:
    with pytest.raises(DomainError):
        MemoryPolicy(**values)  # type: ignore[arg-type]


# --- summaries: bounded ----------------------------------------------------------------------


def test_cjk_text_is_recognised() -> None:
    assert is_cjk("我喜欢喝茶，也喜欢咖啡。")
    assert is_cjk("我住在Paris")
    assert not is_cjk("I live in 北京 now, with my family and two dogs")
    assert not is_cjk("")


def test_a_summary_within_the_bound_is_kept_as_it_is() -> None:
    assert SummaryLimit(max_words=5).trim("  One   two three.  ") == "One two three."


def test_a_long_summary_keeps_whole_sentences_when_they_fill_half_the_bound() -> None:
    limit = SummaryLimit(max_words=6)
    assert limit.trim("One two three. Four five six seven. Eight.") == "One two three."


def test_a_long_sentence_is_cut_with_an_ellipsis_within_the_bound() -> None:
    limit = SummaryLimit(max_words=4)
    trimmed = limit.trim("one two three four five six")
    assert trimmed == "one two three …"
    assert limit.fits(trimmed)


def test_cjk_summaries_are_bounded_in_characters() -> None:
    limit = SummaryLimit(max_words=1, max_cjk_chars=6)
    assert limit.trim("我喜欢茶。我住在北京。") == "我喜欢茶。"
    cut = limit.trim("我喜欢喝很多很多的茶")
    assert cut == "我喜欢喝很…"
    assert limit.fits(cut)


def test_the_default_bound_is_120_words_or_200_cjk_characters() -> None:
    limit = SummaryLimit()
    assert limit.fits(" ".join(["word"] * 120))
    assert not limit.fits(" ".join(["word"] * 121))
    assert limit.fits("字" * 200)
    assert not limit.fits("字" * 201)
    assert "120 words" in limit.describe()


def test_summary_limits_must_be_positive() -> None:
    with pytest.raises(DomainError):
        SummaryLimit(max_words=0)


def test_pending_turns_follow_the_last_summarised_one() -> None:
    turns = [turn(1), turn(2), turn(3)]
    assert [t.id for t in pending_for_summary(turns, UpkeepState(MessageId("m1")), True)] == ["m2", "m3"]
    assert pending_for_summary(turns, UpkeepState(MessageId("m3")), True) == []


def test_a_failed_update_is_caught_up_when_the_cursor_is_out_of_sight() -> None:
    turns = [turn(5), turn(6)]
    assert [t.id for t in pending_for_summary(turns, UpkeepState(MessageId("m1")), True)] == ["m5", "m6"]


def test_a_new_conversation_summarises_every_turn_it_has() -> None:
    assert [t.id for t in pending_for_summary([turn(1), turn(2)], UpkeepState(), False)] == ["m1", "m2"]


def test_with_a_summary_but_no_cursor_only_the_newest_turn_is_summarised() -> None:
    assert [t.id for t in pending_for_summary([turn(1), turn(2)], UpkeepState(), True)] == ["m2"]


def test_turns_from_before_a_forget_are_never_summarised() -> None:
    state = UpkeepState(forgotten_at=at(2) + timedelta(seconds=1))
    assert [t.id for t in pending_for_summary([turn(1), turn(2), turn(3)], state, False)] == ["m3"]


def test_only_completed_turns_are_summarised() -> None:
    assert pending_for_summary([turn(1, MessageStatus.ERROR)], UpkeepState(), False) == []


# --- archive entries and their ranking --------------------------------------------------------


def test_an_archive_entry_id_depends_only_on_its_batch() -> None:
    ids = (MessageId("m1"), MessageId("m2"))
    assert ArchiveEntry.id_for(CONV, ids) == ArchiveEntry.id_for(CONV, ids)
    assert ArchiveEntry.id_for(CONV, ids) != ArchiveEntry.id_for(CONV, ids[:1])
    assert ArchiveEntry.id_for(CONV, ids) != ArchiveEntry.id_for(ConversationId("other"), ids)


def test_an_archive_entry_names_each_source_once() -> None:
    with pytest.raises(DomainError):
        ArchiveEntry("a", CONV, "s", (MessageId("m1"), MessageId("m1")), T0)


def test_archive_entries_rank_by_cosine_similarity_to_the_query() -> None:
    entries = [entry(1), entry(2), entry(3)]
    ranked = rank_archive(entries, [[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]], [0.0, 1.0], top_k=2)
    assert [r.entry.id for r in ranked] == ["a2", "a3"]
    assert ranked[0].score == pytest.approx(1.0)


def test_equal_scores_go_to_the_newer_entry() -> None:
    ranked = rank_archive([entry(1, minute=1), entry(2, minute=2)], [[1.0], [1.0]], [1.0], top_k=1)
    assert ranked[0].entry.id == "a2"


def test_ranking_needs_one_vector_per_entry() -> None:
    with pytest.raises(DomainError):
        rank_archive([entry(1)], [], [1.0], 3)


def test_without_similarity_the_newest_entries_are_used_unscored() -> None:
    newest = newest_entries([entry(1, minute=1), entry(2, minute=3), entry(3, minute=2)], 2)
    assert [(r.entry.id, r.score) for r in newest] == [("a2", None), ("a3", None)]


# --- entities ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "kind"),
    [("date", "date"), ("Favourite colour", "favourite_colour"), (" dog's name ", "dog_s_name"), ("城市", "城市")],
)
def test_entity_types_are_normalised(raw: str, kind: str) -> None:
    assert entity_type(raw) == kind


@pytest.mark.parametrize("raw", ["", "  ", "!!!", "x" * 65])
def test_an_entity_type_needs_letters_and_a_sane_length(raw: str) -> None:
    with pytest.raises(DomainError):
        entity_type(raw)


def test_a_first_value_becomes_current() -> None:
    change = merge_entity(None, entity("date", "tomorrow"))
    assert change.current.value == "tomorrow"
    assert change.retired is None


def test_a_new_value_replaces_the_old_one_which_becomes_history() -> None:
    old, new = entity("date", "tomorrow", minute=1), entity("date", "the day after tomorrow", minute=5)
    change = merge_entity(old, new)
    assert change.current == new
    assert change.retired == old.superseded(new.updated_at)
    assert change.retired is not None
    assert change.retired.superseded_at == at(5)


def test_the_same_value_again_refreshes_without_history_and_keeps_the_higher_confidence() -> None:
    change = merge_entity(entity("city", "Lisbon", 0.95, 1), entity("city", " lisbon ", 0.8, 2, "m2"))
    assert change.retired is None
    assert (change.current.source_message_id, change.current.confidence) == ("m2", 0.95)


def test_a_late_extraction_never_overwrites_a_newer_value() -> None:
    newer, late = entity("date", "friday", minute=5), entity("date", "monday", minute=2)
    change = merge_entity(newer, late)
    assert change.current == newer
    assert change.retired == late.superseded(at(5))


def test_an_uncertain_value_does_not_displace_a_confident_one() -> None:
    confident, unsure = entity("date", "friday", 0.9, 1), entity("date", "today", 0.6, 2)
    change = merge_entity(confident, unsure, min_confidence=0.7)
    assert change.current == confident
    assert change.retired == unsure.superseded(at(2))


def test_an_uncertain_value_replaces_an_equally_uncertain_one() -> None:
    change = merge_entity(entity("name", "Sure", 0.6, 1), entity("name", "Ada", 0.6, 2), min_confidence=0.7)
    assert change.current.value == "Ada"


def test_merge_refuses_two_types() -> None:
    with pytest.raises(DomainError):
        merge_entity(entity("date", "x"), entity("city", "y"))


def test_a_batch_merges_in_time_order() -> None:
    merged, retired = merge_entities(
        {"date": entity("date", "monday", minute=1)},
        [entity("date", "friday", minute=9), entity("date", "tuesday", minute=5), entity("city", "Porto", minute=5)],
    )
    assert {k: e.value for k, e in merged.items()} == {"date": "friday", "city": "Porto"}
    assert [(e.value, e.superseded_at) for e in retired] == [("monday", at(5)), ("tuesday", at(9))]


def test_only_current_confident_entities_reach_the_prompt_sorted_by_type() -> None:
    sheet = EntitySheet(
        current=(entity("name", "Ada"), entity("city", "Porto"), entity("mood", "tired", 0.4)),
        history=(entity("city", "Lisbon", minute=1).superseded(at(2)),),
    )
    assert [e.type for e in sheet.for_prompt(0.7)] == ["city", "name"]
    assert [e.type for e in sheet.below(0.7)] == ["mood"]
    assert [e.value for e in sheet.history_of("city")] == ["Lisbon"]


def test_history_of_a_type_lists_the_most_recently_superseded_first() -> None:
    sheet = EntitySheet(history=(entity("d", "a").superseded(at(1)), entity("d", "b").superseded(at(3))))
    assert [e.value for e in sheet.history_of("d")] == ["b", "a"]


# --- recall: priority within a budget ---------------------------------------------------------


def ranked(n: int, text: str, score: float) -> RankedEntry:
    return RankedEntry(entry(n, text), score)


def test_everything_fits_a_large_budget_in_priority_order() -> None:
    chosen = select_recall([entity("city", "Porto")], "they talk", [ranked(1, "old talk", 0.9)], 1000, words)
    assert [e.value for e in chosen.entities] == ["Porto"]
    assert chosen.summary == "they talk"
    assert [r.entry.id for r in chosen.archive] == ["a1"]
    assert chosen.dropped == ()


def test_the_archive_goes_first_then_the_summary_when_the_budget_is_short() -> None:
    # entity line "- city: Porto" = 3 words; summary 2 words; archive entry 2 words
    chosen = select_recall([entity("city", "Porto")], "they talk", [ranked(1, "old talk", 0.9)], 5, words)
    assert chosen.summary == "they talk"
    assert chosen.archive == ()
    assert chosen.dropped == ("archive a1",)
    tight = select_recall([entity("city", "Porto")], "they talk", [ranked(1, "old talk", 0.9)], 3, words)
    assert (tight.summary, [e.type for e in tight.entities]) == ("", ["city"])
    assert tight.dropped == ("summary", "archive a1")


def test_the_most_confident_entities_win_a_tight_budget() -> None:
    chosen = select_recall([entity("a", "x", 0.8), entity("b", "y", 0.95)], "", [], 3, words)
    assert [e.type for e in chosen.entities] == ["b"]
    assert chosen.dropped == ("entity a",)
