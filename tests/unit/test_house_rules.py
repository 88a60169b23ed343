"""The house's measurable rules (issue 37): ports stay narrow, constructors stay short, and domain/ and
application/ modules import each other in no circle, type-only imports included.

A port that declares methods has at most ten in all, its roles' included. A union (`MessageStore`,
`Metrics`) declares none of its own: it only names every role at once, for the adapter that implements
them and the wiring, while the use cases depend on the roles.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
PORTS = ROOT / "application" / "ports"
LAYERS = ("domain", "application", "infrastructure", "interfaces")
MAX_PORT_METHODS = 10
MAX_INIT_PARAMETERS = 8


def _base_name(base: ast.expr) -> str:
    """`Protocol`, `typing.Protocol`, `Protocol[T]` and `Reader[T]` by their class's own name."""
    if isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Attribute):
        return base.attr
    return base.id if isinstance(base, ast.Name) else ""


def _protocols(sources: list[str]) -> dict[str, ast.ClassDef]:
    found: dict[str, ast.ClassDef] = {}
    for source in sources:
        for node in ast.parse(source).body:
            if isinstance(node, ast.ClassDef) and "Protocol" in {_base_name(b) for b in node.bases}:
                found[node.name] = node
    return found


def _own_methods(cls: ast.ClassDef) -> set[str]:
    return {node.name for node in cls.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def wide_ports(sources: list[str], limit: int = MAX_PORT_METHODS) -> dict[str, int]:
    """The ports declaring methods that have more than `limit`, counting those of the ports they extend."""
    protocols = _protocols(sources)

    def methods(cls: ast.ClassDef) -> set[str]:
        inherited = [methods(protocols[b]) for b in map(_base_name, cls.bases) if b in protocols]
        return _own_methods(cls).union(*inherited)

    counts = {name: len(methods(cls)) for name, cls in protocols.items() if _own_methods(cls)}
    return {name: count for name, count in counts.items() if count > limit}


def long_constructors(source: str, limit: int = MAX_INIT_PARAMETERS) -> list[tuple[int, int]]:
    """(line, parameters besides self) of each `__init__` taking more than `limit`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            args = node.args
            count = len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs) - 1
            count += (args.vararg is not None) + (args.kwarg is not None)
            if count > limit:
                found.append((node.lineno, count))
    return found


def import_cycles(imports: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for imported in imports.get(module, set()):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:  # the root of a component: it is on the stack down to here
            component = set(stack[stack.index(module):])
            del stack[stack.index(module):]
            if len(component) > 1:
                cycles.append(component)

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return cycles


def _sources(*folders: Path) -> dict[Path, str]:
    return {
        path: path.read_text(encoding="utf-8")
        for folder in folders for path in sorted(folder.rglob("*.py"))
    }


def test_no_port_has_more_than_ten_methods() -> None:
    sources = list(_sources(PORTS).values())
    assert {"MessageStore", "TurnRecord", "Metrics", "TurnMetrics"} <= set(_protocols(sources))
    assert wide_ports(sources) == {}


def test_no_constructor_takes_more_than_eight_parameters() -> None:
    sources = _sources(*(ROOT / layer for layer in LAYERS))
    assert len(sources) > 300
    long = {
        f"{path.relative_to(ROOT)}:{line}": count
        for path, source in sources.items() for line, count in long_constructors(source)
    }
    assert long == {}


def test_domain_and_application_import_each_other_in_no_circle() -> None:
    graph = grimp.build_graph("domain", "application", cache_dir=None)
    imports = {module: graph.find_modules_directly_imported_by(module) for module in graph.modules}
    # read_message imports its port for type checking only: such edges count too
    assert "application.ports.message_reader" in imports["application.conversations.read_message"]
    assert import_cycles(imports) == []


def test_the_checks_catch_a_wide_port_a_long_constructor_and_a_circle() -> None:
    role = "class Reader(Protocol):\n" + "".join(f"    def r{i}(self) -> None: ...\n" for i in range(6))
    wide = "class Wide(Reader, typing.Protocol):\n" + "".join(f"    async def w{i}(self): ...\n" for i in range(5))
    union = "class Union(Reader, Wide, Protocol):\n    '''Every role.'''\n"
    assert wide_ports([role, wide, union]) == {"Wide": 11}

    init = "class Use:\n    def __init__(self, a, b, c, d, e, f, g, /, h, *, i):\n        pass\n"
    assert long_constructors(init) == [(2, 9)]
    assert long_constructors(init.replace(", *, i", "")) == []

    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert import_cycles(graph) == [{"a", "b", "c"}]
