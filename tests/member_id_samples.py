"""Samples that tell personal and card data from ordinary ids (decisions 0040 and 0041), for
tests/e2e/test_data_protection.py and tests/barcode_samples.py. Every figure comes from the functions the
service uses on a member_id or free text:

- sequence numbers (random starting points, 6 to 12 digits, with and without leading zeros) in stores
  of several countries: how many are refused (must be 0) and how many get MEMBER_ID_MAY_BE_PHONE;
- the example numbers phonenumbers holds for every region and number type, in its INTERNATIONAL and
  NATIONAL formats, as the member_id of a store of that region: how many are refused, and the misses;
- random 18-digit strings in a CN store: how many read as a resident ID (the one ID refused as bare
  digits);
- the networks' published test card numbers (all refused) and random Luhn-valid numbers of 13 to 19
  digits outside the networks' ranges (all accepted).

The full-size figures are in decisions 0040 and 0041.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

import phonenumbers
from phonenumbers import PhoneNumberFormat, PhoneNumberType

from ingest.card_networks import card_network
from ingest.card_numbers import contains_card_number
from ingest.data_protection import personal_data_kind
from ingest.personal_data import is_national_id, may_be_phone_number

SEQUENCE_COUNTRIES = ("US", "DE", "GB", "JP", "TW", "CN", "KR", "BR", "FR", "IN")
SEED = 20261122

# Published test card numbers: Stripe (docs.stripe.com/testing), Adyen (docs.adyen.com test card
# numbers and its POS test cards), Braintree, and the PayPal/Worldpay lists the issue quotes.
TEST_CARDS = {
    "Visa": (
        "4111111111111111",
        "4012888888881881",
        "4242424242424242",
        "4000056655665556",
        "4111 1111 4555 1142",
        "4988 4388 4388 4305",
        "4222222222222",
    ),
    "Mastercard": (
        "5555555555554444",
        "2223003122003222",
        "5105105105105100",
        "5200828282828210",
        "5555 3412 4444 1115",
        "2222 4000 7000 0005",
        "5413 3300 8909 9999",
    ),
    "American Express": ("378282246310005", "371449635398431", "3700 0000 0000 002", "3700 0000 0100 018"),
    "Discover": ("6011111111111117", "6011000990139424", "6445 6445 6445 6445", "6011 6011 6011 6611"),
    "JCB": ("3530111333300000", "3566002020360505", "3569 9900 1009 5841"),
    "Diners Club": ("36227206271667", "3056930009020004", "3600 6666 3333 44", "38520000023237"),
    "UnionPay": ("6200000000000005", "6205500000000000004", "6243 0300 0000 0001", "6250 9460 0000 0016"),
    "Maestro": (
        "6759649826438453",
        "6304000000000000",
        "6771 7980 2100 0008",
        "6799 9989 0000 0099 990",
        "6000 0707 3616 9237 003",
    ),
}


@dataclass
class Tally:
    total: int = 0
    refused: int = 0
    warned: int = 0
    misses: list = field(default_factory=list)


def member_id_refused(value: str, country_code: str | None) -> bool:
    """What the service refuses in a member_id: personal data, or a card number (free-text scan)."""
    return personal_data_kind(value, country_code) is not None or contains_card_number(value)


# --- sequence numbers ------------------------------------------------------------------------------


def sequence_numbers(count: int, rng: random.Random, run: int = 10) -> list[str]:
    """Runs of `run` consecutive numbers from random starting points, 6 to 12 digits; half of the runs
    zero-padded to their width (leading zeros), half without."""
    numbers: list[str] = []
    while len(numbers) < count:
        width = rng.randint(6, 12)
        padded = rng.random() < 0.5
        low = 0 if padded else 10 ** (width - 1)
        start = rng.randrange(low, 10**width - run)
        numbers += [str(n).zfill(width) if padded else str(n) for n in range(start, start + run)]
    return numbers[:count]


def measure_sequences(count: int, countries=SEQUENCE_COUNTRIES) -> dict[str, Tally]:
    tallies = {}
    for country in countries:
        tally = Tally()
        for number in sequence_numbers(count, random.Random(f"{SEED}-{country}")):
            tally.total += 1
            if member_id_refused(number, country):
                tally.refused += 1
                tally.misses.append(number)
            elif may_be_phone_number(number, country):
                tally.warned += 1
        tallies[country] = tally
    return tallies


# --- phone numbers ---------------------------------------------------------------------------------

NUMBER_TYPES = [getattr(PhoneNumberType, name) for name in dir(PhoneNumberType) if name.isupper() and name != "UNKNOWN"]


def example_numbers() -> list[tuple[str, str]]:
    """(region, written number): every example number phonenumbers holds, per region and number type,
    in its INTERNATIONAL and NATIONAL formats, each written form once per region."""
    seen: dict[tuple[str, str], None] = {}
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for number_type in NUMBER_TYPES:
            example = phonenumbers.example_number_for_type(region, number_type)
            if example is None:
                continue
            for number_format in (PhoneNumberFormat.INTERNATIONAL, PhoneNumberFormat.NATIONAL):
                seen[(region, phonenumbers.format_number(example, number_format))] = None
    return list(seen)


def measure_phone_examples() -> tuple[Tally, Tally]:
    """All examples, and those written with + or punctuation (not a bare digit string)."""
    every, written = Tally(), Tally()
    for region, text in example_numbers():
        refused = member_id_refused(text, region)
        warned = not refused and may_be_phone_number(text, region)
        for tally in (every, written) if not text.isdigit() else (every,):
            tally.total += 1
            tally.refused += refused
            tally.warned += warned
            if not refused:
                tally.misses.append((region, text, "warned" if warned else "accepted"))
    return every, written


# --- national IDs in bare digits -------------------------------------------------------------------


def measure_bare_resident_ids(count: int) -> Tally:
    rng = random.Random(SEED)
    tally = Tally()
    for _ in range(count):
        digits = "".join(rng.choice("0123456789") for _ in range(18))
        tally.total += 1
        if is_national_id(digits, "CN"):
            tally.refused += 1
            tally.misses.append(digits)
    return tally


# --- card numbers ----------------------------------------------------------------------------------


def measure_test_cards() -> Tally:
    tally = Tally()
    for network, numbers in TEST_CARDS.items():
        for number in numbers:
            tally.total += 1
            if contains_card_number(number) and card_network(re.sub(r"\D", "", number)) == network:
                tally.refused += 1
            else:
                tally.misses.append((network, number))
    return tally


def luhn_completed(partial: str) -> str:
    total = 0
    for position, char in enumerate(reversed(partial)):
        digit = int(char)
        if position % 2 == 0:  # doubled once the check digit is appended
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return partial + str((10 - total % 10) % 10)


def measure_outside_ranges(count: int) -> tuple[Tally, Tally, int]:
    """Random Luhn-valid numbers of 13 to 19 digits outside every network's range, written plain and
    grouped by four: (plain, grouped, how many random Luhn-valid numbers were drawn to find them).

    Grouped, a run of groups is searched for a card number on whole groups (so that "ref 12 4111 1111
    1111 1111" is found): a number whose last groups alone form a card number of a network is refused.
    """
    rng = random.Random(SEED)
    plain, grouped, drawn = Tally(), Tally(), 0
    while plain.total < count:
        length = rng.randint(13, 19)
        number = luhn_completed("".join(rng.choice("0123456789") for _ in range(length - 1)))
        drawn += 1
        if card_network(number) is not None:
            continue
        for tally, written in ((plain, number), (grouped, " ".join(number[i : i + 4] for i in range(0, length, 4)))):
            tally.total += 1
            if contains_card_number(written):
                tally.refused += 1
                tally.misses.append(written)
    return plain, grouped, drawn
