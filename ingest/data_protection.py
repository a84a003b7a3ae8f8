"""Partner data protection: personal and card data that HQ must never store (spec 2, TradeRecord).

A record that carries such data is rejected (400 INVALID_PAYLOAD) and nothing of the batch is stored.
Problems name the field and the kind of data found, never the value: a rejected value must not reach
a response, and through it a log.

- member_id is an internal member number or a salted hash, never an e-mail address or a phone number.
  A phone number is a value made only of digits and phone punctuation that `phonenumbers` reads as a
  valid number of the store's country (or of any country when written with a leading +). Values with
  letters are never phone numbers here, so salted hashes such as "a1b2c3d4e5f6" and prefixed sequence
  numbers such as "M-000123" pass (phonenumbers would otherwise read letters as a phone keypad).
- No free-text field of the record, its items, modifiers, payments or tax lines holds a payment card
  number: 13 to 19 digits, alone or in groups separated by single spaces or dashes, that pass the
  Luhn check, whatever digit they start with. The free-text fields (names, order sources, payment
  types and details, member_id) are found by walking the model, so a field added later is covered.
  Identifiers (codes and ids such as trade_record_id, payment_id or fiscal_document_no) are not
  scanned, nor are amounts (decimal strings) and enum codes; timestamps and dates are not strings.
"""

from __future__ import annotations

import functools
import re
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import phonenumbers

from core.errors import FieldProblem
from ingest.wire import Code, DecimalString, Money, StoreId, TradeRecord

# A simple, robust shape of local@domain.tld: the top-level domain holds letters only.
_EMAIL = re.compile(r"[^@\s]+@(?:[^@\s.]+\.)+[^\W\d_]{2,}")
# Digits and the punctuation people write phone numbers with; a leading + for the international form.
# \d, not [0-9]: digits typed in another script (full-width "０９１２...") are still the same number.
_PHONE_SHAPE = re.compile(r"\+?[\d ().\-/]+")
# Runs of digits separated by single spaces or dashes; card numbers are looked for inside them.
_DIGIT_RUN = re.compile(r"\d+(?:[ \-]\d+)*")
# Every card number holds 13 digits with at most one separator between two of them: one regex search
# rules out nearly every text (names, codes) before the run-by-run Luhn test.
_CARD_CANDIDATE = re.compile(r"\d(?:[ \-]?\d){12}")
_DIGIT_GROUP = re.compile(r"\d+")
CARD_MIN_DIGITS, CARD_MAX_DIGITS = 13, 19

# Patterns of the string types that are not free text, and so are not scanned for card numbers:
# amounts and quantities (decimal strings) are numbers. Identifiers are left out because partner keys
# are system-generated, and a numeric id of 13 to 19 digits passes the Luhn check one time in ten:
# scanning ids would refuse valid batches at random.
_NOT_TEXT_PATTERNS = frozenset(getattr(meta, "pattern", None) for kind in (DecimalString, Money, Code, StoreId)
                               for meta in get_args(kind)[1:]) - {None}


def protection_problems(path: str, record: TradeRecord, country_code: str | None) -> list[FieldProblem]:
    """Every data protection problem of one record; country_code is the store's country (None: unknown)."""
    problems = member_id_problems(path, record, country_code)
    problems += card_number_problems(path, record)
    return problems


# --- member_id ------------------------------------------------------------------------------------

def member_id_problems(path: str, record: TradeRecord, country_code: str | None) -> list[FieldProblem]:
    member_id = record.member_id
    if member_id is None:
        return []
    field_path = f"{path}.member_id"
    if is_email_address(member_id):
        return [FieldProblem(field_path, "must be an internal member number or a salted hash, not an e-mail "
                                         "address; the value is not echoed")]
    if is_phone_number(member_id, country_code):
        return [FieldProblem(field_path, "must be an internal member number or a salted hash, not a phone "
                                         "number; the value is not echoed")]
    return []


def is_email_address(value: str) -> bool:
    return _EMAIL.fullmatch(value.strip()) is not None


def is_phone_number(value: str, country_code: str | None) -> bool:
    """Whether value is a valid phone number of country_code, or of any country in the + form.

    Without a country only the international form (+...) can be read as a number.
    """
    text = value.strip()
    if not _PHONE_SHAPE.fullmatch(text):
        return False
    try:
        number = phonenumbers.parse(text, country_code)
    except phonenumbers.NumberParseException:
        return False
    return phonenumbers.is_valid_number(number)


# --- card numbers ---------------------------------------------------------------------------------

