"""MEMAGENT_MODELS as the settings read it: what is refused, and the one line that says why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from pydantic_settings import SettingsError

from interfaces.settings.errors import invalid_settings_line
from interfaces.settings.settings import Settings

KEY = "sk-setting-0123456789abcdef"


def settings_with(monkeypatch: pytest.MonkeyPatch, models: list[dict[str, Any]] | str) -> Settings:
    monkeypatch.setenv("MEMAGENT_MODELS", models if isinstance(models, str) else json.dumps(models))
    return Settings()


def refusal(monkeypatch: pytest.MonkeyPatch, models: list[dict[str, Any]] | str) -> str:
    """The start-up line for settings that must not validate; checks it quotes no key."""
    with pytest.raises((ValidationError, SettingsError)) as raised:
        settings_with(monkeypatch, models)
    assert isinstance(raised.value, (ValidationError, SettingsError))
    line = invalid_settings_line(raised.value)
    assert "\n" not in line
    assert KEY not in line
    assert KEY not in str(raised.value)
    return line


def profile(name: str = "fast", **fields: Any) -> dict[str, Any]:
    return {"name": name, "provider": "openai", "model": "gpt-4o-mini"} | fields


def test_a_good_list_becomes_profiles_the_container_gets_as_plain_values(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAST_KEY", KEY)
    (tmp_path / "big.key").write_text(KEY)
    models = [
        profile(api_key_env="FAST_KEY", price={"input": 0.15, "output": 0.6}, capabilities={"image_input": False}),
        profile("big", provider="agentscope", model="qwen-max", api_key_file=str(tmp_path / "big.key"),
                base_url="https://dashscope.test/v1", temperature=0.2, timeout=30, max_retries=1),
        profile("offline", provider="scripted"),
    ]
    dumped = settings_with(monkeypatch, models).model_dump()["models"]
    assert [m["name"] for m in dumped] == ["fast", "big", "offline"]
    assert dumped[0]["price"] == {"input": 0.15, "output": 0.6}
    assert dumped[0]["capabilities"] == {
        "tool_call": None, "agent_thought": None, "image_input": False, "structured_output": None
    }
    assert (dumped[1]["temperature"], dumped[1]["timeout"], dumped[1]["max_retries"]) == (0.2, 30.0, 1)
    assert KEY not in json.dumps(dumped)


def test_no_profiles_is_the_default() -> None:
    assert Settings().models == []


def test_a_list_that_is_not_json_names_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert refusal(monkeypatch, '[{"name": "fast",') == "MEMAGENT_MODELS: not valid JSON"


@pytest.mark.parametrize(
    ("models", "why"),
    [
        ([profile(provider="openia")], "MEMAGENT_MODELS: item 1: provider: Input should be"),
        ([profile(), {"name": "x", "provider": "openai"}], "MEMAGENT_MODELS: item 2: model: Field required"),
        ([profile(price={"input": -1, "output": 1})], "MEMAGENT_MODELS: item 1: price.input: Input should be greater"),
        ([profile(temperature=3)], "MEMAGENT_MODELS: item 1: temperature: Input should be less than or equal to 2"),
        ([profile(colour="red")], "MEMAGENT_MODELS: item 1: colour: Extra inputs are not permitted"),
        ([profile(), profile()], "MEMAGENT_MODELS: profile name 'fast' is used twice"),
        ([profile("default")], "MEMAGENT_MODELS: the name 'default' is the MEMAGENT_LLM__* model's"),
        ([profile("no spaces")], "MEMAGENT_MODELS: profile name 'no spaces' must be 1-64 letters"),
        ({"name": "fast"}, "MEMAGENT_MODELS: Input should be a valid list"),
    ],
)
def test_a_bad_list_is_refused_in_one_line_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, models: list[dict[str, Any]], why: str
) -> None:
    assert refusal(monkeypatch, json.dumps(models)).startswith(why)


def test_a_key_given_in_the_profile_itself_is_refused_without_quoting_it(monkeypatch: pytest.MonkeyPatch) -> None:
    line = refusal(monkeypatch, [profile(api_key=KEY)])
    assert line == (
        "MEMAGENT_MODELS: item 1: a key goes in the environment variable api_key_env names, or in api_key_file"
    )


def test_a_missing_key_variable_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAST_KEY", raising=False)
    line = refusal(monkeypatch, [profile(api_key_env="FAST_KEY")])
    assert line == (
        "MEMAGENT_MODELS: item 1: profile 'fast': the environment variable FAST_KEY (api_key_env) is not set or empty"
    )


def test_an_unreadable_key_file_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = tmp_path / "nope.key"
    line = refusal(monkeypatch, [profile(api_key_file=str(missing))])
    assert line.startswith(f"MEMAGENT_MODELS: item 1: profile 'fast': the api_key_file {missing} cannot be read")


def test_a_base_url_holding_credentials_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    line = refusal(monkeypatch, [profile(base_url=f"https://user:{KEY}@models.test/v1")])
    assert "user name or password" in line


def test_other_settings_name_their_nested_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMAGENT_LLM__TEMPERATURE", "9")
    with pytest.raises(ValidationError) as raised:
        Settings()
    assert invalid_settings_line(raised.value).startswith("MEMAGENT_LLM__TEMPERATURE: Input should be less than")
