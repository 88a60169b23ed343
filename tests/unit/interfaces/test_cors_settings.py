"""`MEMAGENT_SERVER__CORS_ORIGINS`: origins as browsers send them, and never `*` with keys."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from interfaces.settings.checks import settings_problem
from interfaces.settings.errors import invalid_settings_line
from interfaces.settings.settings import Settings


def settings(monkeypatch: pytest.MonkeyPatch, origins: str, require_keys: bool = False) -> Settings:
    monkeypatch.setenv("MEMAGENT_SERVER__CORS_ORIGINS", origins)
    monkeypatch.setenv("MEMAGENT_AUTH__REQUIRE_KEYS", str(require_keys).lower())
    return Settings()


def test_no_origin_is_allowed_by_default() -> None:
    assert Settings().server.cors_origins == []


def test_origins_are_read_as_a_json_list(monkeypatch: pytest.MonkeyPatch) -> None:
    listed = settings(monkeypatch, '["http://localhost:5173", "https://app.example.com"]')
    assert listed.server.cors_origins == ["http://localhost:5173", "https://app.example.com"]
    assert settings_problem(listed) is None


@pytest.mark.parametrize("origin", [
    "localhost:5173", "http://localhost:5173/", "https://app.example.com/chat", "ftp://files.example.com",
    "https://user@app.example.com", "http://localhost:99999", "https://",
])
def test_what_is_not_an_origin_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch, origin: str) -> None:
    with pytest.raises(ValidationError) as refused:
        settings(monkeypatch, f'["{origin}"]')
    line = invalid_settings_line(refused.value)
    assert line.startswith("MEMAGENT_SERVER__CORS_ORIGINS: item 1: ")
    assert "is not an origin" in line
    assert "\n" not in line


@pytest.mark.parametrize("require_keys", [True, False])
def test_any_origin_is_refused_with_keys_and_without(monkeypatch: pytest.MonkeyPatch, require_keys: bool) -> None:
    problem = settings_problem(settings(monkeypatch, '["*"]', require_keys=require_keys))
    assert problem is not None
    assert problem.startswith("MEMAGENT_SERVER__CORS_ORIGINS: ")
