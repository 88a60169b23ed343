"""domain/ imports the standard library and nothing else (docs/ARCHITECTURE.md §1)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import domain

DOMAIN_DIR = Path(domain.__file__).parent
SOURCES = sorted(DOMAIN_DIR.rglob("*.py"))


def imported_top_level_modules(code: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # a relative import stays inside domain
                found.add("domain")
            elif node.module:
                found.add(node.module.split(".")[0])
    return found


def foreign_imports(code: str) -> set[str]:
    return {
        name for name in imported_top_level_modules(code)
        if name != "domain" and name not in sys.stdlib_module_names
    }


def test_domain_has_modules_to_check() -> None:
    names = {p.name for p in SOURCES}
    assert {"__init__.py", "messages.py", "window.py", "prompt.py"} <= names


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(DOMAIN_DIR)))
def test_domain_module_imports_only_the_standard_library(source: Path) -> None:
    foreign = foreign_imports(source.read_text(encoding="utf-8"))
    assert not foreign, f"domain/{source.name} imports non-standard-library modules: {sorted(foreign)}"


def test_the_check_catches_third_party_and_outer_layer_imports() -> None:
    code = (
        "import json, os.path\n"
        "from __future__ import annotations\n"
        "from domain.errors import DomainError\n"
        "from . import ids\n"
        "import pydantic\n"
        "from sqlalchemy.orm import Session\n"
        "from application.ports import MessageStore\n"
        "def late():\n"
        "    import redis\n"
    )
    assert foreign_imports(code) == {"pydantic", "sqlalchemy", "application", "redis"}
