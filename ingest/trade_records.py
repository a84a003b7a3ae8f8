"""POST /trade-records: a batch of one store's transactions for one business date (spec 4.7).

Order of checks: the body (400), the store (403), then what needs stored data: the store's
currency and country (400). Recording rules that HQ can check become warnings; the records are
still accepted. Each stored record carries its totals in minor units so that reconciliation
never re-reads whole records.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterator

from core.errors import FieldProblem
from core.money import currency_exponent, to_minor_units
from core.ports import Partner, Storage, StoreMaster, TradeRecordRow
from ingest import access
from ingest.batches import BatchOutcome, Warning, accept, new_marker
from ingest.data_protection import protection_problems
from ingest.parsing import duplicates, money_problems, parse, raise_if_any
from ingest.trade_rules import record_warnings
from ingest.wire import TradeRecord, TradeRecordsBatch
from reconcile.totals import payment_directions


def money_fields(path: str, record: TradeRecord) -> Iterator[tuple[str, str | None]]:
    """Every amount of a record with its path; all of them use the record's currency."""
    for name in ("subtotal_amount", "discount_amount", "tax_amount", "service_charge_amount", "tip_amount",
                 "rounding_amount", "total_amount"):
        yield f"{path}.{name}", getattr(record, name)
    for i, item in enumerate(record.items):
        for name in ("unit_price", "discount_amount", "line_amount"):
            yield f"{path}.items[{i}].{name}", getattr(item, name)
        for k, modifier in enumerate(item.modifiers):
            yield f"{path}.items[{i}].modifiers[{k}].price_delta", modifier.price_delta
    for i, payment in enumerate(record.payments):
        yield f"{path}.payments[{i}].amount", payment.amount
        yield f"{path}.payments[{i}].tip_amount", payment.tip_amount
    for i, line in enumerate(record.tax_lines):
        yield f"{path}.tax_lines[{i}].taxable_amount", line.taxable_amount
        yield f"{path}.tax_lines[{i}].tax_amount", line.tax_amount


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


def _record_problems(path: str, record: TradeRecord, store: StoreMaster) -> list[FieldProblem]:
    problems = store_currency_problem(f"{path}.currency", record.currency, store)
    problems += money_problems(list(money_fields(path, record)), record.currency)
    problems += protection_problems(path, record, store.country_code)
    return problems


def _row(record: TradeRecord, exponent: int) -> TradeRecordRow:
    payments: dict[str, int] = defaultdict(int)
    for payment in record.payments:
        payments[payment.payment_type] += to_minor_units(payment.amount, exponent)
    return TradeRecordRow(
        trade_record_id=record.trade_record_id,
        version=record.version,
        last_modified_at=record.last_modified_at,
        store_id=record.store_id,
        business_date=record.business_date,
        source_transaction_type=record.source_transaction_type,
        item_rows=len(record.items),
        payment_rows=len(record.payments),
        total_minor=to_minor_units(record.total_amount, exponent),
        tax_minor=to_minor_units(record.tax_amount, exponent),
        tip_minor=to_minor_units(record.tip_amount, exponent),
        payments_minor=dict(payments),
        document_json=record.model_dump_json(),
    )


def post_trade_records(storage: Storage, partner: Partner, body: bytes) -> BatchOutcome:
    batch = parse(TradeRecordsBatch, body)
    raise_if_any(_structure_problems(batch))
    access.require_registered(storage, partner.partner_id, [batch.store_id])
    store = require_store_master(storage, partner.partner_id, batch.store_id)
    problems: list[FieldProblem] = []
    for index, record in enumerate(batch.trade_records):
        problems += _record_problems(f"trade_records[{index}]", record, store)
    raise_if_any(problems)

    exponent = currency_exponent(store.currency)
    standard_of = storage.get_mapping(partner.partner_id).standard_code_of()
    known_payment_types = set(payment_directions(storage.payment_directions(partner.partner_id)))
    warnings: list[Warning] = []
    for index, record in enumerate(batch.trade_records):
        warnings += record_warnings(f"trade_records[{index}]", record, exponent,
                                    standard_of.get(record.source_transaction_type), known_payment_types,
                                    store.time_zone, store.workday_start)
    rows = [_row(record, exponent) for record in batch.trade_records]
    marker = new_marker(partner.partner_id, batch.batch_id, "trade-records", len(rows), body,
                        store_id=batch.store_id, business_date=batch.business_date, batch_seq=batch.batch_seq)
    return accept(storage, marker, lambda m: storage.save_trade_records(m, rows), warnings)
