"""Exact money: decimal strings on the wire, integer minor units inside, never float.

The minor-unit exponent of each currency comes from ISO 4217 data (the iso4217 package).
"""

from __future__ import annotations

import functools

from iso4217 import Currency


@functools.cache
def currency_exponent(code: str) -> int | None:
    """Minor-unit places of an ISO 4217 currency (USD 2, JPY 0); None if not a money currency."""
    if len(code) != 3 or not code.isascii() or not code.isupper():
        return None
    try:
        return Currency(code).exponent
    except ValueError:
        return None


def places_of(amount: str) -> int:
    dot = amount.find(".")
    return 0 if dot < 0 else len(amount) - dot - 1


def minor_units(amount: str, exponent: int) -> int | None:
    """'12.50' with exponent 2 -> 1250, or None when the amount does not carry exactly `exponent` places:
    the places check and the conversion in one step. The caller has checked the decimal format."""
    if exponent:
        if len(amount) <= exponent or amount[-exponent - 1] != ".":
            return None
        return int(amount.replace(".", ""))
    return None if "." in amount else int(amount)


def to_minor_units(amount: str, exponent: int) -> int:
    """'12.50' with exponent 2 -> 1250. The caller has checked the format and the places."""
    return int(amount.replace(".", "")) if exponent else int(amount)


def format_minor_units(value: int, exponent: int) -> str:
    """1250 with exponent 2 -> '12.50'; -5 with exponent 2 -> '-0.05'."""
    if exponent == 0:
        return str(value)
    sign = "-" if value < 0 else ""
    whole, frac = divmod(abs(value), 10**exponent)
    return f"{sign}{whole}.{frac:0{exponent}d}"


def places_message(currency: str, exponent: int) -> str:
    if exponent == 0:
        return f"{currency} amounts have no decimal places (for example 1200)"
    example = format_minor_units(1250 * 10 ** (exponent - 2) if exponent >= 2 else 125, exponent)
    return f"{currency} amounts have exactly {exponent} decimal places (for example {example})"


# The amounts a trade record carries at its top level, in the wire's order: read by ingest, exported by export/.
RECORD_AMOUNTS = (
    "subtotal_amount",
    "discount_amount",
    "tax_amount",
    "service_charge_amount",
    "tip_amount",
    "rounding_amount",
    "total_amount",
)
