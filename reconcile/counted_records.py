"""A store-day's records as HQ counts them, a page at a time: GET /pos/v1/trade-records (the partner
compares them with its own: `pos-partner explain`), HQ's store-day page. Each record's counted amounts come from
reconciliation's own rule (totals.counted_record), so a page's amounts add up to the day's totals
(decision 0096)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, TypedDict

from core.day_records import CONTINUATION_PROBLEM, DayRecord, DayRecordReads, DayRecordsQuery, continuation_of
from core.errors import FieldProblem, invalid_payload
from core.money import currency_exponent, format_minor_units
from core.ports import MasterReads, Reconciliations
from core.stored_json import MovedOut, ResultTotals
from reconcile.totals import counted_record, is_revenue
from reference.codes import payment_directions_in_effect

# Why a record counts otherwise than it may look: a partner's close often counts these another way.
UNMAPPED_TYPE = "UNMAPPED_TYPE"  # in the counts, not in net sales, until the mapping names its type
VOIDED_COUNTED_BY_TYPE = "VOIDED_COUNTED_BY_TYPE"  # VOIDED, but its type is revenue (decision 0027)
UNKNOWN_PAYMENT_DIRECTION = "UNKNOWN_PAYMENT_DIRECTION"  # a payment_type HQ has no direction for: not counted
COUNTING_NOTES = (UNMAPPED_TYPE, VOIDED_COUNTED_BY_TYPE, UNKNOWN_PAYMENT_DIRECTION)


class CountedStorage(DayRecordReads, MasterReads, Reconciliations, Protocol):
    """What the read uses of storage: the day's records, the mapping, directions and store, the close."""


class CountedPayment(TypedDict):
    payment_type: str
    amount: str  # the record's payments of this type, summed as sent
    direction: int | None  # None: HQ has no direction for it yet, so it is not counted
    counted_amount: str


class CountedRecord(TypedDict):
    trade_record_id: str
    version: int
    transaction_type: str
    standard_type: str | None
    is_revenue: bool
    status: str | None
    counted: ResultTotals
    payments: list[CountedPayment]
    batch_id: str | None
    counting_notes: list[str]


class CountedType(TypedDict):
    standard_type: str
    is_revenue: bool


class CountingInEffect(TypedDict):
    """The rules the page was counted by: the partner's mapping with each standard type's revenue flag, and
    the payment directions in effect (HQ's suggested list with the partner's own)."""

    transaction_types: dict[str, CountedType]
    payment_directions: dict[str, int]


class CountedPage(TypedDict):
    store_id: str
    business_date: str
    currency: str | None
    trade_records: list[CountedRecord]
    moved_out: list[MovedOut]
    counting: CountingInEffect | None  # the first page's only
    continuation: str | None


@dataclass(frozen=True)
class CountingRules:
    """The partner's mapping and payment directions in effect, and the day's currency places."""

    standard_of: dict[str, str]
    directions: dict[str, int]
    exponent: int


def counting_rules(storage: CountedStorage, partner_id: str, currency: str | None) -> CountingRules:
    return CountingRules(
        storage.get_mapping(partner_id).standard_code_of(),
        payment_directions_in_effect(storage.payment_directions(partner_id)),
        (currency_exponent(currency) if currency else None) or 0,
    )


def day_currency(storage: CountedStorage, partner_id: str, store_id: str) -> str | None:
    store = storage.get_store(partner_id, store_id)
    return None if store is None else store.currency


def counted_page(storage: CountedStorage, partner_id: str, query: DayRecordsQuery) -> CountedPage:
    """A page of the store-day's latest records as HQ counts them; the first page (no cursor) also lists
    the records a later version moved to another store-day (kept with the day's close, decision 0048) and
    the counting rules in effect, by which a client counts its own records (decision 0097)."""
    try:
        page = storage.day_records(
            partner_id,
            query.store_id,
            query.business_date,
            limit=query.limit,
            cursor=query.cursor,
            source_type=query.source_type,
        )
    except ValueError:  # a continuation whose cursor the store cannot read (altered, or of another backend)
        raise invalid_payload([FieldProblem("continuation", CONTINUATION_PROBLEM)]) from None
    currency = day_currency(storage, partner_id, query.store_id)
    rules = counting_rules(storage, partner_id, currency)
    moved_out: list[MovedOut] = []
    counting: CountingInEffect | None = None
    if query.cursor is None:
        closed = storage.get_closed_day(partner_id, query.store_id, query.business_date)
        moved_out = [] if closed is None else list(closed.moved_out)
        counting = CountingInEffect(
            transaction_types={
                code: CountedType(standard_type=standard, is_revenue=is_revenue(standard))
                for code, standard in sorted(rules.standard_of.items())
            },
            payment_directions=dict(sorted(rules.directions.items())),
        )
    return CountedPage(
        store_id=query.store_id,
        business_date=query.business_date.isoformat(),
        currency=currency,
        trade_records=[count(record, rules) for record in page.records],
        moved_out=moved_out,
        counting=counting,
        continuation=None if page.cursor is None else continuation_of(query, page.cursor),
    )


def count(record: DayRecord, rules: CountingRules) -> CountedRecord:
    """One record as HQ counts it, by reconciliation's rule."""
    totals = counted_record(record.sums(), rules.standard_of, rules.directions)
    standard = rules.standard_of.get(record.source_type)
    revenue = is_revenue(standard)
    payments = [
        CountedPayment(
            payment_type=payment_type,
            amount=format_minor_units(amount, rules.exponent),
            direction=rules.directions.get(payment_type),
            counted_amount=format_minor_units(amount * rules.directions.get(payment_type, 0), rules.exponent),
        )
        for payment_type, amount in sorted(record.payments_minor.items())
    ]
    notes = []
    if standard is None:
        notes.append(UNMAPPED_TYPE)
    if record.status == "VOIDED" and revenue:
        notes.append(VOIDED_COUNTED_BY_TYPE)
    if totals.unknown_payment_types:
        notes.append(UNKNOWN_PAYMENT_DIRECTION)
    return CountedRecord(
        trade_record_id=record.trade_record_id,
        version=record.version,
        transaction_type=record.source_type,
        standard_type=standard,
        is_revenue=revenue,
        status=record.status,
        counted=totals.as_wire(rules.exponent),
        payments=payments,
        batch_id=record.batch_id,
        counting_notes=notes,
    )
