"""POST /trade-records: a batch of one store's transactions for one business date (spec 4.7).

Order of checks: a known batch_id is answered from its marker (ingest/batches.py), then a body the model
refuses (400, with what its readable parts show), the store (403), then one 400 for the body's own checks
and what needs stored data: the store's currency and country.
Recording rules that HQ can check become warnings; the records are still accepted. Each stored
record carries its totals in minor units so that reconciliation never re-reads whole records.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Protocol

from core import errors, faults
from core.errors import FieldProblem
from core.money import currency_exponent
from core.ports import (
    Admission,
    BatchMarkers,
    BatchWrites,
    DelayedQueue,
    MasterReads,
    Reconciliations,
    TradeRecordReads,
)
from core.reconcile_reruns import reopen_changed_days
from core.records import (
    BatchMarker,
    Partner,
    StoreDay,
    StoreMaster,
    TradeRecordRow,
    record_changes,
)
from ingest import access
from ingest.amounts import MoneyReader, raw_money_problems
from ingest.batches import (
    BatchOutcome,
    accept,
    known_batch_of,
    repeated_batch_seq,
    resend_key,
    unknown_member_warnings,
)
from ingest.data_protection import may_hold_card_numbers, protection_problems, protection_warnings
from ingest.empty_values import empty_value_warnings, warned_empty_values
from ingest.one_parse import read_batch, validated_once
from ingest.parsing import Refused, duplicates, list_member, parse, raise_if_any, readable
from ingest.payment_ids import batch_payment_ids, reused_payment_ids
from ingest.record_amounts import read_amounts
from ingest.record_documents import document_json
from ingest.retention import retired_day_problems
from ingest.stored_size import oversized_records
from ingest.trade_batches import (
    finish_resent,
    meaning_of_records,
    moved_warnings,
    resent_meaning,
    resent_moved_warnings,
    trade_records_marker,
)
from ingest.trade_rules import record_warnings
from ingest.trade_rules.common import RecordAmounts
from ingest.wire.requests import TradeRecord, TradeRecordsBatch
from ingest.wire.resend_keys import StoreDayKey
from ingest.wire.responses import BatchWarning
from reference.codes import payment_directions_in_effect

if TYPE_CHECKING:
    from hashlib import _Hash as Hash


class TradeRecordsStorage(
    Admission, BatchMarkers, BatchWrites, MasterReads, TradeRecordReads, Reconciliations, Protocol
):
    """What POST /trade-records uses of storage: the store, mapping and payment directions for its warnings,
    the partner's payment_ids, the day's batch_seqs, and the checked days its records change."""


def _record_problems(
    batch: TradeRecordsBatch, store: StoreMaster, checked_exponent: int | None
) -> tuple[list[FieldProblem], list[RecordAmounts]]:
    """The problems of every record of a parsed batch and their amounts, in one pass over the records:
    its structure (`_structure_problems`), its currency against the store's, its amounts (checked_exponent:
    see MoneyReader) and data protection (the card number check of every record only when the quick search
    of the whole batch's free text finds a candidate). raise_if_any puts the problems in the body's order."""
    problems: list[FieldProblem] = []  # only extended in place: the readers note their problems into it
    amounts: list[RecordAmounts] = []
    card_numbers = may_hold_card_numbers(batch.trade_records)
    readers: dict[str, MoneyReader] = {}  # one per currency (nearly always the store's), not one per record
    for index, record in enumerate(batch.trade_records):
        path = f"trade_records[{index}]"
        problems += _structure_problems(path, record, batch.store_id, batch.business_date)
        if record.currency != store.currency:  # its path is built only then
            problems += store_currency_problem(f"{path}.currency", record.currency, store)
        reader = readers.get(record.currency)
        if reader is None:
            reader = readers[record.currency] = MoneyReader(record.currency, checked_exponent)
            reader.problems = problems  # a record's amount problems come after its structure's, as before
        amounts.append(read_amounts(path, record, reader))
        problems += protection_problems(path, record, store.country_code, may_hold_card_numbers=card_numbers)
    return problems, amounts


def _structure_problems(
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


def _readable_problems(refused: Refused) -> list[FieldProblem]:
    """A refused batch's problems beyond pydantic's. A record with no problem of its own gets every check
    that needs no stored data (data protection without the store's country: only phone numbers in the
    international form are recognised); the others get their readable amounts, codes and dates checked."""
    store_id, business_date = _readable_value(refused, ("store_id",)), _readable_date(refused, ("business_date",))
    problems = []
    for index, record in refused.valid_entries("trade_records", TradeRecord):
        path = f"trade_records[{index}]"
        problems += _structure_problems(path, record, store_id, business_date)
        reader = MoneyReader(record.currency)
        read_amounts(path, record, reader)
        problems += reader.problems + protection_problems(path, record, None)
    for index, raw in refused.refused_entries("trade_records"):
        problems += _refused_record_problems(refused, index, raw, store_id, business_date)
    return problems


def _refused_record_problems(
    refused: Refused, index: int, raw: dict, store_id: str | None, business_date: dt.date | None
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


def _raw_at(refused: Refused, location: tuple):
    value = refused.raw
    for step in location:
        value = value[step]
    return value


def _readable_value(refused: Refused, location: tuple) -> str | None:
    """A code pydantic found no problem with (it is a valid string), or None."""
    return None if refused.failed(*location) else _raw_at(refused, location)


def _readable_date(refused: Refused, location: tuple) -> dt.date | None:
    text = _readable_value(refused, location)
    return None if text is None else dt.date.fromisoformat(text)


def require_store_master(storage: MasterReads, partner_id: str, store_id: str) -> StoreMaster:
    """Currency and country checks need the store's master data, which PUT /stores sends first."""
    store = storage.get_store(partner_id, store_id)
    if store is None:
        raise errors.invalid_payload(
            [
                FieldProblem(
                    "store_id",
                    f"no store master data for {store_id} yet; send it with "
                    "PUT /stores before its transactions and daily close",
                )
            ]
        )
    return store


def store_currency_problem(path: str, currency: str, store: StoreMaster) -> list[FieldProblem]:
    if currency == store.currency:
        return []
    return [FieldProblem(path, f"must equal the store currency ({store.currency})")]


def _row(record: TradeRecord, amounts: RecordAmounts, meaning: Hash | None = None) -> TradeRecordRow:
    # Positional, in the order of TradeRecordRow's fields: 15 keywords took twice as long for a batch's
    # 500 rows (1.8 against 0.9 ms); tests/unit/test_record_rows.py checks each field by name.
    return TradeRecordRow(
        record.trade_record_id,
        record.version,
        record.last_modified_at,
        record.store_id,
        record.business_date,
        record.source_transaction_type,
        len(record.items),  # item_rows
        len(record.payments),  # payment_rows
        amounts.total_amount,
        amounts.tax_amount,
        amounts.tip_amount,
        amounts.payments_by_type,
        document_json(record, meaning),
        tuple([payment.payment_id for payment in record.payments]),
        product_lines(record),
    )


def product_lines(record: TradeRecord) -> dict[str, int]:
    """Item lines per product_id: what HQ's list of products not (yet) in the master counts."""
    lines: dict[str, int] = {}
    for item in record.items:  # a third of the time of dict(Counter(...)), which builds two mappings
        lines[item.product_id] = lines.get(item.product_id, 0) + 1
    return lines


def post_trade_records(
    storage: TradeRecordsStorage,
    queue: DelayedQueue,
    partner: Partner,
    body: bytes,
    delay_seconds: int,
    *,
    validate_only: bool = False,
) -> BatchOutcome:
    read = read_batch(TradeRecordsBatch, body)  # the one parse of a valid batch (ingest/one_parse.py)
    key = resend_key(body, StoreDayKey, None if read is None else read.values(StoreDayKey.model_fields))
    resent = (
        None if key is None else known_batch_of(storage, partner.partner_id, "trade-records", body, key, resent_meaning)
    )
    if resent is not None:
        if resent.replayed and not validate_only:
            finish_resent(storage, queue, partner.partner_id, resent.stored, delay_seconds)
        if resent.stored is not None and resent.stored.kind == "trade-records":
            resent.warnings += resent_moved_warnings(resent.stored, body)
        return resent
    known_store = None if key is None else storage.get_store(partner.partner_id, key.store_id)
    exponent = None if known_store is None else currency_exponent(known_store.currency)
    # confirmed from what was read, the places of the store's currency included; None: the slow way (`parse`)
    # says why, or confirms
    exact = None if exponent is None or read is None else validated_once(TradeRecordsBatch, body, read, exponent)
    del read  # a batch the slow way reads no longer needs it
    batch, unknown = (exact, []) if exact is not None else parse(TradeRecordsBatch, body, _readable_problems)
    access.require_registered(storage, partner.partner_id, [batch.store_id])
    store = (
        known_store
        if known_store is not None and known_store.store_id == batch.store_id
        else require_store_master(storage, partner.partner_id, batch.store_id)
    )
    problems, amounts = _record_problems(batch, store, None if exact is None else exponent)
    raise_if_any(problems + retired_day_problems(storage, batch.business_date), body)

    standard_of = storage.get_mapping(partner.partner_id).standard_code_of()
    known_payment_types = set(payment_directions_in_effect(storage.payment_directions(partner.partner_id)))
    warnings: list[BatchWarning] = []
    for index, (record, money) in enumerate(zip(batch.trade_records, amounts, strict=True)):
        path = f"trade_records[{index}]"
        warnings += record_warnings(
            path,
            record,
            money,
            standard_of.get(record.source_transaction_type),
            known_payment_types,
            store.time_zone,
            store.workday_start,
        )
        warnings += protection_warnings(path, record, store.country_code)
    stored_users = storage.trade_records_by_payment_id(partner.partner_id, batch_payment_ids(batch.trade_records))
    warnings += reused_payment_ids(batch.trade_records, stored_users)
    meaning = meaning_of_records(batch)  # each document is added to it as it is written
    rows = [_row(record, money, meaning) for record, money in zip(batch.trade_records, amounts, strict=True)]
    raise_if_any(oversized_records(rows), body)
    marker = trade_records_marker(partner.partner_id, batch, len(rows), body, meaning.hexdigest())
    warnings += repeated_batch_seq(storage, marker)
    if exact is None:  # the fast path refuses "" where the answer warns: only the slow way meets one
        warnings += empty_value_warnings(warned_empty_values(TradeRecordsBatch, body))
    warnings += unknown_member_warnings(unknown)
    saved = []

    def save(marker: BatchMarker) -> BatchMarker | None:
        saved.append(storage.save_trade_records(marker, rows))
        return saved[-1].existing

    outcome = accept(storage, marker, save, warnings, sent_batch_id=batch.batch_id, validate_only=validate_only)
    if outcome.replayed:  # a concurrent twin was first
        if not validate_only:
            twin = storage.find_batch(partner.partner_id, marker.batch_id)
            finish_resent(storage, queue, partner.partner_id, twin, delay_seconds)
            outcome.warnings += resent_moved_warnings(twin, body)
        return outcome
    if validate_only:  # what saving would change, read instead of written
        stored = storage.trade_record_versions(partner.partner_id, [row.trade_record_id for row in rows])
        outcome.warnings += moved_warnings(batch, record_changes(rows, stored).moves)
        return outcome
    changes = saved[-1].changes
    outcome.warnings += moved_warnings(batch, changes.moves)
    faults.point("records.saved")
    reopen_changed_days(
        storage, queue, partner.partner_id, StoreDay(batch.store_id, batch.business_date), changes, delay_seconds
    )
    return outcome
