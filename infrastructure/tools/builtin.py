"""The built-in tools: `current_time` and `calculator`, declared on a ToolRegistry.

An agent enables them by name (`AgentConfig.tool_names`, `MEMAGENT_AGENT__TOOLS`).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from application.errors import ToolCallFailed
from domain.tools.calls import ToolFailure
from infrastructure.errors import CalculationError
from infrastructure.tools.calculator import calculate, format_number
from infrastructure.tools.registry import BuiltinTool, ToolRegistry


async def current_time(timezone: str = "UTC") -> str:
    """The current date and time in a given IANA timezone (default UTC).

    Args:
        timezone: IANA name, e.g. Europe/Paris or America/New_York.
    """
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ToolCallFailed(
            ToolFailure.INVALID_ARGUMENTS, f"unknown timezone {timezone[:64]!r}; use an IANA name like Europe/Paris"
        ) from error
    now = datetime.now(UTC).astimezone(zone)
    return json.dumps({"timezone": timezone, "datetime": now.isoformat(), "day_of_week": now.strftime("%A")})


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression exactly (integers) or to 15 significant digits.

    Args:
        expression: Numbers with + - * / // % ** and parentheses, the constants pi, e and tau, and the
            functions abs, round, min, max, sqrt, exp, log, log10, log2, sin, cos, tan, asin, acos, atan,
            floor and ceil, e.g. "(1250 * 0.2) + sqrt(16)".
    """
    try:
        value = calculate(expression)
    except CalculationError as error:
        raise ToolCallFailed(ToolFailure.INVALID_ARGUMENTS, str(error)) from None
    return json.dumps({"expression": expression, "result": format_number(value)})


CURRENT_TIME = BuiltinTool.from_function(current_time)
CALCULATOR = BuiltinTool.from_function(calculator)
BUILTIN_TOOLS = (CURRENT_TIME, CALCULATOR)


def builtin_tools() -> ToolRegistry:
    """A registry of every built-in tool (a fresh one, so tests may add their own)."""
    return ToolRegistry(BUILTIN_TOOLS)
