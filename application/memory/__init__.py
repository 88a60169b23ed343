"""The three memory tiers: recall at a turn's start, upkeep after its end, and the memory API."""

from application.memory.conversation_memory import ConversationMemory
from application.memory.extract_entities import ExtractEntities
from application.memory.fold_archive import FoldArchive
from application.memory.long_term_recall import MemoryRecall
from application.memory.memory_queries import MemoryQueries
from application.memory.run_upkeep import MemoryUpkeep
from application.memory.schedule_upkeep import UpkeepScheduler
from application.memory.update_summary import UpdateSummary

__all__ = [
    "ConversationMemory", "ExtractEntities", "FoldArchive", "MemoryQueries", "MemoryRecall", "MemoryUpkeep",
    "UpdateSummary", "UpkeepScheduler",
]
