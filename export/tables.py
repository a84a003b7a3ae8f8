"""A reconciled store-day as the four datasets' Arrow tables (export/schemas.py): its latest records, their
item lines and payments, each in the order of trade_record_id then as received, and its close with its result.

Amounts are read from the documents as the partner wrote them (exactly the currency's places) and cast by
Arrow to the datasets' decimal: exact, never a float. Times with an offset become UTC."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from core.clock import to_utc_text
from core.money import currency_exponent, format_minor_units
from core.records import ClosedDay, TradeRecordRow
from export.schemas import (
    AMOUNT,
    DAILY_CLOSES,
    ITEM_LINES,
    PAYMENTS,
    QUANTITY,
    TIMESTAMP,
    TRADE_RECORDS,
)
from reconcile.totals import AMOUNT_FIELDS, COUNT_FIELDS
from reference.codes import standard_transaction_type

# Parquet as every reader named in docs/exports.md reads it; zstd: a third smaller than snappy here.
PARQUET_OPTIONS = {"compression": "zstd"}


class Resolution:
    """How the export names what the partner's codes mean, as reconciliation resolves them: the partner's
    mapping in effect (source code -> standard type) and the payment directions in effect."""

    def __init__(self, standard_of: dict[str, str], directions: dict[str, int]) -> None:
        self.standard_of = standard_of
        self.directions = directions
        self._revenue = {code: _is_revenue(code) for code in set(standard_of.values())}

    def is_revenue(self, standard: str | None) -> bool | None:
        return None if standard is None else self._revenue[standard]


def _table(columns: dict[str, list], schema: pa.Schema) -> pa.Table:
    """Columns as Python values into the schema; decimals and times go through text, which Arrow casts
    exactly (a place too many fails the cast rather than being rounded)."""
    arrays = []
    for field in schema:
        values = columns[field.name]
        if field.type in (AMOUNT, QUANTITY, TIMESTAMP):
            arrays.append(pa.array(values, pa.string()).cast(field.type))
        else:
            arrays.append(pa.array(values, field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def store_day_tables(
    close: ClosedDay, records: Iterable[TradeRecordRow], resolution: Resolution
) -> dict[str, pa.Table]:
    """The store-day's four tables. `records` are its latest records in any order (read page by page)."""
    exponent = currency_exponent(close.currency) or 0
    store_id = close.store_id
    trades: dict[str, list] = {field.name: [] for field in TRADE_RECORDS}
    items: dict[str, list] = {field.name: [] for field in ITEM_LINES}
    payments: dict[str, list] = {field.name: [] for field in PAYMENTS}
    for row in sorted(records, key=lambda row: row.trade_record_id):
        document = orjson.loads(row.document_json)
        currency = document["currency"]
        standard = resolution.standard_of.get(row.source_transaction_type)
        values = {
            "store_id": store_id,
            "trade_record_id": row.trade_record_id,
            "version": row.version,
            "last_modified_at": to_utc_text(row.last_modified_at),
            "source_transaction_type": row.source_transaction_type,
            "standard_transaction_type": standard,
            "is_revenue": resolution.is_revenue(standard),
            "currency_exponent": exponent,
            "net_sales_amount": format_minor_units(row.total_minor - row.tax_minor - row.tip_minor, exponent),
            "item_row_count": row.item_rows,
            "payment_row_count": row.payment_rows,
            "tax_lines": orjson.dumps(document.get("tax_lines") or []).decode(),
        }
        for name, column in trades.items():
            column.append(values[name] if name in values else document.get(name))
        for item in document["items"]:
            line = {**item, "store_id": store_id, "trade_record_id": row.trade_record_id, "currency": currency}
            line["modifiers"] = orjson.dumps(item.get("modifiers") or []).decode()
            for name, column in items.items():
                column.append(line.get(name))
        for payment in document["payments"]:
            paid = {**payment, "store_id": store_id, "trade_record_id": row.trade_record_id, "currency": currency}
            paid["direction"] = resolution.directions.get(payment["payment_type"])
            for name, column in payments.items():
                column.append(paid.get(name))
    return {
        "trade_records": _table(trades, TRADE_RECORDS),
        "item_lines": _table(items, ITEM_LINES),
        "payments": _table(payments, PAYMENTS),
        "daily_closes": _table(_close_columns(close, exponent), DAILY_CLOSES),
    }


def _is_revenue(standard_code: str) -> bool:
    entry = standard_transaction_type(standard_code)
    return entry is not None and entry.get("is_revenue", False)


def _close_columns(close: ClosedDay, exponent: int) -> dict[str, list]:
    expected: Mapping[str, object] = close.expected
    actual: Mapping[str, object] = close.actual or {}
    values: dict[str, object] = {
        "store_id": close.store_id,
        "close_batch_id": close.close_batch_id,
        "currency": close.currency,
        "currency_exponent": exponent,
        "received_at": to_utc_text(close.received_at),
        "status": close.status,
        "checked_at": None if close.checked_at is None else to_utc_text(close.checked_at),
        "expected_batch_count": expected.get("batch_count"),
        "differences": list(close.differences),
    }
    for prefix, totals in (("expected", expected), ("actual", actual)):
        for name in (*COUNT_FIELDS, *AMOUNT_FIELDS):
            values[f"{prefix}_{name}"] = totals.get(name)
    return {name: [value] for name, value in values.items()}


def parquet_bytes(table: pa.Table) -> bytes:
    """The table as a Parquet file: the same table gives the same bytes (no time or host in them)."""
    sink = io.BytesIO()
    pq.write_table(table, sink, **PARQUET_OPTIONS)
    return sink.getvalue()
