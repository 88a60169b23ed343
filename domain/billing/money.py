"""Amounts of money as people read them.

A model call costs fractions of a cent: a fixed number of decimals shows 0.00001 USD as "0.0000",
which reads as free. `usd` keeps four significant digits instead (at least cents, at most
`MAX_DECIMALS` places), so a small amount stays readable and a large one stays short.
"""

from __future__ import annotations

import math

SIGNIFICANT = 4
MIN_DECIMALS = 2
MAX_DECIMALS = 12  # below a trillionth of a dollar is nothing worth showing


def usd(amount: float) -> str:
    """`amount` as a plain number: 12.35, 0.0018, 0.00001, 1234567.00 (no currency sign, no exponent)."""
    if amount == 0 or not math.isfinite(amount):
        return f"{abs(amount):.{MIN_DECIMALS}f}"
    magnitude = math.floor(math.log10(abs(amount)))
    decimals = min(max(SIGNIFICANT - 1 - magnitude, MIN_DECIMALS), MAX_DECIMALS)
    shown = f"{amount:.{decimals}f}"
    whole, _, fraction = shown.partition(".")
    fraction = fraction.rstrip("0").ljust(MIN_DECIMALS, "0")  # 0.001800 → 0.0018, but 5.00 stays 5.00
    return f"{whole}.{fraction}"
