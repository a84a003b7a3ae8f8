"""POST /trade-records: a batch of one store's transactions for one business date (spec 4.7).

Order of checks: a known batch_id is answered from its marker (ingest/batches.py), then the body
(400), the store (403), then what needs stored data: the store's currency and country (400).
Recording rules that HQ can check become warnings; the records are still accepted. Each stored
record carries its totals in minor units so that reconciliation never re-reads whole records.
"""

from __future__ import annotations

import orjson

from core.errors import FieldProblem
from core.ports import Partner, Storage, StoreMaster, TradeRecordRow
from ingest import access
from ingest.batches import BatchOutcome, Warning, accept, known_batch, new_marker
from ingest.data_protection import protection_problems, protection_warnings
from ingest.parsing import MoneyReader, duplicates, parse, raise_if_any
from ingest.payment_ids import batch_payment_ids, reused_payment_ids
from ingest.trade_rules import LineAmounts, RecordAmounts, record_warnings
from ingest.wire import MAX_SAFE_INT, StoreDayKey, TradeRecord, TradeRecordsBatch
from reconcile.totals import payment_directions


RECORD_AMOUNTS = ("subtotal_amount", "discount_amount", "tax_amount", "service_charge_amount", "tip_amount",
                  "rounding_amount", "total_amount")


def read_amounts(path: str, record: TradeRecord, reader: MoneyReader) -> RecordAmounts:
    """Every amount of a record, each checked (places, range) and turned into minor units once; the
    problems go to reader, in the order of the record's fields. The sum of each payment_type is stored
    as an integer too, so it is bounded like an amount."""
    read = reader.read
    totals = [read(getattr(record, name), path, name) for name in RECORD_AMOUNTS]
    items = []
    for i, item in enumerate(record.items):
        at = f"{path}.items[{i}]"
        items.append(LineAmounts(read(item.unit_price, at, "unit_price"),
                                 read(item.discount_amount, at, "discount_amount"),
                                 read(item.line_amount, at, "line_amount")))
        for k, modifier in enumerate(item.modifiers):
            read(modifier.price_delta, f"{at}.modifiers[{k}]", "price_delta")
    payments = []
    by_type: dict[str, int] = {}
    for i, payment in enumerate(record.payments):
        at = f"{path}.payments[{i}]"
        amount = read(payment.amount, at, "amount")
        read(payment.tip_amount, at, "tip_amount")
        payments.append(amount)
        by_type[payment.payment_type] = by_type.get(payment.payment_type, 0) + amount
    for i, line in enumerate(record.tax_lines):
        at = f"{path}.tax_lines[{i}]"
        read(line.taxable_amount, at, "taxable_amount")
        read(line.tax_amount, at, "tax_amount")
    for payment_type, total in by_type.items():
        if abs(total) > MAX_SAFE_INT:  # reported at the last payment of the type
            last = max(i for i, payment in enumerate(record.payments) if payment.payment_type == payment_type)
            reader.problem(f"{path}.payments[{last}]", "amount", "with the other payments of its payment_type in "
                           f"this record, this amount adds up to more than {reader.largest()} in absolute value")
    return RecordAmounts(reader.exponent or 0, *totals, items, payments, by_type)


def _structure_problems(batch: TradeRecordsBatch) -> list[FieldProblem]:
    problems = []
    for index, record in enumerate(batch.trade_records):
        path = f"trade_records[{index}]"
        if record.store_id != batch.store_id:
            problems.append(FieldProblem(f"{path}.store_id", "must equal the outer store_id"))
        if record.business_date != batch.business_date:
            problems.append(FieldProblem(f"{path}.business_date", "must equal the outer business_date"))
        problems += duplicates([item.line_no for item in record.items], lambda i: f"{path}.items[{i}].line_no")
        problems += duplicates([p.payment_id for p in record.payments], lambda i: f"{path}.payments[{i}].payment_id")
    return problems


