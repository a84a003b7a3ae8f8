"""Barcodes in product names against card numbers in free text (decision 0041), for tests/e2e/test_barcodes.py.

Every figure comes from the function the service uses on free text (`contains_card_number`):

- the networks' published test card numbers (tests/member_id_samples.py TEST_CARDS), each written plain, in
  groups of four with spaces and with dashes, inside free texts of several languages (with other numbers
  around them): all must be refused;
- valid EAN-13 (GS1 prefixes of many countries, Japan's JAN 45 and 49 among them), UPC-A and ISBN-13
  barcodes, random but for their prefix and with their check digit, written as POS names write them (one
  group of digits, the printed groups 1-6-6 and 1-5-5-1, a hyphenated ISBN) inside product names with sizes,
  prices and quantities: at most 0.1 % may be refused.

The full-size figures are in decision 0041.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from ingest.card_networks import card_network
from ingest.card_numbers import contains_card_number
from tests.member_id_samples import TEST_CARDS, luhn_completed

SEED = 20261127
MAX_BARCODES_REFUSED = 0.001  # the bound: at most 0.1 % of barcodes refused

# Texts a card number is typed into (payment details, notes in names, order sources): {} is the number.
CARD_TEXTS = (
    "{}",
    "paid with card {}",
    "VISA {} exp 12/29",
    "カード番号 {} 一括",
    "信用卡 {} 刷卡",
    "tarjeta {} aprobada",
    "ref 12 {}",
    "{} / 3 pcs",
    "Kartennr.: {}, Betrag 12,50",
    "order 4411 card {} table 7",
)

# GS1 prefixes (the first digits of an EAN-13) of countries whose goods POS names carry, a few of each
# region's; 45 and 49 are Japan's JAN, 00-13 the UPC-A of the US and Canada written as EAN-13.
GS1_PREFIXES = (
    "00",
    "01",
    "03",
    "06",
    "09",
    "10",
    "13",  # US, Canada
    "30",
    "34",
    "37",  # France
    "40",
    "42",
    "44",  # Germany
    "45",
    "49",  # Japan (JAN)
    "471",  # Taiwan
    "489",  # Hong Kong
    "50",  # United Kingdom
    "54",  # Belgium, Luxembourg
    "57",  # Denmark
    "590",  # Poland
    "600",
    "601",  # South Africa
    "64",  # Finland
    "690",
    "691",
    "692",
    "693",
    "694",
    "695",  # China
    "70",  # Norway
    "73",  # Sweden
    "76",  # Switzerland
    "80",
    "83",  # Italy
    "84",  # Spain
    "87",  # Netherlands
    "880",  # South Korea
    "885",  # Thailand
    "888",  # Singapore
    "893",  # Vietnam
    "899",  # Indonesia
    "90",
    "91",  # Austria
    "93",  # Australia
    "94",  # New Zealand
    "955",  # Malaysia
)

# Product names as POS exports write them: {} is the barcode as written.
NAME_TEXTS = (
    "{}",
    "お茶 500ml JAN {}",
    "{} 緑茶 2L",
    "Cola 330ml EAN {} x2",
    "Chips 150g ({})",
    "EAN:{}",
    "UPC {} 12 oz",
    "{} 1200円",
    "牛奶 1L {} 12.50",
    "Book ISBN {}",
    "Item {} 3 for 10",
    "Pack 6 {} 24",
)


@dataclass
class Tally:
    total: int = 0
    refused: int = 0
    misses: list = field(default_factory=list)

    def count(self, text: str) -> bool:
        """One text checked and counted: whether the service refuses it."""
        self.total += 1
        refused = contains_card_number(text)
        self.refused += refused
        return refused


# --- card numbers ----------------------------------------------------------------------------------


def card_writings(number: str) -> list[str]:
    """A test card number as published, and written plain, by fours with spaces and with dashes."""
    digits = re.sub(r"\D", "", number)
    fours = [digits[i : i + 4] for i in range(0, len(digits), 4)]
    return list(dict.fromkeys([number, digits, " ".join(fours), "-".join(fours)]))


def measure_test_cards() -> Tally:
    tally = Tally()
    for numbers in TEST_CARDS.values():
        for number in numbers:
            for written in card_writings(number):
                for text in CARD_TEXTS:
                    sample = text.format(written)
                    if not tally.count(sample):
                        tally.misses.append(sample)
    return tally


def measure_random_cards(count: int) -> dict[int, Tally]:
    """Random Luhn-valid numbers in a network's range, by length (13 to 19 digits), written plain: what the
    barcode rule lets through (a 13-digit number that is also a valid EAN-13)."""
    rng = random.Random(SEED)
    tallies = {length: Tally() for length in range(13, 20)}
    for length, tally in tallies.items():
        while tally.total < count:
            number = luhn_completed(rng.choice("3456") + _random_digits(rng, length - 2))
            if card_network(number) is None:
                continue
            if not tally.count(number):
                tally.misses.append(number)
    return tallies


# --- barcodes --------------------------------------------------------------------------------------


def gs1_completed(partial: str) -> str:
    """partial with its GS1 check digit appended (weights 3 and 1 alternating from the right of partial)."""
    total = sum(int(char) * (3 if position % 2 == 0 else 1) for position, char in enumerate(reversed(partial)))
    return partial + str((10 - total % 10) % 10)


def _random_digits(rng: random.Random, count: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(count))


def ean13(rng: random.Random) -> str:
    prefix = rng.choice(GS1_PREFIXES)
    return gs1_completed(prefix + _random_digits(rng, 12 - len(prefix)))


def upc_a(rng: random.Random) -> str:
    return gs1_completed(rng.choice("0123456789") + _random_digits(rng, 10))


def isbn13(rng: random.Random) -> str:
    return gs1_completed(rng.choice(("978", "979")) + _random_digits(rng, 9))


def barcode_writings(kind: str, code: str, rng: random.Random) -> str:
    """The barcode as a name writes it: mostly one group of digits, else its printed groups (EAN-13 1-6-6,
    UPC-A 1-5-5-1) or, for an ISBN, hyphenated groups (978-4-06-519981-7)."""
    if rng.random() < 0.7:
        return code
    if kind == "ISBN-13":
        registrant = rng.randint(1, 5)
        return f"{code[:3]}-{code[3]}-{code[4 : 4 + registrant]}-{code[4 + registrant : 12]}-{code[12]}"
    if kind == "UPC-A":
        return f"{code[0]} {code[1:6]} {code[6:11]} {code[11]}"
    return f"{code[0]} {code[1:7]} {code[7:]}"


def jan(rng: random.Random) -> str:
    return gs1_completed(rng.choice(("45", "49")) + _random_digits(rng, 10))


BARCODE_KINDS = {"EAN-13": ean13, "JAN": jan, "UPC-A": upc_a, "ISBN-13": isbn13}


def measure_barcodes(count: int) -> dict[str, Tally]:
    """count barcodes of each kind, each in a product name."""
    tallies = {}
    for kind, make in BARCODE_KINDS.items():
        rng = random.Random(f"{SEED}-{kind}")
        tally = Tally()
        for _ in range(count):
            written = barcode_writings(kind, make(rng), rng)
            name = rng.choice(NAME_TEXTS).format(written)
            if tally.count(name):  # a barcode refused as a card number is a miss here
                tally.misses.append(name)
        tallies[kind] = tally
    return tallies
