"""A reconciled store-day as the four datasets' Arrow tables (export/schemas.py): its latest records, their
item lines and payments, each in the order of trade_record_id then as received, and its close with its result.

Built column by column, never value by value in Python (decision 0087): Arrow's
JSON reader parses the day's documents into columns; amounts arrive as the text the partner wrote (exactly the
currency's places) and Arrow casts them to the datasets' decimal: exact, never a float (a place too many fails
the cast rather than being rounded). Times with an offset become UTC in the same way. What the narrow fields
hold (minor units, epoch microseconds) becomes decimals and times by integer arithmetic."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from decimal import Decimal

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from core.documents_page import DocumentsPage
from core.money import currency_exponent
from core.records import ClosedDay
from export.documents import Documents, read_documents
from export.schemas import AMOUNT, AMOUNT_SCALE, DAILY_CLOSES, ITEM_LINES, PAYMENTS, TIMESTAMP, TRADE_RECORDS
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
        self.revenue = {code: _is_revenue(code) for code in set(standard_of.values())}


def store_day_tables(close: ClosedDay, pages: Iterable[DocumentsPage], resolution: Resolution) -> dict[str, pa.Table]:
    """The store-day's four tables. `pages` hold its latest records in any order (read page by page)."""
    exponent = currency_exponent(close.currency) or 0
    day = read_documents(pages)
    return {
        "trade_records": _trade_records(close.store_id, day, exponent, resolution),
        "item_lines": _lines(close.store_id, day, "items", ITEM_LINES, {"modifiers": day.modifiers}),
        "payments": _lines(close.store_id, day, "payments", PAYMENTS, {}, resolution.directions),
        "daily_closes": _close_table(close, exponent),
    }


def _trade_records(store_id: str, day: Documents, exponent: int, resolution: Resolution) -> pa.Table:
    narrow = day.narrow
    standard = _looked_up(narrow.column("source_types"), resolution.standard_of, pa.string())
    net_sales = pc.subtract_checked(
        narrow.column("total_minor"), pc.add_checked(narrow.column("tax_minor"), narrow.column("tip_minor"))
    )
    computed = {
        "store_id": pa.repeat(store_id, day.records),
        "trade_record_id": narrow.column("trade_record_ids"),
        "version": narrow.column("versions"),
        "last_modified_at": narrow.column("last_modified_us").cast(TIMESTAMP),
        "source_transaction_type": narrow.column("source_types"),
        "standard_transaction_type": standard,
        "is_revenue": _looked_up(standard, resolution.revenue, pa.bool_()),
        "currency_exponent": pa.repeat(pa.scalar(exponent, pa.int8()), day.records),
        "net_sales_amount": _amount_of_minor_units(net_sales, exponent),
        "item_row_count": narrow.column("item_rows"),
        "payment_row_count": narrow.column("payment_rows"),
        "tax_lines": day.tax_lines,
    }
    return _from_columns(TRADE_RECORDS, computed, day.parsed)


def _lines(
    store_id: str,
    day: Documents,
    name: str,
    schema: pa.Schema,
    computed: dict[str, pa.Array],
    directions: dict[str, int] | None = None,
) -> pa.Table:
    """The item lines or the payments of every record, with the record's store, id and currency."""
    lists = day.parsed.column(name).combine_chunks()
    lines = pc.list_flatten(lists)
    records = pc.list_parent_indices(lists)
    columns = {
        **computed,
        "store_id": pa.repeat(store_id, len(lines)),
        "trade_record_id": day.narrow.column("trade_record_ids").take(records),
        "currency": day.parsed.column("currency").take(records),
    }
    if directions is not None:
        columns["direction"] = _looked_up(lines.field("payment_type"), directions, pa.int8())
    return _from_columns(schema, columns, pa.RecordBatch.from_struct_array(lines))


def _from_columns(
    schema: pa.Schema, computed: Mapping[str, pa.Array | pa.ChunkedArray], parsed: pa.Table | pa.RecordBatch
) -> pa.Table:
    """The schema's columns: those computed, else those parsed from the documents, cast to the schema."""
    columns = []
    for field in schema:
        column = computed[field.name] if field.name in computed else parsed.column(field.name)
        columns.append(column if column.type == field.type else column.cast(field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _looked_up(keys: pa.Array | pa.ChunkedArray, mapping: Mapping[str, object], value_type: pa.DataType) -> pa.Array:
    """mapping[key] for each key; null where the key is null or not in the mapping."""
    positions = pc.index_in(keys, value_set=pa.array(list(mapping), pa.string()))
    return pa.array(list(mapping.values()), value_type).take(positions)


def _amount_of_minor_units(minor: pa.Array, exponent: int) -> pa.Array:
    """Minor units as the datasets' decimal: 489 with exponent 2 -> 4.8900 (the unscaled value 48900)."""
    unscaled = pc.multiply_checked(minor, 10 ** (AMOUNT_SCALE - exponent))
    return unscaled.cast(pa.decimal128(38, 0)).view(AMOUNT)


def _is_revenue(standard_code: str) -> bool:
    entry = standard_transaction_type(standard_code)
    return entry is not None and entry.get("is_revenue", False)


def _close_table(close: ClosedDay, exponent: int) -> pa.Table:
    """The close and its result as one row; amounts from their text by Decimal (exact: a place too many
    fails rather than being rounded), times as they are (UTC)."""
    expected: Mapping[str, object] = close.expected
    actual: Mapping[str, object] = close.actual or {}
    row: dict[str, object] = {
        "store_id": close.store_id,
        "close_batch_id": close.close_batch_id,
        "currency": close.currency,
        "currency_exponent": exponent,
        "received_at": close.received_at,
        "status": close.status,
        "checked_at": close.checked_at,
        "expected_batch_count": expected.get("batch_count"),
        "differences": list(close.differences),
    }
    for prefix, totals in (("expected", expected), ("actual", actual)):
        for count in COUNT_FIELDS:
            row[f"{prefix}_{count}"] = totals.get(count)
        for field in AMOUNT_FIELDS:
            amount = totals.get(field)
            row[f"{prefix}_{field}"] = None if amount is None else Decimal(str(amount))
    return pa.Table.from_pylist([row], schema=DAILY_CLOSES)


def parquet_bytes(table: pa.Table) -> bytes:
    """The table as a Parquet file: the same table gives the same bytes (no time or host in them)."""
    sink = io.BytesIO()
    pq.write_table(table, sink, **PARQUET_OPTIONS)
    return sink.getvalue()
