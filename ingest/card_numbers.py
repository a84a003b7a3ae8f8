"""Payment card numbers in text (issue 11 part 3): 13 to 19 digits, alone or in groups separated by
single spaces or dashes, that pass the Luhn check AND lie in an issuer range of a payment card network
(ingest/card_networks.py). Loyalty and gift card numbers outside those ranges pass, although many carry
a Luhn check digit on purpose.
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
    for start in range(len(groups)):
        digits = ""
        for group in groups[start:]:
            digits += group
            if len(digits) > CARD_MAX_DIGITS:
                break
            if len(digits) >= CARD_MIN_DIGITS and is_payment_card_number(digits):
                return True
    return False


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
