"""The pure parts of `memagent chat`: SSE parsing, the server URL, what is shown, and Ctrl-C's timing."""

from __future__ import annotations

import pytest

from interfaces.cli.chat.client import Frame, parse_frames, url_problem
from interfaces.cli.chat.turn import HeldInterrupt
from interfaces.cli.chat.view import clean, costs, shorten


def test_frames_are_parsed_as_memagent_writes_them_with_pings_skipped() -> None:
    lines = [
        "event: agent_message", 'data: {"answer": "Hel", "task_id": "t1"}', "id: 2", "",
        ": ping", "",
        "event: agent_message", 'data: {"answer":', 'data: "lo"}', "id: 3", "",
        "event: done", 'data: {"task_id": "t1"}', "",
    ]
    assert list(parse_frames(iter(lines))) == [
        Frame("agent_message", {"answer": "Hel", "task_id": "t1"}, 2),
        Frame("agent_message", {"answer": "lo"}, 3),  # data lines join with a newline, which JSON allows
        Frame("done", {"task_id": "t1"}, None),
    ]


def test_a_last_frame_without_its_blank_line_still_counts() -> None:
    assert list(parse_frames(iter(["event: stop", 'data: {"answer": "x"}', "id: 9"]))) == [
        Frame("stop", {"answer": "x"}, 9)
    ]


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "https://memagent.example.com/", "http://[::1]:8000"])
def test_http_urls_are_accepted(url: str) -> None:
    assert url_problem(url) is None


@pytest.mark.parametrize(("url", "says"), [
    ("127.0.0.1:8000", "must look like"), ("ftp://host", "must look like"),
    ("http://alice:mk_secret@host", "must not hold credentials"),
])
def test_urls_that_cannot_work_or_hold_a_key_are_refused(url: str, says: str) -> None:
    problem = url_problem(url)
    assert problem is not None
    assert says in problem
    assert "mk_secret" not in problem


def test_server_text_loses_control_characters_but_keeps_lines() -> None:
    assert clean("a\x1b[2J\x1b]0;title\x07b\nc\td\x9b") == "a[2J]0;titleb\nc\td"


def test_shorten_keeps_one_line_and_marks_the_cut() -> None:
    short = shorten({"q": "x" * 100}, 20)
    assert (short, len(short)) == ('{"q": "' + "x" * 12 + "…", 20)
    assert shorten("two\nlines") == "two lines"


def test_a_turns_cost_keeps_its_significant_digits_however_small() -> None:
    cheap = {"total_token_count": 12, "total_price": 0.0000000385, "latency": 0.4, "tokens_estimated": True}
    assert costs(cheap) == "~12 tokens · $0.0000000385 · 0.40 s"  # was $0.000000: it read as free
    assert costs({"total_token_count": 3000, "total_price": 0.0123456}) == "3000 tokens · $0.01235 · 0.00 s"


def test_ctrl_c_before_the_task_is_known_is_held_until_it_is() -> None:
    interrupt = HeldInterrupt()
    interrupt(2, None)  # no task id yet: nothing to stop on the server, so it waits
    with pytest.raises(KeyboardInterrupt):
        interrupt.arm()


def test_ctrl_c_once_the_task_is_known_interrupts_at_once() -> None:
    interrupt = HeldInterrupt()
    interrupt.arm()
    with pytest.raises(KeyboardInterrupt):
        interrupt(2, None)


def test_a_second_ctrl_c_gives_up_waiting_for_the_task() -> None:
    interrupt = HeldInterrupt()
    interrupt(2, None)
    with pytest.raises(KeyboardInterrupt):
        interrupt(2, None)
