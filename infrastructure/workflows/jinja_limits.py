"""A Jinja2 sandbox that also bounds the work and memory one render may take.

Jinja's own sandbox stops reading `__class__` and calling unsafe methods, but not resource abuse
(its documentation says so): `'x' * 10**9`, `9**9**9`, `'x'.ljust(10**9)`, or loops nested until
the process spends minutes in one template. Templates run inside the API process, so each
amplifying operation is checked *before* it allocates, and every loop iteration and call spends one
step of a per-render budget. `range` stays capped by the sandbox (100,000 items).

What stays possible: a structure sharing references (`[a, a]` repeated) whose text, once made, is
huge; the output cap then stops the render, after Python has built the text.
"""

from __future__ import annotations

import math
import re
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jinja2 import StrictUndefined, nodes, pass_eval_context
from jinja2.compiler import CodeGenerator
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from jinja2 import Environment
    from jinja2.compiler import Frame
    from jinja2.nodes import EvalContext
    from jinja2.runtime import Context

MAX_INT_BITS = 100_000  # a number of about 30,000 digits: far past any real use, cheap to compute

# A width or precision in a %-format (`%*d`, `%999999999d`) or a {}-format spec (`{:>999999999}`).
_PERCENT_WIDTH = re.compile(r"%[#0 +\-]*(\*|\d+)?(?:\.(\*|\d+))?")
_BRACE_SPEC = re.compile(r"\{[^{}]*:([^{}]*)(\{?)")


class TemplateLimitExceeded(SecurityError):
    """A render went past one of its limits; the message says which, as a sentence."""


@dataclass(slots=True)
class _Budget:
    steps_left: int


_budget: ContextVar[_Budget | None] = ContextVar("template_budget", default=None)


