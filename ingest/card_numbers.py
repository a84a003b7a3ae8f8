"""Payment card numbers in text (decision 0041): 13 to 19 digits, alone or in groups separated by
single spaces or dashes, that pass the Luhn check AND lie in an issuer range of a payment card network
(ingest/card_networks.py). Loyalty and gift card numbers outside those ranges pass, although many carry
a Luhn check digit on purpose.

Product barcodes are not card numbers: a JAN or EAN-13 of 45/49 (Japan) or 40-44 (Germany) has
13 digits in Visa's range, one of 50 or 56-69 in Maestro's, and one in ten of them also passes the Luhn
check. So a barcode printed in a name is recognised first, by its own check digit (GS1's mod 10: a UPC-A of
12 digits, an EAN-13, JAN or ISBN-13 of 13; as one group, in the printed groups 1-6-6 or 1-5-5-1, or an
ISBN-13 in hyphenated groups from 978 or 979), and no card number is looked for in its digits. What this
lets through: a 13-digit card number that is also a valid EAN-13 (one in ten 13-digit Visa or Maestro
numbers, which the networks stopped issuing; none of the published test cards). Decision 0041 has the
figures of both sides.
"""

from __future__ import annotations

import re

from ingest.card_networks import card_network

# Runs of digits separated by single spaces or dashes; card numbers are looked for inside them.
_DIGIT_RUN = re.compile(r"\d+(?:[ \-]\d+)*")
# Every card number holds 13 digits with at most one separator between two of them: one regex search
# rules out nearly every text (names, codes) before the run-by-run checks.
CARD_CANDIDATE = re.compile(r"\d(?:[ \-]?\d){12}")
_DIGIT_GROUP = re.compile(r"\d+")
CARD_MIN_DIGITS, CARD_MAX_DIGITS = 13, 19


def contains_card_number(text: str) -> bool:
    """Whether text holds a payment card number, alone or in groups separated by single spaces or dashes.

    A card number is delimited from other digits: inside a run of groups ("ref 12 4111 1111 1111
    1111") every span of whole groups is tried, but a longer unbroken digit string is not cut up.
    Digits of any script count (a card number typed with full-width digits is still one).
    """
    if not CARD_CANDIDATE.search(text):
        return False
    return any(_run_holds_card_number(run.group()) for run in _DIGIT_RUN.finditer(text))


def _run_holds_card_number(run: str) -> bool:
    groups = [_ascii_digits(group) for group in _DIGIT_GROUP.findall(run)]
    in_barcode = barcode_groups(groups)
    for start in range(len(groups)):
        digits = ""
        for index in range(start, len(groups)):
            if index in in_barcode:
                break
            digits += groups[index]
            if len(digits) > CARD_MAX_DIGITS:
                break
            if len(digits) >= CARD_MIN_DIGITS and is_payment_card_number(digits):
                return True
    return False


# --- barcodes --------------------------------------------------------------------------------------

# How EAN-13 (and JAN) and UPC-A are printed under their bars, in groups of digits.
_PRINTED_GROUPS = {(1, 6, 6), (1, 5, 5, 1)}
_ISBN_PREFIXES = ("978", "979")


def barcode_groups(groups: list[str]) -> set[int]:
    """The indexes of the digit groups of a run that form a product barcode with a valid check digit: a group
    of 12 or 13 digits, the printed groups of an EAN-13 or UPC-A, or an ISBN-13 in hyphenated groups."""
    found: set[int] = set()
    for start, group in enumerate(groups):
        if len(group) in (12, 13) and gs1_check_valid(group):
            found.add(start)
            continue
        digits = ""
        for end in range(start, min(start + 5, len(groups))):  # an ISBN-13 has 5 groups
            digits += groups[end]
            if len(digits) > 13:
                break
            shape = tuple(len(part) for part in groups[start : end + 1])
            if (
                len(digits) in (12, 13)
                and gs1_check_valid(digits)
                and (shape in _PRINTED_GROUPS or (len(digits) == 13 and len(shape) > 1 and group in _ISBN_PREFIXES))
            ):
                found.update(range(start, end + 1))
                break
    return found


def gs1_check_valid(digits: str) -> bool:
    """GS1's check digit (EAN-13, JAN, UPC-A, ISBN-13): weights 1 and 3 alternating from the right."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        total += int(char) * (3 if position % 2 else 1)
    return total % 10 == 0


def is_payment_card_number(digits: str) -> bool:
    """Whether an ASCII digit string is a card number of a payment card network (range, length, Luhn)."""
    return card_network(digits) is not None and luhn_valid(digits)


def redact_card_numbers(text: str, replacement: str = "[card number]") -> str:
    return _DIGIT_RUN.sub(lambda run: replacement if contains_card_number(run.group()) else run.group(), text)


def _ascii_digits(digits: str) -> str:
    return "".join(str(int(char)) for char in digits)


def luhn_valid(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        digit = int(char)
        if position % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0
