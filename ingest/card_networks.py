"""Issuer ranges of the payment card networks whose card numbers HQ must never store (decision 0041).

No well-kept package on PyPI holds these ranges (python-stdnum has only the Luhn check; `creditcard`
1.0.2 dates from 2017 and `Card-Validator` 1.0.0 is a one-off), so they are kept here as data.

Sources, as published by the networks and collected in Wikipedia's "Payment card number" IIN table
(checked 2026-05): Visa (4), Mastercard (51-55 and the 2-series 2221-2720 it opened in 2017),
American Express (34, 37), Discover Global Network's IIN range table (6011, 622126-622925, 644-649,
65; Diners Club International 300-305, 3095, 36, 38-39), JCB (3528-3589), UnionPay (62), and
Mastercard's Maestro ranges (50, 56-69; Adyen's Maestro test cards start 6000, 6771 and 6799, outside
the shorter lists some sites give). These are the networks of the PCI Security Standards Council
(card data any merchant must protect). Regional schemes (Mir, RuPay, Elo, Troy...) are not listed: the
issue names these eight; most of their numbers fall in the 6 series (Maestro) anyway.

Each range is (first prefix, last prefix) of equal length; lengths are the card number's digit counts.
"""

from __future__ import annotations

from typing import NamedTuple


class CardNetwork(NamedTuple):
    name: str
    ranges: tuple[tuple[str, str], ...]
    lengths: tuple[int, ...]


def _one(prefix: str) -> tuple[str, str]:
    return prefix, prefix


CARD_NETWORKS: tuple[CardNetwork, ...] = (
    CardNetwork("Visa", (_one("4"),), (13, 16, 19)),
    CardNetwork("Mastercard", (("51", "55"), ("2221", "2720")), (16,)),
    CardNetwork("American Express", (_one("34"), _one("37")), (15,)),
    CardNetwork("Discover", (_one("6011"), ("622126", "622925"), ("644", "649"), _one("65")), tuple(range(16, 20))),
    CardNetwork("JCB", (("3528", "3589"),), tuple(range(16, 20))),
    CardNetwork("UnionPay", (_one("62"),), tuple(range(16, 20))),
    CardNetwork("Diners Club", (("300", "305"), _one("3095"), _one("36"), ("38", "39")), tuple(range(14, 20))),
    CardNetwork("Maestro", (_one("50"), ("56", "69")), tuple(range(13, 20))),  # Maestro also has 12 digits
)


def card_network(digits: str) -> str | None:
    """The network whose issuer range and lengths hold this number (ASCII digits), or None."""
    for network in CARD_NETWORKS:
        if len(digits) in network.lengths and any(
            first <= digits[: len(first)] <= last for first, last in network.ranges
        ):
            return network.name
    return None