class _BudgetedCodeGenerator(CodeGenerator):
    """Compiles every loop so that each iteration spends a step, and `~` so its text is bounded."""

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        if not _calls(node.iter, "budgeted"):
            node.iter = _env_call(self.environment, "budgeted", node.iter)
        super().visit_For(node, frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        node.nodes = [arg if _calls(arg, "bounded_value") else _env_call(self.environment, "bounded_value", arg)
                      for arg in node.nodes]
        self.write("environment.bounded(")
        super().visit_Concat(node, frame)
        self.write(")")


def _env_call(environment: Environment, method: str, arg: nodes.Node) -> nodes.Call:
    """`environment.<method>(arg)` as a node: Jinja allows no custom node types."""
    call = nodes.Call(nodes.EnvironmentAttribute(method), [arg], [], None, None, lineno=arg.lineno)
    call.set_environment(environment)
    return call


def _calls(node: nodes.Node, method: str) -> bool:
    return (isinstance(node, nodes.Call) and isinstance(node.node, nodes.EnvironmentAttribute)
            and node.node.name == method)


class BoundedSandbox(ImmutableSandboxedEnvironment):
    code_generator_class = _BudgetedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, max_chars: int, max_steps: int) -> None:
        super().__init__(undefined=StrictUndefined, autoescape=False, cache_size=0, finalize=self.bounded_value)
        self.max_chars = max_chars
        self.max_steps = max_steps
        del self.globals["lipsum"]  # lorem ipsum of any length: of no use in a workflow
        for name in ("center", "indent", "batch", "slice", "format", "replace", "string", "join", "tojson", "pprint"):
            self.filters[name] = _bounded_filter(self, name, self.filters[name])

    def getattr(self, obj: Any, attribute: str) -> Any:
        # JSON objects are dicts: `l1.json.items` means the key `items`, not the method `dict.items`.
        if isinstance(obj, dict) and attribute in obj:
            return obj[attribute]
        return super().getattr(obj, attribute)

    def start_budget(self) -> object:
        """Opens a render's step budget; pass the token to `end_budget`."""
        return _budget.set(_Budget(self.max_steps))

    def end_budget(self, token: object) -> None:
        _budget.reset(token)  # type: ignore[arg-type]

    def spend(self) -> None:
        budget = _budget.get()
        if budget is None:
            return
        budget.steps_left -= 1
        if budget.steps_left < 0:
            raise TemplateLimitExceeded(
                f"the template did more than {self.max_steps:,} steps (loop iterations and calls)")

    def budgeted(self, iterable: Iterable[Any]) -> Iterator[Any]:
        for item in iterable:
            self.spend()
            yield item

    def bounded(self, text: str) -> str:
        self.check_size(len(text))
        return text

    def bounded_value(self, value: Any) -> Any:
        """`value`, once sure its text is not over the limit: a list holding itself by reference
        twice, forty times over, is small in memory and endless as text."""
        self.check_size(_text_weight(value, self.max_chars))
        return value

    def check_size(self, size: int) -> None:
        if size > self.max_chars:
            raise TemplateLimitExceeded(f"the template made a value longer than {self.max_chars:,} characters")

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            self._check_repeat(left, right)
        elif operator == "**":
            _check_power(left, right)
        elif operator == "%" and isinstance(left, str):
            self.check_format(left)
            self.bounded_value(right)
        result = super().call_binop(context, operator, left, right)
        if operator == "+" and isinstance(result, str | bytes | list | tuple):
            self.check_size(len(result))
        return result

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        __self.spend()
        owner = getattr(getattr(__obj, "__wrapped__", __obj), "__self__", None)
        if isinstance(owner, str | bytes):
            __self._check_text_method(owner, __obj.__name__, args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def _check_repeat(self, left: Any, right: Any) -> None:
        if isinstance(left, int) and isinstance(right, int):
            if left.bit_length() + right.bit_length() > MAX_INT_BITS:
                raise TemplateLimitExceeded("the template made a number too large to compute")
            return
        count, sequence = (left, right) if isinstance(left, int) else (right, left)
        if isinstance(count, int) and isinstance(sequence, str | bytes | list | tuple):
            self.check_size(len(sequence) * max(count, 0))

    def check_format(self, template: str) -> None:
        for match in _PERCENT_WIDTH.finditer(template):
            self._check_widths(match.groups())
        for spec, nested in _BRACE_SPEC.findall(template):
            if nested:
                raise TemplateLimitExceeded("a width given by an argument (`{:{}}`) is not allowed in a template")
            self._check_widths(re.findall(r"\d+", spec))

    def _check_widths(self, widths: Iterable[str | None]) -> None:
        for width in widths:
            if width == "*":
                raise TemplateLimitExceeded("a width given by an argument (`%*d`) is not allowed in a template")
            if width and (len(width) > 9 or int(width) > self.max_chars):
                self.check_size(self.max_chars + 1)

    def _check_text_method(self, text: str | bytes, method: str, args: tuple[Any, ...],
                           kwargs: dict[str, Any]) -> None:
        if method in {"ljust", "rjust", "center", "zfill"} and args and isinstance(args[0], int):
            self.check_size(args[0])
        elif method == "expandtabs":
            tab = args[0] if args and isinstance(args[0], int) else 8
            self.check_size(len(text) + _occurrences(text, "\t" if isinstance(text, str) else b"\t") * tab)
        elif method == "replace" and len(args) >= 2:
            self.check_size(len(text) + (_occurrences(text, args[0]) + 1) * len(args[1]))
        elif method in {"format", "format_map"} and isinstance(text, str):
            self.check_format(text)
            self.bounded_value((args, kwargs))
        elif method == "translate":
            raise TemplateLimitExceeded("`translate` is not allowed in a template; use `replace`")


def _occurrences(text: str | bytes, part: Any) -> int:
    if isinstance(text, str) and isinstance(part, str):
        return text.count(part)
    if isinstance(text, bytes) and isinstance(part, bytes):
        return text.count(part)
    return 0  # a part of another type: the call itself raises


def _check_power(base: Any, exponent: Any) -> None:
    huge = (isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1 and exponent > 0
            and exponent * math.log2(abs(base)) > MAX_INT_BITS)
    if huge:
        raise TemplateLimitExceeded("the template made a number too large to compute")


def _text_weight(value: Any, limit: int) -> int:
    """About how many characters `value` becomes as text, counted only until past `limit`."""
    weight = 0
    pending = [value]
    while pending and weight <= limit:
        item = pending.pop()
        if isinstance(item, str | bytes):
            weight += len(item) + 2
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
            weight += 2
        elif isinstance(item, list | tuple | set | frozenset):
            pending.extend(item)
            weight += 2
        else:
            weight += 8  # a number, a boolean, None: a few characters
    return weight


def _bounded_filter(env: BoundedSandbox, name: str, apply: Callable[..., Any]) -> Callable[..., Any]:
    """Jinja's filter `name`, refusing arguments that would make its result huge before it runs."""
    reads_eval_context = name == "replace"  # Jinja's `replace` asks whether autoescape is on

    @pass_eval_context
    def bounded(eval_ctx: EvalContext, value: Any, *args: Any, **kwargs: Any) -> Any:
        env.spend()
        if name in {"center", "indent"}:
            width = args[0] if args else kwargs.get("width", 0)
            if isinstance(width, int):
                env.check_size(len(str(value).splitlines() or [""]) * width)
        elif name in {"batch", "slice"} and args and isinstance(args[0], int):
            env.check_size(args[0])
        elif name == "format":
            env.check_format(str(value))
            env.bounded_value((args, kwargs))
        elif name in {"string", "join", "tojson", "pprint"}:
            env.bounded_value(value)
        elif name == "replace" and len(args) >= 2:
            text = str(value)
            env.check_size(len(text) + (text.count(str(args[0])) + 1) * len(str(args[1])))
        if reads_eval_context:
            return apply(eval_ctx, value, *args, **kwargs)
        return apply(value, *args, **kwargs)

    return bounded
