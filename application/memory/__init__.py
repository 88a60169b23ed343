"""The three memory tiers: recall at a turn's start, upkeep after its end, and the memory API."""

from application.memory.conversation_memory import ConversationMemory
from application.memory.digest_turns import DigestTurns
from application.memory.extract_entities import ExtractEntities
from application.memory.fold_archive import FoldArchive
from application.memory.long_term_recall import MemoryRecall
from application.memory.memory_queries import MemoryQueries
from application.memory.run_upkeep import MemoryUpkeep
from application.memory.schedule_upkeep import UpkeepScheduler
from application.memory.upkeep_rule import UpkeepRule

__all__ = [
    "ConversationMemory", "DigestTurns", "ExtractEntities", "FoldArchive", "MemoryQueries", "MemoryRecall",
    "MemoryUpkeep", "UpkeepRule", "UpkeepScheduler",
]
