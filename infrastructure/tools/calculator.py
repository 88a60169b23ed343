"""Safe arithmetic: the expression is parsed with `ast` and walked over a whitelist of nodes.

Nothing is ever evaluated by Python itself (no `eval`). Numbers, + - * / // % **, unary +/-,
parentheses, the constants `pi`, `e`, `tau` and a few functions of `math` are allowed; every
intermediate result is bounded (integers to MAX_INT_BITS bits, floats must be finite), as are
the expression's length, its number of nodes and an exponent's size, so no input can make it
spin or eat memory.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import TYPE_CHECKING, Any

from infrastructure.errors import CalculationError

if TYPE_CHECKING:
    from collections.abc import Callable

MAX_LENGTH = 500
MAX_NODES = 200
MAX_EXPONENT = 1000
MAX_INT_BITS = 4096

Number = int | float


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}
_FUNCTIONS: dict[str, Callable[..., Number]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "floor": math.floor,
    "ceil": math.ceil,
}
_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}


def calculate(expression: str) -> Number:
    """The value of an arithmetic expression; raises `CalculationError` with a plain reason."""
    text = expression.strip().replace("^", "**").replace("×", "*").replace("÷", "/")
    if not text:
        raise CalculationError("the expression is empty")
    if len(text) > MAX_LENGTH:
        raise CalculationError(f"the expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise CalculationError("the expression is not valid arithmetic") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculationError(f"the expression has more than {MAX_NODES} parts")
    try:
        return _check(_evaluate(tree.body))
    except ZeroDivisionError:
        raise CalculationError("division by zero") from None
    except OverflowError:
        raise CalculationError("the result is too large") from None
    except RecursionError:
        raise CalculationError("the expression is nested too deeply") from None


def _evaluate(node: ast.expr) -> Number:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise CalculationError(f"{node.value!r} is not a number")
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        try:
            value = _BINARY[type(node.op)](left, right)
        except (TypeError, ValueError):
            raise CalculationError(f"cannot compute {left!r} {_SYMBOLS[type(node.op)]} {right!r}") from None
        return _check(value)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _check(_UNARY[type(node.op)](_evaluate(node.operand)))
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise CalculationError(f"unknown name {node.id!r}; constants are {', '.join(_CONSTANTS)}")
    if isinstance(node, ast.Call):
        return _call(node)
    raise CalculationError(f"{type(node).__name__} is not allowed; use numbers, + - * / // % ** and ( )")


def _call(node: ast.Call) -> Number:
    if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
        known = ", ".join(_FUNCTIONS)
        raise CalculationError(f"unknown function; the functions are {known}")
    if node.keywords or not 1 <= len(node.args) <= 8:
        raise CalculationError(f"{node.func.id}() takes 1 to 8 plain arguments")
    arguments = [_evaluate(a) for a in node.args]
    try:
        value = _FUNCTIONS[node.func.id](*arguments)
    except (TypeError, ValueError):
        raise CalculationError(f"{node.func.id}() is not defined for {', '.join(map(repr, arguments))}") from None
    return _check(value)


def _check_power(base: Number, exponent: Number) -> None:
    if abs(exponent) > MAX_EXPONENT:
        raise CalculationError(f"exponents are limited to {MAX_EXPONENT}")
    whole = isinstance(base, int) and isinstance(exponent, int) and exponent > 0
    if whole and max(int(base).bit_length(), 1) * exponent > MAX_INT_BITS + 64:
        raise CalculationError("the result is too large")


def _check(value: Number) -> Number:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalculationError("the result is not a real number")
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise CalculationError("the result is too large")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculationError("the result is not a finite number")
    return value


def format_number(value: Number) -> str:
    """An integer exactly; a float with up to 15 significant digits (0.1 + 0.2 -> 0.3)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value) if isinstance(value, int) else format(value, ".15g")
