"""Every string field of the wire format declares what it holds (decision 0019).

The card-number scan (ingest/data_protection.py) reads free text only, and finds it by the declared
kind of each field's type (`StringKind` in ingest/wire/scalars.py), not by guessing from its pattern.
So a new string field must say what it is: these tests fail when a string field of any request model
is declared neither free text, nor a code, a decimal number or a standard form (nor an enum), and they
pin the fields the scan reads.
"""

from __future__ import annotations

import inspect
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
from pydantic import TypeAdapter, ValidationError

from ingest.data_protection import _scanned_fields, field_types, is_model
from ingest.wire import requests, resend_keys
from ingest.wire.requests import TradeRecord, record_part
from ingest.wire.scalars import CardLast4, Code, CurrencyCode, FreeString50, StringKind


def request_models() -> list[type]:
    """Every model of a request body (and of what a resend is read with), and the models they hold."""
    found: list[type] = []
    todo = [
        kind
        for module in (requests, resend_keys)
        for _, kind in inspect.getmembers(module, is_model)
        if kind.__module__ == module.__name__
    ]
    while todo:
        model = todo.pop()
        if model not in found:
            found.append(model)
            todo += [held for annotation in field_types(model).values() for held in _models_in(annotation)]
    return found


def _models_in(annotation: Any) -> list[type]:
    if is_model(annotation):
        return [annotation]
    return [model for argument in get_args(annotation) for model in _models_in(argument)]


def undeclared_strings(annotation: Any) -> bool:
    """Whether a string type in annotation (itself, an element, a dict key or value) declares no kind."""
    if annotation is str:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        base = get_args(annotation)[0]
        if base is str:
            return not any(isinstance(meta, StringKind) for meta in annotation.__metadata__)
        return undeclared_strings(base)
    if origin is Literal or is_model(annotation):
        return False  # an enum; a model's own fields are checked as a model
    if origin in (Union, types.UnionType, list, tuple, set, frozenset, dict):
        return any(undeclared_strings(argument) for argument in get_args(annotation))
    return False


def undeclared_fields(models: list[type]) -> list[str]:
    return [
        f"{model.__name__}.{name}"
        for model in models
        for name, annotation in field_types(model).items()
        if undeclared_strings(annotation)
    ]


def test_the_request_models_are_all_found():
    names = {model.__name__ for model in request_models()}
    assert {
        "StoresBatch",
        "Store",
        "ProductsBatch",
        "Product",
        "ComboComponent",
        "ModifierGroup",
        "ModifierOption",
        "MappingsBatch",
        "MappingEntry",
        "TradeRecordsBatch",
        "TradeRecord",
        "TradeItem",
        "TradeModifier",
        "Payment",
        "TaxLine",
        "DailyClose",
        "StoresKey",
        "ProductsKey",
        "StoreDayKey",
    } <= names


def test_every_string_field_of_a_request_declares_what_it_holds():
    assert undeclared_fields(request_models()) == []


def test_a_string_field_added_without_a_kind_is_found():
    @record_part
    class LaterPayment:
        voucher_code: Code
        voucher_note: FreeString50 | None = None
        wallet_name: str | None = None
        labels: list[Annotated[str, "not a kind"]]
        by_language: dict[str, FreeString50]

    assert undeclared_fields([LaterPayment]) == [
        "LaterPayment.wallet_name",
        "LaterPayment.labels",
        "LaterPayment.by_language",
    ]


# --- the fields the scan reads ----------------------------------------------------------------------


def scanned_paths(model: type, prefix: str = "") -> set[str]:
    """The dotted paths of the fields the card-number scan reads as free text, in model and below."""
    found = set()
    for name, is_text in _scanned_fields(model):
        if is_text:
            found.add(prefix + name)
        for held in _models_in(field_types(model)[name]):
            found |= scanned_paths(held, f"{prefix}{name}.")
    return found


# What the scan read before free text was declared, when it guessed free text from the string patterns
# that are not (decimal strings, codes, store ids): the same free-text fields, plus currency and
# card_last4, which it read as text for want of a pattern it knew. Neither can hold a card number (an ISO
# 4217 code; four digits), so reading them or not refuses the same records.
SCANNED_BEFORE_DECLARATION = {
    "currency",
    "items.modifiers.option_name",
    "items.product_name",
    "member_id",
    "order_source",
    "order_source_detail",
    "payments.card_last4",
    "payments.payment_method_detail",
    "payments.payment_type",
}
NEVER_A_CARD_NUMBER = {"currency", "payments.card_last4"}


def test_the_scan_reads_the_declared_free_text_of_a_trade_record():
    assert scanned_paths(TradeRecord) == SCANNED_BEFORE_DECLARATION - NEVER_A_CARD_NUMBER


def test_what_the_scan_no_longer_reads_cannot_hold_a_card_number():
    for kind in (CurrencyCode, CardLast4):
        for value in ("4111111111111111", "4111 1111 1111 1111", "USD 4111111111111111"):
            with pytest.raises(ValidationError):
                TypeAdapter(kind).validate_python(value)
