"""Partner data protection: personal and card data that HQ must never store (spec 2, TradeRecord).

A record that carries such data is rejected (400 INVALID_PAYLOAD) and nothing of the batch is stored.
Problems name the field and the kind of data found, never the value: a rejected value must not reach
a response, and through it a log. Only what is unambiguous is refused (decisions 0040 and 0041):

- member_id is an internal member number, a sequence number or a salted hash (the specification allows
  them), never an e-mail address, a phone number written as one, a national personal ID of the store's
  country in its usual written form (ingest/personal_data.py) or a payment card number. A bare digit
  string is a sequence number: accepted, with the warning MEMBER_ID_MAY_BE_PHONE where it is also a
  valid phone number of the store's country.
- No free-text field of the record, its items, modifiers, payments or tax lines holds a payment card
  number: 13 to 19 digits, alone or in groups separated by single spaces or dashes, that pass the
  Luhn check and lie in a card network's issuer range (ingest/card_numbers.py). The free-text fields
  (names, order sources, payment types and details, member_id) are those whose type is declared
  free text (`StringKind.FREE_TEXT` in ingest/wire/scalars.py), found in the model's type hints, so a
  field added later with a free-text type is covered. Codes (ids such as trade_record_id, payment_id or
  fiscal_document_no) are not scanned (a numeric id of 13 to 19 digits passes the Luhn check one time in
  ten: scanning ids would refuse valid batches at random), nor are amounts, standard forms (currency,
  card_last4) and enum codes; timestamps and dates are not strings.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import types
import typing
from collections.abc import Iterable
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

from core.errors import FieldProblem
from ingest.card_numbers import CARD_CANDIDATE, contains_card_number, redact_card_numbers
from ingest.personal_data import EMAIL, is_email_address, is_national_id, is_written_phone_number, may_be_phone_number
from ingest.problem_words import field_names
from ingest.wire.record_structs import WIRE_CLASS_OF
from ingest.wire.requests import TradeRecord
from ingest.wire.responses import BatchWarning
from ingest.wire.scalars import StringKind

MEMBER_ID_MAY_BE_PHONE = "MEMBER_ID_MAY_BE_PHONE"
PROTECTION_WARNING_CODES = {
    MEMBER_ID_MAY_BE_PHONE: "member_id is a bare digit string that is also a valid phone number of the "
    "store's country; accepted as a sequence number",
}
_NOT_ECHOED = "must be an internal member number, a sequence number or a salted hash, not {}; the value is not echoed"


def protection_problems(
    path: str, record: TradeRecord, country_code: str | None, *, may_hold_card_numbers: bool = True
) -> list[FieldProblem]:
    """Every data protection problem of one record; country_code is the store's country (None: unknown).
    may_hold_card_numbers=False: `may_hold_card_numbers(records)` found no candidate in the record's batch."""
    problems = member_id_problems(path, record, country_code)
    if may_hold_card_numbers:
        problems += card_number_problems(path, record)
    return problems


def protection_warnings(path: str, record: TradeRecord, country_code: str | None) -> list[BatchWarning]:
    """Warnings of an accepted record: a member_id that may be a phone number (path is the record's)."""
    if record.member_id is None or not may_be_phone_number(record.member_id, country_code):
        return []
    return [
        BatchWarning(
            MEMBER_ID_MAY_BE_PHONE,
            path,
            "member_id is a bare digit string that is also a valid phone "
            "number of the store's country. It was accepted as a sequence number; if it is a "
            "customer's phone number, send an internal member number or a salted hash instead",
            field="member_id",
        )
    ]


# --- member_id ------------------------------------------------------------------------------------


def member_id_problems(path: str, record: TradeRecord, country_code: str | None) -> list[FieldProblem]:
    """A member_id that is personal data; a card number in it is reported by card_number_problems."""
    member_id = record.member_id
    if member_id is None:
        return []
    kind = personal_data_kind(member_id, country_code)
    return [] if kind is None else [FieldProblem(f"{path}.member_id", _NOT_ECHOED.format(kind))]


def personal_data_kind(value: str, country_code: str | None) -> str | None:
    """What personal data value is, in words for a problem ('an e-mail address'), or None."""
    if is_email_address(value):
        return "an e-mail address"
    if is_written_phone_number(value, country_code):
        return "a phone number"
    if is_national_id(value, country_code):
        return "a national ID of the store's country"
    return None


