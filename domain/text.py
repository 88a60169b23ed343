"""Text every store, log and stream can hold: no half surrogate pair, no NUL.

JSON may escape either on its own ("\\ud83d", "\\u0000") and Python takes both, but no database,
log or stream can encode half a surrogate pair, and PostgreSQL refuses a NUL in text. Text from
a request is refused (`text_problem`); text from a model or a tool is kept, with the two
replaced by U+FFFD (`storable`), since the turn is already under way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

REPLACEMENT = "\ufffd"


def text_problem(text: str) -> str:
    """Why `text` cannot be stored, or "" when it can."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as garbled:
        return f"not valid Unicode text (half a surrogate pair at position {garbled.start})"
    if "\x00" in text:
        return f"the NUL character (U+0000) cannot be stored (position {text.index(chr(0))})"
    return ""


def storable(text: str) -> str:
    """`text` with each half surrogate pair and each NUL replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # whole pairs become their character; a half one, U+FFFD
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text.replace("\x00", REPLACEMENT) if "\x00" in text else text


def storable_value(value: Any) -> Any:
    """A JSON-like value with its strings made `storable`, and the non-finite numbers that JSON
    cannot carry (NaN, infinities) turned into text."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Mapping):
        return {storable(str(key)): storable_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [storable_value(item) for item in value]
    return value
