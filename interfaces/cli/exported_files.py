"""Reading a file `memagent agents export` or `memagent workflows export` wrote."""

from __future__ import annotations

import json
from typing import Any


def read_exported(path: str, what: str) -> dict[str, Any]:
    """The exported object; ValueError naming what is wrong, in a line."""
    with open(path, encoding="utf-8") as file:
        try:
            data = json.load(file)
        except RecursionError:  # `[` 30,000 times: an unreadable file, not a crash with a traceback
            raise ValueError("JSON nested too deep") from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise ValueError(f"not an exported {what}: a JSON object with at least a name")
    return data