# --- card numbers ---------------------------------------------------------------------------------


def may_hold_card_numbers(records: list[TradeRecord]) -> bool:
    """Whether the free text of any of records holds a card number candidate: one quick search of a whole
    batch rules out nearly every batch, and card_number_problems is then skipped."""
    return any_card_number_candidate(free_texts_of_models(TradeRecord, records))


def any_card_number_candidate(texts: Iterable[str | None]) -> bool:
    """Whether any of texts (None: a field not sent) holds a card number candidate."""
    # each distinct text once: a batch's 4,000 texts hold ~200 distinct ones (names, payment types)
    distinct = set(texts)
    distinct.discard(None)
    return any(map(_may_hold_card_number, distinct))


def card_number_problems(path: str, record: TradeRecord) -> list[FieldProblem]:
    # A quick search of each free-text value rules out nearly every record; only a record with a
    # candidate is walked again with paths, to name its fields.
    if not any(map(_may_hold_card_number, free_texts(record))):
        return []
    return [
        FieldProblem(
            field_path,
            "must not contain a payment card number (13 to 19 digits of a card network's "
            "issuer range passing the Luhn check); send at most card_last4 on the payment. "
            "The value is not echoed",
        )
        for field_path, text in text_fields(record, path)
        if contains_card_number(text)
    ]


@functools.lru_cache(maxsize=4096)
def _may_hold_card_number(text: str) -> bool:
    # Values repeat (product names, payment types, order sources): each distinct one is searched once.
    # Bounded: they are the partner's text.
    return CARD_CANDIDATE.search(text) is not None


def redacted(text: str) -> str:
    """`text` with every card number and e-mail address replaced, for what is logged (a request path
    may carry anything a partner typed)."""
    return EMAIL.sub("[e-mail]", redact_card_numbers(text))


# --- walking the record ---------------------------------------------------------------------------


def text_fields(model: Any, path: str) -> list[tuple[str, str]]:
    """(path, value) of every free-text string in model (a BaseModel or a pydantic dataclass) and the
    models it holds, model itself at `path`."""
    found: list[tuple[str, str]] = []
    _texts_in(model, path, True, found)
    return found


def _texts_in(value: Any, path: str, is_text: bool, found: list[tuple[str, str]]) -> None:
    if isinstance(value, str):
        if is_text:
            found.append((path, value))
    elif isinstance(value, (list, tuple)):
        for index, element in enumerate(value):
            _texts_in(element, f"{path}[{index}]", is_text, found)
    elif isinstance(value, dict):
        for key, element in value.items():
            _texts_in(element, f"{path}.{key}", is_text, found)
    elif _is_model_class(value.__class__):
        for name, field_is_text in _scanned_fields(_wire_class(value.__class__)):
            field_value = getattr(value, name)
            if field_value is not None:
                _texts_in(field_value, f"{path}.{name}", field_is_text, found)


def free_texts(model: Any) -> list[str]:
    """The values of text_fields(model, ...), without their paths and in another order: what the quick
    search reads."""
    return free_texts_of_models(_wire_class(model.__class__), [model])


def free_texts_of_models(model: type, models: list[Any]) -> list[str]:
    """The free texts of models (instances of the model class `model`), field by field: each field of
    all of them in one list comprehension, then the models they hold, all of them at once (a batch's
    records, then all their items...). The order is not text_fields': a few calls for a whole batch in
    place of one per object (decision 0063)."""
    found: list[str] = []
    _free_texts_of_models(model, models, found)
    return found


def _free_texts_of_models(model: type, models: list[Any], found: list[str]) -> None:
    for field, shape, is_text, held in _walk_plan(model):
        values = [value for value in map(field, models) if value is not None]
        if shape is _TEXT:
            found += values
        elif shape is _MODELS:
            _free_texts_of_models(held, [element for value in values for element in value], found)
        else:
            for value in values:
                _free_texts_in(value, is_text, found)


def _free_texts_in(value: Any, is_text: bool, found: list[str]) -> None:
    # any other shape, as _texts_in walks it
    if isinstance(value, str):
        if is_text:
            found.append(value)
    elif isinstance(value, (list, tuple)):
        for element in value:
            _free_texts_in(element, is_text, found)
    elif isinstance(value, dict):
        for element in value.values():
            _free_texts_in(element, is_text, found)
    elif _is_model_class(value.__class__):
        _free_texts_of_models(_wire_class(value.__class__), [value], found)


