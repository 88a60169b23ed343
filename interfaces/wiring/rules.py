"""The rules the wiring applies when it picks how a part runs, named so they can be read and tested."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.memory.upkeep_rule import EVERY_TURN
from infrastructure.models.provider_recipes import provider_recipe

if TYPE_CHECKING:
    from application.memory.upkeep_rule import UpkeepRule
    from infrastructure.persistence.database import Database


def upkeep_rule_for(provider: str, lazy: UpkeepRule) -> UpkeepRule:
    """The offline model makes no model call, so its upkeep follows every turn and memory is never
    behind; a real model's upkeep waits for the lazy rule, which saves calls. It is the process's
    rule (by its `default` model's provider), whichever profile an agent's upkeep runs on."""
    return EVERY_TURN if provider_recipe(provider).offline else lazy


def recall_reads_tiers_at_once(database: Database) -> bool:
    """A database server rewards reading the memory tiers concurrently (one round trip of waiting);
    an embedded one (SQLite) answers on this process's own threads, where concurrent reads only
    contend with each other, so there they are read one after the other."""
    return not database.is_sqlite
