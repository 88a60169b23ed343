"""The docs cite only what exists: every repository path and every code name that README.md and
docs/*.md put in backticks is in the repository, and no file cites a place outside it.

It reads the repository's own files, as tests/unit/domain/test_domain_imports_stdlib_only.py does.
Rules, not lists, tell code from prose inside backticks:

- a path is a span of path characters with a file extension, a trailing `/`, or a first folder at
  the repository's root (`tests/faults`); other `a/b` spans are protocol methods and media types
  (`tasks/get`, `text/plain`). One that begins with `/` is a route, `./` or `~` a place on the
  user's machine. A path is found from the repository's root, or as the end of a repository path
  (`persistence/errors.py` under `infrastructure/`, a bare module name anywhere), so a page may name
  a module by the part its context leaves out;
- a code name is a CamelCase word with two humps or more, a `Class.attribute`, a dotted path into one
  of the four layers or `tests`, or a `call()`. The code must define it (`class`, `def`, an
  assignment, a field), import it, or spell it as a string; a CamelCase word may also be a library's
  or a protocol's name that the code's text speaks of (`EventSource`, A2A's `SendMessage`), but an
  attribute or a call may not. Lower-case dotted words that start elsewhere
  are settings (`memory.user_scope`), and snake_case words without `()` are fields, events and
  settings; neither is checked;
- a test is `path::name`: its file must define a test of that name (the reliability page's proofs).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

THIS_FILE = Path(__file__).resolve()  # its own examples of dangling names are not the code's words
ROOT = THIS_FILE.parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
LAYERS = ("domain", "application", "infrastructure", "interfaces", "tests")
SKIPPED_DIRS = {"__pycache__", "site", "data", "node_modules"}
EXTENSIONS = {"py", "md", "yml", "yaml", "toml", "js", "css", "html", "json", "mako", "txt", "ini", "cfg"}

FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
PATH = re.compile(r"[\w.-]+(?:/[\w.-]*)*")
CAMEL = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z]+[a-z0-9]*)+")
CALL = re.compile(r"([A-Za-z_]\w*)\(\)")
DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?")
MODULE_RUN = re.compile(r"python3? -m ([\w.]+)")
TEST_ID = re.compile(r"([\w/.-]+\.py)::(\w+)")
OUTSIDE = re.compile(r"\.\./shared|/work/")


def repo_files() -> Iterator[Path]:
    """The repository's own files: no virtual environment, build output or tool cache (pruned as the
    walk goes, so a virtual environment's hundred thousand files are never listed)."""
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = [d for d in subfolders if not _skipped(d)]
        for name in files:
            yield Path(folder) / name


def _skipped(folder: str) -> bool:
    return folder in SKIPPED_DIRS or folder.endswith(".egg-info") or folder.startswith(".") and folder != ".ci"


@cache
def repo_paths() -> frozenset[str]:
    files = {p.relative_to(ROOT).as_posix() for p in repo_files()}
    folders = {str(Path(f).parent.as_posix()) + "/" for f in files}
    every_parent = {"/".join(f.split("/")[:i]) + "/" for f in folders for i in range(1, f.count("/") + 1)}
    return frozenset(files | every_parent)


@cache
def code_names() -> frozenset[str]:
    """Every name the code defines, imports or spells as a string: classes, functions, assignments,
    fields, aliases, and a library's names the code looks up (`getattr(module, "get_model_path")`)."""
    names: set[str] = set()
    for path in repo_files():
        if path.suffix != ".py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[-1])
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                names.add(node.value)
    return frozenset(names)


@cache
def words_of_the_code() -> frozenset[str]:
    """Every word of the code's text, its comments and docstrings included."""
    code = [p.read_text(encoding="utf-8") for p in repo_files() if p.suffix in {".py", ".js"} and p != THIS_FILE]
    return frozenset(w for text in code for w in re.findall(r"\w+", text))


