"""The rules the wiring applies: upkeep after every turn with the offline model, and the memory
tiers read one after the other on an embedded database."""

from __future__ import annotations

from application.memory.upkeep_rule import EVERY_TURN, UpkeepRule
from infrastructure.persistence.database import Database
from interfaces.wiring.rules import recall_reads_tiers_at_once, upkeep_rule_for


def test_the_offline_model_keeps_memory_up_to_date_after_every_turn_and_a_real_one_waits_for_the_lazy_rule() -> None:
    lazy = UpkeepRule(every_turns=4)
    assert upkeep_rule_for("scripted", lazy) is EVERY_TURN
    assert upkeep_rule_for("openai", lazy) is lazy
    assert upkeep_rule_for("agentscope", lazy) is lazy


def test_memory_tiers_are_read_at_once_on_a_database_server_and_in_turn_on_sqlite() -> None:
    assert recall_reads_tiers_at_once(Database("postgresql+asyncpg://postgres@127.0.0.1:5432/x"))
    assert not recall_reads_tiers_at_once(Database("sqlite+aiosqlite:///:memory:"))
