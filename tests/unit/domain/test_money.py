"""Money as people read it: a small amount keeps its significant digits instead of reading as free."""

from __future__ import annotations

import pytest

from domain.billing.money import usd


@pytest.mark.parametrize(
    ("amount", "shown"),
    [
        (0.00001, "0.00001"),  # "0.0000" with four fixed decimals: it read as free
        (0.0000385, "0.0000385"),
        (0.000123456, "0.0001235"),
        (0.0018, "0.0018"),
        (0.1, "0.10"),
        (1.0, "1.00"),
        (12.3456, "12.35"),
        (1_234_567.891, "1234567.89"),
        (0.99996, "1.00"),
        (3e-9, "0.000000003"),
    ],
)
def test_an_amount_keeps_four_significant_digits_and_at_least_cents(amount: float, shown: str) -> None:
    assert usd(amount) == shown


def test_nothing_and_less_than_a_trillionth_read_as_zero_without_an_exponent() -> None:
    assert [usd(0.0), usd(-0.0), usd(1e-13)] == ["0.00", "0.00", "0.00"]
