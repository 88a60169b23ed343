"""Every `Provide[...]` (or `Provided[...]`) in interfaces/ names a provider of `interfaces.wiring.container.Container`.

dependency-injector resolves these names only when a route is called: a misspelt one would wire
nothing and fail at the first request. This reads the source of interfaces/ (with `ast`), so a
new route is checked without being listed here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from dependency_injector import providers

from interfaces.settings.settings import Settings
from interfaces.wiring.build import build_container
from interfaces.wiring.container import WIRED_PACKAGES, Container

INTERFACES = Path(__file__).resolve().parents[3] / "interfaces"


def _dotted(node: ast.expr) -> str | None:
    """`Container.a.b` → "a.b"; anything else: None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "Container" and parts:
        return ".".join(reversed(parts))
    return None


MARKERS = ("Provide", "Provided")  # Provided: interfaces/http/provided.py, the routes' awaited Provide


def _is_provide(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id in MARKERS) or (
        isinstance(node, ast.Attribute) and node.attr in MARKERS
    )


def provide_names(source: str) -> list[str]:
    """The names in each `Provide["name"]` or `Provide[Container.name]` of a module's source."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Subscript) and _is_provide(node.value)):
            continue
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            names.append(key.value)
        elif (dotted := _dotted(key)) is not None:
            names.append(dotted)
        else:
            raise AssertionError(f"Provide[{ast.unparse(key)}]: use a string or Container.<name>")
    return names


def provides(name: str) -> bool:
    """Whether `name` (dotted through sub-containers and provider attributes) is one of the Container's."""
    first, *rest = name.split(".")
    if first not in Container.providers:
        return False
    current: object = Container.providers[first]
    for part in rest:
        if isinstance(current, providers.Container | providers.DependenciesContainer):
            if part not in current.providers:
                return False
            current = current.providers[part]
        else:
            try:
                current = getattr(current, part)
            except AttributeError:
                return False
    return isinstance(current, providers.Provider)


def _usages() -> list[tuple[str, str]]:
    found = []
    for path in sorted(INTERFACES.rglob("*.py")):
        for name in provide_names(path.read_text(encoding="utf-8")):
            found.append((str(path.relative_to(INTERFACES.parent)), name))
    return found


USAGES = _usages()


def test_interfaces_use_provide() -> None:
    # The routes take their use cases this way; finding none means the scan is broken.
    assert len(USAGES) >= 5
    assert any(path.startswith("interfaces/http/") for path, _ in USAGES)


@pytest.mark.parametrize(("path", "name"), USAGES, ids=[f"{p}:{n}" for p, n in USAGES])
def test_each_provide_names_a_provider_of_the_container(path: str, name: str) -> None:
    assert provides(name), f"{path}: Provide[{name!r}] names no provider of interfaces.wiring.container.Container"


def test_a_misspelt_name_is_caught() -> None:
    source = 'x = Provide["read_histroy"]\ny = Provide[Container.authenticat]\nz = Provide["config.database"]\n'
    assert provide_names(source) == ["read_histroy", "authenticat", "config.database"]
    assert not provides("read_histroy")
    assert not provides("authenticat")
    assert not provides("no_such_provider.inner")
    assert provides("read_history")
    assert provides("config.database")  # a Configuration option, through the provider's attribute


def test_the_wiring_covers_the_modules_that_use_provide() -> None:
    # A Provide[...] in a module the container does not wire is never resolved at all.
    wired = WIRED_PACKAGES
    for path, name in USAGES:
        module = path.removesuffix(".py").replace("/", ".")
        assert any(module == w or module.startswith(f"{w}.") for w in wired), f"{path}: Provide[{name!r}] not wired"


@pytest.mark.parametrize(("url", "at_once"), [
    ("sqlite+aiosqlite:///memagent.db", False), ("postgresql+asyncpg://postgres@db/memagent", True),
])
def test_recall_reads_its_tiers_at_once_only_from_a_database_server(url: str, at_once: bool) -> None:
    container = build_container(Settings(database={"url": url}))  # builds, connects to nothing

    assert container.memory.recall.kwargs["at_once"]() is at_once


@pytest.mark.parametrize(("turn", "limit"), [({}, 8), ({"preparing_at_once": 3}, 3), ({"preparing_at_once": 0}, 0)])
def test_the_preparing_gate_takes_its_limit_from_the_turn_settings(turn: dict[str, int], limit: int) -> None:
    container = build_container(Settings(turn=turn))

    assert container.turn_parts.kwargs["preparing"]().limit == limit
