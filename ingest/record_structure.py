"""The checks of a trade record that need nothing but the batch: its store_id and business_date against the
batch's, its repeated line numbers and payment ids (`structure_problems`, for every record of a new batch:
ingest/trade_records.py `record_problems`); and what a batch the model refused still shows
(`readable_problems`, with the 400)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from core.errors import FieldProblem
from ingest.amounts import MoneyReader, raw_money_problems
from ingest.data_protection import protection_problems
from ingest.parsing import Refused, duplicates, list_member, readable
from ingest.record_amounts import read_amounts
from ingest.wire.requests import TradeRecord


def structure_problems(
    path: str, record: TradeRecord, store_id: str | None, business_date: dt.date | None
) -> list[FieldProblem]:
    """A record at path against the batch's store_id and business_date (None: unreadable, not compared),
    and its repeated line numbers and payment ids."""
    problems = []
    if store_id is not None and record.store_id != store_id:
        problems.append(FieldProblem(f"{path}.store_id", "must equal the outer store_id"))
    if business_date is not None and record.business_date != business_date:
        problems.append(FieldProblem(f"{path}.business_date", "must equal the outer business_date"))
    # Repeats are looked for only where a set of the values is smaller than their list (nearly never); a
    # single line or payment repeats nothing (most records have one payment).
    items, payments = record.items, record.payments
    if len(items) > 1 and len({item.line_no for item in items}) < len(items):
        problems += duplicates([item.line_no for item in items], f"{path}.items", "line_no")
    if len(payments) > 1 and len({p.payment_id for p in payments}) < len(payments):
        problems += duplicates([p.payment_id for p in payments], f"{path}.payments", "payment_id")
    return problems


def readable_problems(refused: Refused) -> list[FieldProblem]:
    """A refused batch's problems beyond pydantic's. A record with no problem of its own gets every check
    that needs no stored data (data protection without the store's country: only phone numbers in the
    international form are recognised); the others get their readable amounts, codes and dates checked."""
    store_id, business_date = _readable_value(refused, ("store_id",)), _readable_date(refused, ("business_date",))
    problems = []
    for index, record in refused.valid_entries("trade_records", TradeRecord):
        path = f"trade_records[{index}]"
        problems += structure_problems(path, record, store_id, business_date)
        reader = MoneyReader(record.currency)
        read_amounts(path, record, reader)
        problems += reader.problems + protection_problems(path, record, None)
    for index, raw in refused.refused_entries("trade_records"):
        problems += _refused_record_problems(refused, index, raw, store_id, business_date)
    return problems


def _refused_record_problems(
    refused: Refused, index: int, raw: dict[str, Any], store_id: str | None, business_date: dt.date | None
) -> list[FieldProblem]:
    """What a record pydantic refused still shows: its readable store_id and business_date against the
    batch's, its repeated line numbers and payment ids, its amounts."""
    path, at = f"trade_records[{index}]", ("trade_records", index)
    problems = []
    own_store, own_date = _readable_value(refused, (*at, "store_id")), _readable_date(refused, (*at, "business_date"))
    if None not in (own_store, store_id) and own_store != store_id:
        problems.append(FieldProblem(f"{path}.store_id", "must equal the outer store_id"))
    if None not in (own_date, business_date) and own_date != business_date:
        problems.append(FieldProblem(f"{path}.business_date", "must equal the outer business_date"))
    items, payments = list_member(raw, "items"), list_member(raw, "payments")
    problems += duplicates(
        [readable(item.get("line_no"), int) if isinstance(item, dict) else object() for item in items],
        f"{path}.items",
        "line_no",
    )
    problems += duplicates(
        [readable(p.get("payment_id")) if isinstance(p, dict) else object() for p in payments],
        f"{path}.payments",
        "payment_id",
    )
    return problems + raw_money_problems(raw, TradeRecord, path)


def _raw_at(refused: Refused, location: tuple[str | int, ...]) -> Any:
    value: Any = refused.raw  # JSON: objects and arrays, indexed by the location's names and positions
    for step in location:
        value = value[step]
    return value


def _readable_value(refused: Refused, location: tuple[str | int, ...]) -> str | None:
    """A code pydantic found no problem with (it is a valid string), or None."""
    return None if refused.failed(*location) else _raw_at(refused, location)


def _readable_date(refused: Refused, location: tuple[str | int, ...]) -> dt.date | None:
    text = _readable_value(refused, location)
    return None if text is None else dt.date.fromisoformat(text)