def require_store_master(storage: Storage, partner_id: str, store_id: str) -> StoreMaster:
    """Currency and country checks need the store's master data, which PUT /stores sends first."""
    store = storage.get_store(partner_id, store_id)
    if store is None:
        raise_if_any([FieldProblem("store_id", f"no store master data for {store_id} yet; send it with "
                                               "PUT /stores before its transactions and daily close")])
    return store


def store_currency_problem(path: str, currency: str, store: StoreMaster) -> list[FieldProblem]:
    if currency == store.currency:
        return []
    return [FieldProblem(path, f"must equal the store currency ({store.currency})")]


def _row(record: TradeRecord, amounts: RecordAmounts) -> TradeRecordRow:
    return TradeRecordRow(
        trade_record_id=record.trade_record_id,
        version=record.version,
        last_modified_at=record.last_modified_at,
        store_id=record.store_id,
        business_date=record.business_date,
        source_transaction_type=record.source_transaction_type,
        item_rows=len(record.items),
        payment_rows=len(record.payments),
        total_minor=amounts.total_amount,
        tax_minor=amounts.tax_amount,
        tip_minor=amounts.tip_amount,
        payments_minor=amounts.payments_by_type,
        document_json=document_json(record),
        payment_ids=tuple(payment.payment_id for payment in record.payments),
        product_lines=product_lines(record),
    )


def product_lines(record: TradeRecord) -> dict[str, int]:
    """Item lines per product_id: what HQ's list of products not (yet) in the master counts."""
    lines: dict[str, int] = {}
    for item in record.items:
        lines[item.product_id] = lines.get(item.product_id, 0) + 1
    return lines


def document_json(record: TradeRecord) -> str:
    """The record as stored, written by orjson (it serialises dataclasses natively) in a fifth of the time
    pydantic takes, with the same bytes (tests/test_trade_records.py compares the two)."""
    return orjson.dumps(record, option=orjson.OPT_UTC_Z).decode()


def post_trade_records(storage: Storage, partner: Partner, body: bytes) -> BatchOutcome:
    resent = known_batch(storage, partner.partner_id, "trade-records", body, StoreDayKey)
    if resent is not None:
        return resent
    batch = parse(TradeRecordsBatch, body)
    raise_if_any(_structure_problems(batch))
    access.require_registered(storage, partner.partner_id, [batch.store_id])
    store = require_store_master(storage, partner.partner_id, batch.store_id)
    problems: list[FieldProblem] = []
    amounts: list[RecordAmounts] = []
    for index, record in enumerate(batch.trade_records):
        path = f"trade_records[{index}]"
        problems += store_currency_problem(f"{path}.currency", record.currency, store)
        reader = MoneyReader(record.currency)
        amounts.append(read_amounts(path, record, reader))
        problems += reader.problems
        problems += protection_problems(path, record, store.country_code)
    raise_if_any(problems)

    standard_of = storage.get_mapping(partner.partner_id).standard_code_of()
    known_payment_types = set(payment_directions(storage.payment_directions(partner.partner_id)))
    warnings: list[Warning] = []
    for index, (record, money) in enumerate(zip(batch.trade_records, amounts)):
        warnings += record_warnings(f"trade_records[{index}]", record, money,
                                    standard_of.get(record.source_transaction_type), known_payment_types,
                                    store.time_zone, store.workday_start)
        warnings += protection_warnings(f"trade_records[{index}]", record, store.country_code)
    stored_users = storage.trade_records_by_payment_id(partner.partner_id, batch_payment_ids(batch.trade_records))
    warnings += reused_payment_ids(batch.trade_records, stored_users)
    rows = [_row(record, money) for record, money in zip(batch.trade_records, amounts)]
    marker = new_marker(partner.partner_id, batch, "trade-records", len(rows), body,
                        store_id=batch.store_id, business_date=batch.business_date, batch_seq=batch.batch_seq)
    return accept(storage, marker, lambda m: storage.save_trade_records(m, rows), warnings,
                  sent_batch_id=batch.batch_id)
