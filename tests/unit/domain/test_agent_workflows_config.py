"""An agent config's `workflows`: published workflow versions it offers as tools, read and written by
the config codec, every problem named by its path."""

from __future__ import annotations

from typing import Any

import pytest

from domain.agents.config import AgentConfig, WorkflowRef
from domain.agents.config_codec import InvalidConfig, config_diff, config_from_dict, config_to_dict
from domain.errors import DomainError
from domain.ids import AppId

APP = AppId("a")


def problems(workflows: Any) -> list[str]:
    with pytest.raises(InvalidConfig) as refused:
        config_from_dict(APP, {"workflows": workflows})
    return refused.value.problems


def test_an_agent_offers_no_workflow_by_default() -> None:
    assert AgentConfig(APP).workflows == ()
    assert config_to_dict(AgentConfig(APP))["workflows"] == []


def test_workflows_round_trip_with_their_pinned_versions_and_return_direct() -> None:
    config = config_from_dict(APP, {"workflows": [{"id": "w1", "version": 3.0}, {"id": "w2", "version": 1,
                                                                                  "return_direct": True}]})
    assert config.workflows == (WorkflowRef("w1", 3), WorkflowRef("w2", 1, return_direct=True))
    assert config_from_dict(APP, config_to_dict(config)) == config


def test_each_wrong_workflow_is_named_by_its_path() -> None:
    assert problems([{"id": "", "version": 0, "extra": 1}, "w", {"id": "w", "version": 1, "return_direct": "yes"}]) \
        == ["workflows[0].extra: unknown field", "workflows[0].id: must be a workflow id",
            "workflows[0].version: must be a version number", "workflows[1]: must be an object {id, version, "
            "return_direct}", "workflows[2].return_direct: must be true or false"]


def test_a_version_is_required_and_workflows_must_be_a_list() -> None:
    assert problems([{"id": "w"}]) == ["workflows[0].version: must be a version number"]
    assert problems({"id": "w"}) == ["workflows: must be a list of at most 64 {id, version, return_direct}"]


def test_one_workflow_twice_would_be_two_tools_of_one_name() -> None:
    assert problems([{"id": "w", "version": 1}, {"id": "w", "version": 2}]) == ["workflows: names one workflow twice"]


def test_a_version_below_one_is_no_version() -> None:
    with pytest.raises(DomainError):
        WorkflowRef("w", 0)


def test_a_changed_pin_shows_in_the_diff() -> None:
    before = config_from_dict(APP, {"workflows": [{"id": "w", "version": 1}]})
    after = config_from_dict(APP, {"workflows": [{"id": "w", "version": 2}]})
    assert [path for path, _, _ in config_diff(before, after)] == ["workflows"]
