"""What one simulated POS connection sends: realistic batches whose daily closes must match.

Each worker is one partner's store: it sends trade-record batches for its current business date (some
records are corrections of earlier ones: a higher version), resends an old batch now and then, polls
statuses and reads reference data, and closes the day with the control totals of what it sent (the
latest versions), then moves to the next date. So every close the run sends must end MATCHED: the
load is also a check that nothing was lost or counted twice under concurrency.
"""

from __future__ import annotations

import datetime as dt
import random
import uuid
from dataclasses import dataclass, field

import orjson

from core.money import format_minor_units

CODE_TYPES = ("transaction-types", "order-types", "order-sources", "payment-methods", "payment-types", "tax-categories")
PRODUCTS = (("P-BURGER", 550), ("P-COLA", 199), ("P-FRIES", 299), ("P-SALAD", 725), ("P-COFFEE", 350), ("P-CAKE", 480))
FIRST_DAY = dt.date(2026, 1, 1)

# Weights of the operations a worker picks from (closed loop: the next starts when one is answered).
MIX = {
    "trade_records": 34,  # a new batch of 20 to 200 records, about 5 % of them corrections
    "resend": 5,  # an earlier batch of the day again: 200 ALREADY_RECEIVED
    "daily_close": 4,  # the day's control totals; the worker moves to the next date
    "status": 20,  # GET daily-close of a day already closed
    "reference": 10,  # GET reference/{code_type}
    "mapping_read": 5,  # GET mappings/transaction-types
    "health": 3,
    "stores_update": 2,  # PUT stores, the master data again
    "products_update": 2,  # PUT products
}


def money(minor: int) -> str:
    return format_minor_units(minor, 2)  # every store of the workload trades in USD


@dataclass
class Sent:
    """What a record contributes to its day's control totals (minor units)."""

    version: int
    items: int
    payments: int
    total: int
    tax: int
    tip: int


@dataclass
class Request:
    endpoint: str  # the name figures are reported under
    method: str
    path: str
    body: bytes | None
    expect: tuple[int, ...]
    records: int = 0