def cited_spans(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [span.strip() for span in SPAN.findall(text)]


def looks_like_path(span: str) -> bool:
    if not PATH.fullmatch(span) or span.startswith((".", "~")):
        return False
    if "." in span and looks_like_file(span):
        return True
    return span.endswith("/") or "/" in span and (ROOT / span.split("/")[0]).is_dir()


def path_exists(span: str) -> bool:
    paths = repo_paths()
    wanted = {span, span.rstrip("/") + "/"}
    return bool(wanted & paths) or any(p.endswith(tuple("/" + w for w in wanted)) for p in paths)


def missing_name(span: str) -> str | None:
    """The part of a code name that the code does not define, or None when it all exists."""
    names = code_names()
    spoken = names | words_of_the_code()  # a CamelCase name may be a library's the code speaks of
    span = span.removesuffix("()")
    if "." not in span:
        return None if span in (spoken if CAMEL.fullmatch(span) else names) else span
    head, *rest = span.split(".")
    if head in LAYERS:  # a dotted path into the code: its module, then the name in it
        module = "/".join([head, *rest[:-1]])
        if not (ROOT / f"{module}.py").exists() and not (ROOT / module).is_dir():
            return module
        inside = ROOT / module / rest[-1]
        return None if rest[-1] in names or inside.is_dir() or inside.with_suffix(".py").exists() else span
    if CAMEL.fullmatch(head) or head in names and head[0].isupper():
        return head if head not in spoken else next((part for part in rest if part not in names), None)
    return None  # a setting's dotted name or a library's module


def is_code_name(span: str) -> bool:
    if CAMEL.fullmatch(span) or CALL.fullmatch(span):
        return True
    if not DOTTED.fullmatch(span) or looks_like_file(span):
        return False
    head = span.split(".")[0]
    return head in LAYERS or CAMEL.fullmatch(head) is not None


def looks_like_file(span: str) -> bool:
    return span.rsplit(".", 1)[-1] in EXTENSIONS


def defines_test(path: str, name: str) -> bool:
    test_file = ROOT / path
    defined = re.compile(rf"^(async )?def {name}\(", re.MULTILINE)
    return test_file.is_file() and defined.search(test_file.read_text(encoding="utf-8")) is not None


def dangling_citations(page: Path) -> list[str]:
    dangling: list[str] = []
    for span in cited_spans(page):
        if match := TEST_ID.fullmatch(span):
            dangling += [] if defines_test(*match.groups()) else [f"test {span}"]
            continue
        for module in MODULE_RUN.findall(span):
            if not module.endswith(".") and not path_exists(module.replace(".", "/") + ".py"):
                dangling.append(f"module {module}")
        if looks_like_path(span):
            if not path_exists(span):
                dangling.append(f"path {span}")
        elif is_code_name(span) and (missing := missing_name(span)):
            dangling.append(f"name {missing} (in `{span}`)")
    return dangling


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_and_code_name_a_page_cites_exists_in_the_repository(page: Path) -> None:
    assert dangling_citations(page) == []


def test_no_file_of_the_repository_cites_a_place_outside_it() -> None:
    text_files = [p for p in repo_files() if p.suffix[1:] in EXTENSIONS and p != THIS_FILE]
    citing = [p.relative_to(ROOT).as_posix() for p in text_files if OUTSIDE.search(p.read_text(encoding="utf-8"))]
    assert citing == []


def test_the_rules_tell_a_dangling_citation_from_one_that_exists(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "`application/chat_turn/agent_loop.py` `tests/faults/` `AgentLoop` `AgentLoop.run` `best_effort()`\n"
        "`application/chat_turn/no_such_loop.py` `NoSuchLoop` `AgentLoop.no_such_step` `no_such_helper()`\n"
        "`/api/chat` `memory.user_scope` `agent_message` `MEMAGENT_TURN__TIMEOUT`\n"
        "`tests/faults/test_worker_killed.py::test_the_start_up_sweep_ends_a_turn_left_running_by_a_killed_server`\n"
        "`tests/faults/test_worker_killed.py::test_a_worker_that_never_dies`\n"
        "```\n`NotCitedInAFence`\n```\n",
    )
    assert dangling_citations(page) == [
        "path application/chat_turn/no_such_loop.py",
        "name NoSuchLoop (in `NoSuchLoop`)",
        "name no_such_step (in `AgentLoop.no_such_step`)",
        "name no_such_helper (in `no_such_helper()`)",
        "test tests/faults/test_worker_killed.py::test_a_worker_that_never_dies",
    ]
