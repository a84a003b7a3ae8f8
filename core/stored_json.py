"""The JSON that storage keeps inside the records of core/records.py: a reconciliation result's totals and
details (as GET /daily-close answers them too: ingest/wire/responses.py DailyCloseStatus, member for
member), the records moved out of a day, what a batch changed. TypedDicts, so that the stored and answered
form is the value itself, read by literal keys (decision 0083)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

# A JSON object kept as it came (a master document, a close's totals as sent): its wire model reads it,
# the code around it does not read it field by field.
JsonObject = dict[str, Any]

CountField = Literal["trade_record_count", "item_row_count", "payment_row_count"]
AmountField = Literal["net_sales_amount", "tax_amount", "tip_amount", "payment_total_amount"]
TotalField = Literal[CountField, AmountField]


class ResultTotals(TypedDict):
    """A store-day's control totals as a result stores and answers them (the wire's ControlTotals): counts,
    and amounts as decimal text in the currency's minor units ("12.50")."""

    trade_record_count: int
    item_row_count: int
    payment_row_count: int
    net_sales_amount: str
    tax_amount: str
    tip_amount: str
    payment_total_amount: str


class MovedOut(TypedDict):
    """A record that a later version moved out of a store-day, as the day keeps it (and its result's
    details answer it)."""

    trade_record_id: str
    to_store_id: str
    to_business_date: str  # YYYY-MM-DD


class TypeBreakdown(TypedDict):
    """What a store-day's records of one source_transaction_type added to its totals (payments aside: a day
    counts them per payment_type), and how HQ counted that type."""

    standard_type: str | None  # None: unmapped
    is_revenue: bool
    trade_record_count: int
    item_row_count: int
    payment_row_count: int
    net_sales_amount: str
    tax_amount: str
    tip_amount: str


class ResultDetails(TypedDict):
    """What a result keeps beyond the totals (the wire's ReconciliationDetails, member for member): what
    helps a partner find the cause of a mismatch, and the standard type each source code was resolved to.
    The last two are absent from results saved before they were kept."""

    raw_differences: dict[str, str | int]  # actual - expected of each TotalField that differs at all
    batch_count_received: int
    batch_count_expected: int
    batch_seqs_received: list[int]
    missing_batch_seqs: list[int]
    unmapped_source_codes: list[str]
    unknown_payment_types: list[str]
    source_codes: list[str]
    mapped_source_codes: NotRequired[dict[str, str]]
    records_moved_out: NotRequired[list[MovedOut]]
    by_transaction_type: NotRequired[dict[str, TypeBreakdown]]


class RecordChangesJson(TypedDict):
    """RecordChanges as a batch marker keeps it: each move is [trade_record_id, left store_id, left
    business_date, to store_id, to business_date]."""

    newer: int
    moves: list[list[str]]
