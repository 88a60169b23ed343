"""Settings that do not validate, as the one line `memagent` prints before it gives up.

`Settings()` raises pydantic's `ValidationError` (or pydantic-settings' `SettingsError` for a value
that is not JSON); its text spans lines and names fields, not the environment variables to fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic_settings import SettingsError

from interfaces.settings.source import JsonTooDeep

if TYPE_CHECKING:
    from pydantic import ValidationError


def invalid_settings_line(error: ValidationError | SettingsError) -> str:
    """`SETTING: why` for settings that do not validate, in one line that quotes no value, e.g.
    `MEMAGENT_MODELS: item 2: profile name 'fast' is used twice`."""
    if isinstance(error, SettingsError):  # a value that is not JSON; pydantic-settings names the field in quotes
        quoted = str(error).split('"')
        why = error.__cause__ if isinstance(error.__cause__, JsonTooDeep) else "not valid JSON"
        return f"MEMAGENT_{quoted[1].upper()}: {why}" if len(quoted) > 2 else f"settings: {error}"
    first = error.errors(include_input=False, include_url=False)[0]
    where = [str(part) for part in first["loc"]]
    cut = next((i for i, part in enumerate(where) if part.isdigit()), len(where))  # a list's item: its own path
    setting = "MEMAGENT_" + "__".join(where[:cut]).upper()
    item = where[cut:]
    detail = f"item {int(item[0]) + 1}: " if item else ""
    detail += f"{'.'.join(item[1:])}: " if len(item) > 1 else ""
    return f"{setting}: {detail}{str(first['msg']).removeprefix('Value error, ')}"
