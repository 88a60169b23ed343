"""One chat turn: start it, run it (recall, the model ↔ tools loop, events, the save)."""

from application.chat_turn.run_chat_turn import RunChatTurn
from application.chat_turn.start_chat_turn import StartChatTurn

__all__ = ["RunChatTurn", "StartChatTurn"]