def is_model(kind: Any) -> bool:
    """Whether kind is a model of the wire format: a BaseModel or a (pydantic) dataclass."""
    return isinstance(kind, type) and (issubclass(kind, BaseModel) or dataclasses.is_dataclass(kind))


@functools.cache
def _is_model_class(kind: type) -> bool:
    # is_model once per class: the walk asks it of every object of a batch
    return is_model(_wire_class(kind))


def _wire_class(kind: type) -> type:
    """The wire class of a msgspec Struct generated from it (a batch the fast path confirmed holds them:
    ingest/wire/record_structs.py), whose annotations say which fields are free text; kind otherwise.
    The walks read a model's fields by name (getattr), which a Struct has as its dataclass has them."""
    return WIRE_CLASS_OF.get(kind, kind)


def field_types(model: type) -> dict[str, Any]:
    """The declared type of each field of a model, its Annotated metadata included, in field order."""
    hints = typing.get_type_hints(model, include_extras=True)
    return {name: hints[name] for name in field_names(model)}


@functools.cache
def _scanned_fields(model: type) -> tuple[tuple[str, bool], ...]:
    """(name, is_text) of the fields that can hold free text, themselves or in the models they hold.

    Worked out once per model class: a record has about 30 fields, but only a handful can hold free text,
    and the walk visits only those (amounts, timestamps, codes and whole tax lines are skipped).
    """
    scanned = []
    for name, annotation in field_types(model).items():
        is_text = is_free_text(annotation)
        if is_text or any(_scanned_fields(held) for held in _models_in(annotation)):
            scanned.append((name, is_text))
    return tuple(scanned)


def _models_in(annotation: Any) -> list[type]:
    if is_model(annotation):
        return [annotation]
    return [model for argument in get_args(annotation) for model in _models_in(argument)]


# The shapes of the scanned fields that the quick walk reads without asking each value its class.
_TEXT, _MODELS, _OTHER = "text", "models", "other"


@functools.cache
def _walk_plan(model: type) -> tuple[tuple[operator.attrgetter[Any], str, bool, Any], ...]:
    """(the field's getter, shape, is_text, model held) of each of _scanned_fields(model): a free-text string
    (`_TEXT`), a list of models of the class held (`_MODELS`), or any other shape (`_OTHER`, walked value
    by value). An attrgetter mapped over the models reads a field of all of them without a Python call each."""
    plan: list[tuple[operator.attrgetter[Any], str, bool, Any]] = []
    for name, is_text in _scanned_fields(model):
        kind = _without_annotations(field_types(model)[name])
        element = _without_annotations(get_args(kind)[0]) if get_origin(kind) is list else None
        field = operator.attrgetter(name)
        if is_text and kind is str:
            plan.append((field, _TEXT, is_text, None))
        elif is_model(element):
            plan.append((field, _MODELS, is_text, element))
        else:
            plan.append((field, _OTHER, is_text, None))
    return tuple(plan)


@functools.cache
def plain_free_text_fields(model: type) -> list[str] | None:
    """The names of model's fields that are free text as a plain string, when model holds free text
    nowhere else but in lists of models (whose own fields say theirs); None when it does (a list or a dict of
    strings, a model not in a list). ingest/one_parse.py reads these fields' values for a whole batch in
    its bulk checks, in place of `may_hold_card_numbers`' walk (decision 0120)."""
    plan = _walk_plan(model)
    if any(shape is _OTHER for _, shape, _, _ in plan):
        return None
    return [name for name, is_text in _scanned_fields(model) if is_text]


def _without_annotations(annotation: Any) -> Any:
    """The type an annotation declares, without Annotated metadata and without `| None`."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _without_annotations(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        kinds = [argument for argument in get_args(annotation) if argument is not type(None)]
        return _without_annotations(kinds[0]) if len(kinds) == 1 else annotation
    return annotation


def is_free_text(annotation: Any) -> bool:
    """Whether the strings of this type (or those it holds: the elements of a list, the values of a
    dict) are declared free text (scanned); codes, decimal strings and standard forms are not."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return StringKind.FREE_TEXT in annotation.__metadata__ or is_free_text(get_args(annotation)[0])
    if origin is dict:
        return is_free_text(get_args(annotation)[1])  # keys are not walked
    if origin in (Union, types.UnionType, list, tuple, set, frozenset):
        return any(is_free_text(argument) for argument in get_args(annotation))
    return False