@dataclass
class Worker:
    """One store of one partner, driven by one client connection."""

    partner_id: str
    key: str
    store_id: str
    seed: int
    batch_size: tuple[int, int] = (20, 200)
    rng: random.Random = field(init=False)
    day: dt.date = FIRST_DAY
    batch_seq: int = 0
    sent: dict[str, Sent] = field(default_factory=dict)  # the current day's records, latest versions
    documents: dict[str, dict] = field(default_factory=dict)
    sent_batches: list[bytes] = field(default_factory=list)
    closed_days: list[dt.date] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    # -- set-up ----------------------------------------------------------------------------------

    def setup_requests(self) -> list[Request]:
        return [self._stores(), self._mapping(), self._products()]

    def _stores(self) -> Request:
        body = {
            "batch_id": str(uuid.uuid4()),
            "stores": [
                {
                    "store_id": self.store_id,
                    "store_name": f"Store {self.store_id}",
                    "country_code": "US",
                    "currency": "USD",
                    "time_zone": "America/New_York",
                    "locale": "en-US",
                    "workday_start": "04:00",
                    "prices_include_tax": False,
                    "status": "ACTIVE",
                    "last_modified_at": "2026-01-01T09:00:00Z",
                }
            ],
        }
        return Request("PUT stores", "PUT", "stores", orjson.dumps(body), (202,))

    def _mapping(self) -> Request:
        body = {
            "batch_id": str(uuid.uuid4()),
            "mappings": [
                {"source_code": "01", "source_name": "Sale", "standard_code": "SALE"},
                {"source_code": "02", "source_name": "Refund", "standard_code": "REFUND"},
            ],
        }
        return Request("PUT mappings", "PUT", "mappings/transaction-types", orjson.dumps(body), (202,))

    def _products(self) -> Request:
        body = {
            "batch_id": str(uuid.uuid4()),
            "products": [
                {
                    "product_id": product_id,
                    "name": {"en-US": product_id},
                    "unit_price": money(price),
                    "currency": "USD",
                    "tax_category": "STANDARD",
                    "status": "ACTIVE",
                    "version": 1,
                    "last_modified_at": "2026-01-01T09:00:00Z",
                    "product_type": "SINGLE",
                }
                for product_id, price in PRODUCTS
            ],
        }
        return Request("PUT products", "PUT", "products", orjson.dumps(body), (202,), len(PRODUCTS))

    # -- the mix ---------------------------------------------------------------------------------

    def next_request(self) -> Request:
        operation = self.rng.choices(list(MIX), weights=list(MIX.values()))[0]
        if operation in ("resend", "daily_close") and not self.sent_batches:
            operation = "trade_records"
        return getattr(self, "_" + operation)()

    def close_day(self) -> Request | None:
        """The current day's close, when a batch was sent for it (a chaos run ends with every day closed)."""
        return self._daily_close() if self.batch_seq else None

    def _trade_records(self) -> Request:
        self.batch_seq += 1
        records = []
        count = self.rng.randint(*self.batch_size)
        for _ in range(count):
            if self.documents and self.rng.random() < 0.05:
                records.append(self._correction())
            else:
                records.append(self._record(f"T-{uuid.uuid4().hex[:16]}", 1))
        unique = {record["trade_record_id"]: record for record in records}  # a batch names a record once
        body = orjson.dumps(
            {
                "batch_id": str(uuid.uuid4()),
                "store_id": self.store_id,
                "business_date": self.day.isoformat(),
                "batch_seq": self.batch_seq,
                "trade_records": list(unique.values()),
            }
        )
        self.sent_batches.append(body)
        if len(self.sent_batches) > 50:
            self.sent_batches.pop(0)
        return Request("POST trade-records", "POST", "trade-records", body, (202,), len(unique))

    def _record(self, trade_record_id: str, version: int) -> dict:
        rng = self.rng
        lines = [(rng.choice(PRODUCTS), rng.randint(1, 3)) for _ in range(rng.randint(1, 5))]
        subtotal = sum(price * quantity for (_, price), quantity in lines)
        tax = subtotal * 8 // 100
        tip = rng.choice((0, 0, 0, 100, 150))
        total = subtotal + tax + tip
        opened = f"{self.day.isoformat()}T12:{rng.randint(0, 59):02d}:00-05:00"
        record = {
            "trade_record_id": trade_record_id,
            "version": version,
            "store_id": self.store_id,
            "business_date": self.day.isoformat(),
            "source_transaction_type": "01",
            "order_type": "DINE_IN",
            "order_source": "POS",
            "status": "COMPLETED",
            "opened_at": opened,
            "closed_at": opened,
            "currency": "USD",
            "prices_include_tax": False,
            "subtotal_amount": money(subtotal),
            "discount_amount": "0.00",
            "tax_amount": money(tax),
            "service_charge_amount": "0.00",
            "tip_amount": money(tip),
            "rounding_amount": "0.00",
            "total_amount": money(total),
            "last_modified_at": f"{self.day.isoformat()}T20:00:{version:02d}Z",
            "items": [
                {
                    "line_no": number,
                    "product_id": product_id,
                    "product_name": product_id,
                    "product_type": "SINGLE",
                    "quantity": str(quantity),
                    "unit_price": money(price),
                    "discount_amount": "0.00",
                    "line_amount": money(price * quantity),
                    "modifiers": [],
                    "is_voided": False,
                }
                for number, ((product_id, price), quantity) in enumerate(lines, start=1)
            ],
            "payments": [
                {
                    "payment_id": f"PAY-{uuid.uuid4().hex[:12]}",
                    "payment_type": "SALE",
                    "payment_method": rng.choice(("CASH", "CREDIT_CARD")),
                    "amount": money(total),
                    "tip_amount": money(tip),
                    "paid_at": opened,
                }
            ],
        }
        self.documents[trade_record_id] = record
        self.sent[trade_record_id] = Sent(version, len(lines), 1, total, tax, tip)
        return record

    def _correction(self) -> dict:
        trade_record_id = self.rng.choice(list(self.documents))
        return self._record(trade_record_id, self.sent[trade_record_id].version + 1)

    def _resend(self) -> Request:
        body = self.rng.choice(self.sent_batches)
        return Request("POST trade-records (resend)", "POST", "trade-records", body, (200,))

    def _daily_close(self) -> Request:
        sent = self.sent.values()
        body = {
            "batch_id": str(uuid.uuid4()),
            "store_id": self.store_id,
            "business_date": self.day.isoformat(),
            "batch_count": self.batch_seq,
            "trade_record_count": len(self.sent),
            "item_row_count": sum(s.items for s in sent),
            "payment_row_count": sum(s.payments for s in sent),
            "net_sales_amount": money(sum(s.total - s.tax - s.tip for s in sent)),
            "tax_amount": money(sum(s.tax for s in sent)),
            "tip_amount": money(sum(s.tip for s in sent)),
            "payment_total_amount": money(sum(s.total for s in sent)),
            "currency": "USD",
            "closed_at": f"{(self.day + dt.timedelta(days=1)).isoformat()}T04:05:00Z",
        }
        self.closed_days.append(self.day)
        self.day += dt.timedelta(days=1)
        self.batch_seq = 0
        self.sent, self.documents, self.sent_batches = {}, {}, []
        return Request("POST daily-close", "POST", "daily-close", orjson.dumps(body), (202,))

    def _status(self) -> Request:
        day = self.rng.choice(self.closed_days) if self.closed_days else self.day
        return Request("GET daily-close", "GET", f"daily-close/{self.store_id}/{day.isoformat()}", None, (200,))

    def _reference(self) -> Request:
        return Request("GET reference", "GET", f"reference/{self.rng.choice(CODE_TYPES)}", None, (200,))

    def _mapping_read(self) -> Request:
        return Request("GET mappings", "GET", "mappings/transaction-types", None, (200,))

    def _health(self) -> Request:
        return Request("GET health", "GET", "health", None, (200,))

    def _stores_update(self) -> Request:
        return self._stores()

    def _products_update(self) -> Request:
        return self._products()
