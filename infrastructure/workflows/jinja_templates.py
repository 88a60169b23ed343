"""Templates on Jinja2's immutable sandbox: `StrictUndefined` (a misspelt name fails the node rather
than rendering as nothing), no autoescape (the text goes to models and servers, not to HTML), and
the bounds of `jinja_limits` on size and work. Every Jinja error becomes `NodeFailed` with a
sentence, never a stack trace."""

from __future__ import annotations

import re
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from jinja2 import TemplateSyntaxError, UndefinedError, meta
from jinja2.exceptions import SecurityError, TemplateError

from application.errors import NodeFailed
from application.ports.templates import Templates
from infrastructure.workflows.jinja_limits import BoundedSandbox, TemplateLimitExceeded

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from jinja2 import Template

_COMPILED_CACHE = 512  # distinct templates kept compiled; a workflow has a few dozen
_BRACES = re.compile(r"^\s*\{\{(.*)\}\}\s*$", re.DOTALL)
_UNDEFINED_NAME = re.compile(r"^'([^']*)' is undefined$")
_MISSING_KEY = re.compile(r"has no attribute '([^']*)'$")
_UNSAFE_ATTRIBUTE = re.compile(r"^access to attribute '([^']*)' of")


class JinjaTemplates(Templates):
    def __init__(self, max_output_chars: int = 1_000_000, max_steps: int = 100_000) -> None:
        self._env = BoundedSandbox(max_chars=max_output_chars, max_steps=max_steps)
        self._max_chars = max_output_chars
        self._template: Callable[[str], Template] = lru_cache(maxsize=_COMPILED_CACHE)(self._env.from_string)
        self._expression: Callable[[str], Callable[..., Any]] = lru_cache(maxsize=_COMPILED_CACHE)(
            lambda source: self._env.compile_expression(source, undefined_to_none=False))

    def problem(self, template: str) -> str | None:
        try:
            self._template(template)
        except TemplateSyntaxError as error:
            return _syntax_sentence(error)
        return None

    def names(self, template: str) -> frozenset[str]:
        try:
            return frozenset(meta.find_undeclared_variables(self._env.parse(template)))
        except TemplateSyntaxError:
            return frozenset()  # problem() names the error; a template that does not parse reads nothing

    async def render(self, template: str, scope: Mapping[str, Any]) -> str:
        with _node_failures():
            compiled = self._template(template)
            token = self._env.start_budget()
            try:
                return self._joined(compiled.generate(dict(scope)))
            finally:
                self._env.end_budget(token)

    async def evaluate(self, expression: str, scope: Mapping[str, Any]) -> Any:
        braced = _BRACES.match(expression)
        with _node_failures():
            compiled = self._expression(braced.group(1) if braced else expression)
            token = self._env.start_budget()
            try:
                return compiled(**scope)
            finally:
                self._env.end_budget(token)

    def _joined(self, chunks: Any) -> str:
        """The rendered text, stopped as soon as it passes the size limit."""
        parts: list[str] = []
        size = 0
        for chunk in chunks:
            size += len(chunk)
            if size > self._max_chars:
                raise NodeFailed(f"The template's text is longer than {self._max_chars:,} characters.")
            parts.append(chunk)
        return "".join(parts)


@contextmanager
def _node_failures() -> Iterator[None]:
    """Turns what a template raises into `NodeFailed` with a sentence a workflow's author can act on."""
    try:
        yield
    except NodeFailed:
        raise
    except Exception as error:  # noqa: BLE001 - template code can raise anything; each becomes a sentence
        raise NodeFailed(_sentence(error)) from None


def _sentence(error: Exception) -> str:
    if isinstance(error, TemplateSyntaxError):
        return f"The template does not parse: {_syntax_sentence(error)}"
    if isinstance(error, TemplateLimitExceeded):
        return f"The template was stopped: {error.message}."
    if isinstance(error, UndefinedError):
        return _undefined_sentence(error.message or "")
    if isinstance(error, SecurityError):
        unsafe = _UNSAFE_ATTRIBUTE.match(error.message or "")
        if unsafe:
            return f"Reading `{unsafe.group(1)}` is not allowed in a template."
        return "The template called something templates may not call."
    if isinstance(error, TemplateError):
        return f"The template failed: {error.message}."
    return _runtime_sentence(error)


def _syntax_sentence(error: TemplateSyntaxError) -> str:
    return f"line {error.lineno}: {error.message}"


def _undefined_sentence(message: str) -> str:
    name = _UNDEFINED_NAME.match(message)
    if name:
        return f"The template reads `{name.group(1)}`, which is not defined here: no node or input of that name."
    key = _MISSING_KEY.search(message)
    if key:
        return f"The template reads `{key.group(1)}`, which the value it reads from does not have."
    return "The template reads a value that is not defined."


def _runtime_sentence(error: Exception) -> str:
    if isinstance(error, OverflowError) and "MAX_RANGE" in str(error):
        return "The template was stopped: a range of more than 100,000 numbers is not allowed."
    if isinstance(error, ZeroDivisionError):
        return "The template divides by zero."
    if isinstance(error, TypeError):
        return "The template combines values of kinds that do not go together, such as a number and a text."
    if isinstance(error, RecursionError):
        return "The template calls itself too deeply."
    if isinstance(error, MemoryError | OverflowError):
        return "The template made a value too large to hold."
    if isinstance(error, ValueError):
        return f"The template failed on a value: {error}."
    return "The template failed while rendering."
