"""Text that every store and stream can hold: no half surrogate pair, no NUL."""

from __future__ import annotations


def text_problem(text: str) -> str:
    """Why `text` cannot be stored, or "" when it can."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as garbled:
        return f"not valid Unicode text (half a surrogate pair at position {garbled.start})"
    if "\x00" in text:
        return f"the NUL character (U+0000) cannot be stored (position {text.index(chr(0))})"
    return ""
