"""Builders of trade records and daily closes whose amounts are consistent by construction.

Amounts are computed here from quantities and prices (in minor units), so a test's expected
totals are derived from its inputs rather than typed in.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from decimal import Decimal

from core.money import format_minor_units


def new_id(prefix: str = "T") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@dataclass
class Line:
    product_id: str
    quantity: int
    unit_price: int  # minor units
    discount: int = 0
    product_type: str = "SINGLE"
    parent_line_no: int | None = None
    modifiers: list[dict] = field(default_factory=list)

    @property
    def amount(self) -> int:
        return self.quantity * self.unit_price - self.discount


@dataclass
class Pay:
    amount: int
    payment_type: str = "SALE"
    method: str = "CASH"
    tip: int = 0


def trade_record(
    store_id: str,
    business_date: str,
    lines: list[Line],
    payments: list[Pay] | None = None,
    *,
    currency: str = "USD",
    exponent: int = 2,
    source_type: str = "01",
    tax: int = 0,
    service_charge: int = 0,
    tip: int = 0,
    rounding: int = 0,
    order_discount: int = 0,
    prices_include_tax: bool = False,
    version: int = 1,
    trade_record_id: str | None = None,
    last_modified_at: str = "2026-11-20T20:00:00Z",
    opened_at: str = "2026-11-20T12:00:00-05:00",
    **changes,
) -> dict:
    money = lambda minor: format_minor_units(minor, exponent)  # noqa: E731
    subtotal = sum(line.amount for line in lines if line.parent_line_no is None)
    total = subtotal - order_discount + service_charge + tip + rounding + (0 if prices_include_tax else tax)
    if payments is None:
        payments = [Pay(total if total >= 0 else -total, "SALE" if total >= 0 else "REFUND", tip=tip)]
    record = {
        "trade_record_id": trade_record_id or new_id(),
        "version": version,
        "store_id": store_id,
        "business_date": business_date,
        "source_transaction_type": source_type,
        "order_type": "DINE_IN",
        "order_source": "POS",
        "status": "COMPLETED",
        "opened_at": opened_at,
        "closed_at": opened_at,
        "currency": currency,
        "prices_include_tax": prices_include_tax,
        "subtotal_amount": money(subtotal),
        "discount_amount": money(order_discount),
        "tax_amount": money(tax),
        "service_charge_amount": money(service_charge),
        "tip_amount": money(tip),
        "rounding_amount": money(rounding),
        "total_amount": money(total),
        "last_modified_at": last_modified_at,
        "items": [
            {
                "line_no": number,
                "parent_line_no": line.parent_line_no,
                "product_id": line.product_id,
                "product_name": line.product_id,
                "product_type": line.product_type,
                "quantity": str(line.quantity),
                "unit_price": money(line.unit_price),
                "discount_amount": money(line.discount),
                "line_amount": money(line.amount),
                "modifiers": line.modifiers,
                "is_voided": False,
            }
            for number, line in enumerate(lines, start=1)
        ],
        "payments": [
            {
                "payment_id": new_id("PAY"),
                "payment_type": p.payment_type,
                "payment_method": p.method,
                "amount": money(p.amount),
                "tip_amount": money(p.tip),
                "paid_at": opened_at,
            }
            for p in payments
        ],
    }
    record.update(changes)
    return record


def trade_batch(store_id: str, business_date: str, records: list[dict], batch_seq: int = 1) -> dict:
    return {
        "batch_id": str(uuid.uuid4()),
        "store_id": store_id,
        "business_date": business_date,
        "batch_seq": batch_seq,
        "trade_records": records,
    }


def totals_of(records: list[dict], revenue_codes: set[str], directions: dict[str, int], exponent: int = 2) -> dict:
    """Control totals as a POS computes them, from the records it sent (latest versions only)."""

    def minor(text: str) -> int:
        return int(Decimal(text).scaleb(exponent))

    net = sum(
        minor(r["total_amount"]) - minor(r["tax_amount"]) - minor(r["tip_amount"])
        for r in records
        if r["source_transaction_type"] in revenue_codes
    )
    payments = sum(minor(p["amount"]) * directions[p["payment_type"]] for r in records for p in r["payments"])
    return {
        "trade_record_count": len({r["trade_record_id"] for r in records}),
        "item_row_count": sum(len(r["items"]) for r in records),
        "payment_row_count": sum(len(r["payments"]) for r in records),
        "net_sales_amount": format_minor_units(net, exponent),
        "tax_amount": format_minor_units(sum(minor(r["tax_amount"]) for r in records), exponent),
        "tip_amount": format_minor_units(sum(minor(r["tip_amount"]) for r in records), exponent),
        "payment_total_amount": format_minor_units(payments, exponent),
    }


def daily_close(
    store_id: str, business_date: str, totals: dict, batch_count: int = 1, currency: str = "USD", **changes
) -> dict:
    return {
        "batch_id": str(uuid.uuid4()),
        "store_id": store_id,
        "business_date": business_date,
        "batch_count": batch_count,
        **totals,
        "currency": currency,
        "closed_at": "2026-11-21T04:05:00Z",
        **changes,
    }
