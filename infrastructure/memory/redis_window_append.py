"""Appending a turn to a conversation's cached window in Redis in one round trip.

The window is a JSON list written by `codec.encode_window`. A WATCH/GET/MULTI/SET/EXEC
transaction cost three round trips and sent the whole window back and forth at every turn. This script
appends the pair's JSON to the stored text on the server instead, atomically: the list's closing
bracket gives way to the pair's items, which is exactly what encoding the longer list would write.
A pair already there (a retried save) is not appended twice; a missing window, or one that is not
a JSON list, is left alone, and the window is rebuilt from the record when next read.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.conversations.messages import Msg

# KEYS[1]: the window. ARGV[1]: the pair as a JSON list; ARGV[2]: the TTL in ms; ARGV[3..]: the
# pair's `"id": "<message id>"` members, as the window's JSON writes them. Returns 1 when the
# window holds the pair afterwards, 0 when there is no readable window.
APPEND = """
local raw = redis.call('GET', KEYS[1])
if not raw or string.sub(raw, 1, 1) ~= '[' or string.sub(raw, -1) ~= ']' then return 0 end
for i = 3, #ARGV do
  if string.find(raw, ARGV[i], 1, true) then return 1 end
end
local joined = ARGV[1]
if raw ~= '[]' then joined = string.sub(raw, 1, -2) .. ', ' .. string.sub(ARGV[1], 2) end
redis.call('SET', KEYS[1], joined, 'PX', ARGV[2])
return 1
"""


def id_members(pair: Sequence[Msg]) -> list[str]:
    """Each message's id member as `encode_window` writes it (`"id": "…"`): present, the turn is."""
    return [json.dumps({"id": msg.id}, ensure_ascii=False)[1:-1] for msg in pair]
