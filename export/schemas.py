"""The four datasets' Arrow schemas: one schema per dataset, the same in every file, whatever the currency.

Amounts are decimal128(38, 4): 4 places hold every ISO 4217 currency's minor units exactly (the most any has),
so stores in USD, JPY and CLF share one schema and readers never reconcile file schemas; the currency and its
exponent are columns (decision 0085). Quantities and rates carry up to 8 places (the wire's
DecimalString). Times are timestamp[us, UTC]. partner_id and business_date are not columns: they are the
Hive partitions of the file's path (export/layout.py), which readers add as columns.
"""

from __future__ import annotations

import pyarrow as pa

from core.money import RECORD_AMOUNTS
from reconcile.totals import AMOUNT_FIELDS, COUNT_FIELDS

AMOUNT = pa.decimal128(38, 4)
AMOUNT_SCALE = 4
QUANTITY = pa.decimal128(38, 8)
TIMESTAMP = pa.timestamp("us", tz="UTC")


TRADE_RECORDS = pa.schema(
    [
        ("store_id", pa.string()),
        ("trade_record_id", pa.string()),
        ("version", pa.int64()),
        ("last_modified_at", TIMESTAMP),
        ("source_transaction_type", pa.string()),
        # The partner's mapping in effect: null when the source code is not mapped.
        ("standard_transaction_type", pa.string()),
        ("is_revenue", pa.bool_()),
        ("order_type", pa.string()),
        ("order_source", pa.string()),
        ("order_source_detail", pa.string()),
        ("status", pa.string()),
        ("opened_at", TIMESTAMP),
        ("closed_at", TIMESTAMP),
        ("currency", pa.string()),
        ("currency_exponent", pa.int8()),
        ("prices_include_tax", pa.bool_()),
        *[(name, AMOUNT) for name in RECORD_AMOUNTS],
        # total - tax - tip: what reconciliation sums over the records whose standard type is revenue.
        ("net_sales_amount", AMOUNT),
        ("item_row_count", pa.int64()),
        ("payment_row_count", pa.int64()),
        ("original_trade_record_id", pa.string()),
        ("fiscal_document_no", pa.string()),
        ("employee_id", pa.string()),
        ("guest_count", pa.int64()),
        ("member_id", pa.string()),
        ("tax_lines", pa.string()),  # JSON text, as received
    ]
)

ITEM_LINES = pa.schema(
    [
        ("store_id", pa.string()),
        ("trade_record_id", pa.string()),
        ("line_no", pa.int64()),
        ("parent_line_no", pa.int64()),
        ("product_id", pa.string()),
        ("product_name", pa.string()),
        ("product_type", pa.string()),
        ("quantity", QUANTITY),
        ("currency", pa.string()),
        ("unit_price", AMOUNT),
        ("discount_amount", AMOUNT),
        ("line_amount", AMOUNT),
        ("tax_category", pa.string()),
        ("is_voided", pa.bool_()),
        ("modifiers", pa.string()),  # JSON text, as received
    ]
)

PAYMENTS = pa.schema(
    [
        ("store_id", pa.string()),
        ("trade_record_id", pa.string()),
        ("payment_id", pa.string()),
        ("payment_type", pa.string()),
        # +1, -1 or 0 (not counted) in the payment total; null while HQ has not recorded one for the type.
        ("direction", pa.int8()),
        ("payment_method", pa.string()),
        ("payment_method_detail", pa.string()),
        ("card_last4", pa.string()),
        ("currency", pa.string()),
        ("amount", AMOUNT),
        ("tip_amount", AMOUNT),
        ("paid_at", TIMESTAMP),
        ("original_payment_id", pa.string()),
    ]
)


def _totals(prefix: str) -> list[tuple[str, pa.DataType]]:
    return [(f"{prefix}_{name}", pa.int64()) for name in COUNT_FIELDS] + [
        (f"{prefix}_{name}", AMOUNT) for name in AMOUNT_FIELDS
    ]


DAILY_CLOSES = pa.schema(
    [
        ("store_id", pa.string()),
        ("close_batch_id", pa.string()),
        ("currency", pa.string()),
        ("currency_exponent", pa.int8()),
        ("received_at", TIMESTAMP),
        ("status", pa.string()),  # MATCHED or MISMATCHED
        ("checked_at", TIMESTAMP),
        ("expected_batch_count", pa.int64()),
        *_totals("expected"),
        *_totals("actual"),
        ("differences", pa.list_(pa.string())),
    ]
)

# Dataset name (the first folder of the layout) -> its schema.
DATASETS = {
    "trade_records": TRADE_RECORDS,
    "item_lines": ITEM_LINES,
    "payments": PAYMENTS,
    "daily_closes": DAILY_CLOSES,
}
