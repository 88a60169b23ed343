"""No tier of memory is lost when the embedded default (SQLite + in-process memory) restarts: a
real `memagent serve` learns an end user's facts, a conversation's entities, an archive entry and
a summary; the process stops; a new one on the same database file answers the memory APIs with
all of it, and the next turn's prompt holds all of it (the window rebuilt from the messages).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from domain.agents.prompt import ARCHIVE_HEADER, EARLIER_HEADER, SUMMARY_HEADER
from tests.integration.backends import history_texts, prompt_of
from tests.integration.db_fixtures import sqlite_url
from tests.integration.streaming_helpers import serving
from tests.integration.user_memory_world import LESSON, SMALL_MEMORY, memory_reads, say, system_of, teach

pytestmark = pytest.mark.integration

ANN = "ann"


def test_a_restarted_embedded_service_has_every_tier_of_memory(tmp_path: Path) -> None:
    env = {"MEMAGENT_DATABASE__URL": sqlite_url(tmp_path / "memagent.db"), **SMALL_MEMORY}
    with serving(env, tmp_path) as service, httpx.Client(base_url=service.base_url, timeout=30) as http:
        turns = teach(http, ANN)
        conversation = turns[0]["conversation_id"]
        before = memory_reads(http, ANN, conversation)

    with serving(env, tmp_path) as service, httpx.Client(base_url=service.base_url, timeout=30) as http:
        after = memory_reads(http, ANN, conversation)
        assert after == before
        held = after["conversation"]
        assert {f["type"]: f["value"] for f in after["user"]["facts"]} == \
            {"name": "Ada", "city": "Lisbon", "likes": "teal"}
        entities = {e["type"]: e["value"] for e in held["entities"]}
        assert (entities["flight_code"], entities["seat_number"], entities["task"]) == \
            ("KX42", "17C", "renew my passport")
        [entry] = held["archive"]
        assert entry["source_message_ids"] == [turns[0]["message_id"], turns[1]["message_id"]]
        assert "renew my passport" in held["summary"]
        assert after["search"][0]["conversation_id"] == conversation

        next_turn = say(http, ANN, "What was my flight code and seat number?", conversation)
        system = system_of(http, next_turn["message_id"])
        for line in ("- name: Ada", "- city: Lisbon", "- likes: teal", "- flight_code: KX42", "- seat_number: 17C",
                     f"{SUMMARY_HEADER}\n{held['summary']}", f"{ARCHIVE_HEADER}\n- {entry['summary']}"):
            assert line in system
        assert history_texts(prompt_of(http, next_turn["message_id"]))[::2] == LESSON[-2:]  # the window, rebuilt

        elsewhere = say(http, ANN, "Where do I live?")
        system = system_of(http, elsewhere["message_id"])
        assert "- city: Lisbon" in system
        assert f"{EARLIER_HEADER}\n- (conversation {conversation})" in system
