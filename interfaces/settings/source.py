"""The environment as a settings source whose JSON values may be hostile: nesting deep enough to
exhaust Python's recursion (`[` 30,000 times) is refused as a `ValueError`, which pydantic-settings
reports as the setting's own `SettingsError`, not a `RecursionError` with a 35-line traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic_settings import EnvSettingsSource

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo


class JsonTooDeep(ValueError):
    """A JSON value nested past what the parser can recurse into."""

    def __init__(self) -> None:
        super().__init__("JSON nested too deep")


class GuardedEnvSource(EnvSettingsSource):
    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        try:
            return super().decode_complex_value(field_name, field, value)
        except RecursionError:
            raise JsonTooDeep from None