def card_number_problems(path: str, record: TradeRecord) -> list[FieldProblem]:
    # One search over all the record's free text rules out nearly every record (the texts are joined
    # by a line break, which no card number spans); only a record with a candidate is walked again
    # with paths, to name its fields.
    if not _CARD_CANDIDATE.search("\n".join(text for _, text in text_fields(record, None))):
        return []
    return [
        FieldProblem(field_path, "must not contain a payment card number (13 to 19 digits passing the Luhn "
                                 "check); send at most card_last4 on the payment. The value is not echoed")
        for field_path, text in text_fields(record, path)
        if contains_card_number(text)
    ]


def contains_card_number(text: str) -> bool:
    """Whether text holds 13 to 19 digits, alone or in groups separated by single spaces or dashes,
    that pass the Luhn check (whatever digit they start with).

    A card number is delimited from other digits: inside a run of groups ("ref 12 4111 1111 1111
    1111") every span of whole groups is tried, but a longer unbroken digit string is not cut up.
    Digits of any script count (a card number typed with full-width digits is still one).
    """
    if not _CARD_CANDIDATE.search(text):
        return False
    for run in _DIGIT_RUN.finditer(text):
        groups = [_ascii_digits(group) for group in _DIGIT_GROUP.findall(run.group())]
        for start in range(len(groups)):
            digits = ""
            for group in groups[start:]:
                digits += group
                if len(digits) > CARD_MAX_DIGITS:
                    break
                if len(digits) >= CARD_MIN_DIGITS and luhn_valid(digits):
                    return True
    return False


def redacted(text: str) -> str:
    """`text` with every card number and e-mail address replaced, for what is logged (a request path
    may carry anything a partner typed)."""
    text = _DIGIT_RUN.sub(lambda run: "[card number]" if contains_card_number(run.group()) else run.group(), text)
    return _EMAIL.sub("[e-mail]", text)


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


# --- walking the record ---------------------------------------------------------------------------

def text_fields(model: Any, path: str | None) -> list[tuple[str | None, str]]:
    """(path, value) of every free-text string in model (a BaseModel or a pydantic dataclass) and the
    models it holds; with path None, no paths are built (None in their place)."""
    found: list[tuple[str | None, str]] = []
    _texts_of_model(model, path, found)
    return found


def _texts_of_model(model: Any, path: str | None, found: list) -> None:
    for name, is_text in _scanned_fields(type(model)):
        value = getattr(model, name)
        if value is not None:
            _texts_in(value, None if path is None else f"{path}.{name}", is_text, found)


def _texts_in(value: Any, path: str | None, is_text: bool, found: list) -> None:
    if isinstance(value, str):
        if is_text:
            found.append((path, value))
    elif isinstance(value, (list, tuple)):
        for index, element in enumerate(value):
            _texts_in(element, None if path is None else f"{path}[{index}]", is_text, found)
    elif isinstance(value, dict):
        for key, element in value.items():
            _texts_in(element, None if path is None else f"{path}.{key}", is_text, found)
    elif _is_model(type(value)):
        _texts_of_model(value, path, found)


def _is_model(kind: Any) -> bool:
    # BaseModels and pydantic dataclasses both list their fields in __pydantic_fields__.
    return isinstance(kind, type) and hasattr(kind, "__pydantic_fields__")


@functools.cache
def _scanned_fields(model: type) -> tuple[tuple[str, bool], ...]:
    """(name, is_text) of the fields that can hold free text, themselves or in the models they hold.

    Worked out once per model class: a record has about 30 fields, but only a handful can hold free text,
    and the walk visits only those (amounts, timestamps, codes and whole tax lines are skipped).
    """
    scanned = []
    for name, info in model.__pydantic_fields__.items():
        is_text = _holds_text(info.annotation, tuple(info.metadata))
        if is_text or any(_scanned_fields(held) for held in _models_in(info.annotation)):
            scanned.append((name, is_text))
    return tuple(scanned)


def _models_in(annotation: Any) -> list[type]:
    if _is_model(annotation):
        return [annotation]
    return [model for argument in get_args(annotation) for model in _models_in(argument)]


def _holds_text(annotation: Any, metadata: tuple = ()) -> bool:
    """Whether strings of this type are free text (scanned): not enum codes (Literal), not decimal
    strings, not identifiers."""
    if any(getattr(meta, "pattern", None) in _NOT_TEXT_PATTERNS for meta in metadata):
        return False
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *more = get_args(annotation)
        return _holds_text(base, tuple(more))
    if origin is Literal:
        return False
    if origin in (Union, types.UnionType, list, tuple, set, frozenset, dict):
        return any(_holds_text(argument) for argument in get_args(annotation))
    return annotation is str
