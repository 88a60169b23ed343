"""The durable record: conversations, messages and their steps, as one store.

Use cases depend on the roles they use (`TurnRecord`, `ConversationReader`, `MessageReader`,
`ConversationWriter`, `MessageAnnotations`); `MessageStore` is all of them at once, for the adapter
that implements them and the wiring that hands it out.
"""

from typing import Protocol

from application.ports.conversation_reader import ConversationReader
from application.ports.conversation_writer import ConversationWriter
from application.ports.message_annotations import MessageAnnotations
from application.ports.message_reader import MessageReader
from application.ports.turn_record import TurnRecord


class MessageStore(TurnRecord, ConversationReader, MessageReader, ConversationWriter, MessageAnnotations, Protocol):
    """Each method is one transaction. Raises `StoreUnavailable` when the database fails."""
