"""A Japanese ramen shop's business day, shaped as a real partner sends it: 13 transactions in JPY with
prices including tax, two tax rates (10 % eaten in, 8 % taken away), a tip, split payments, a voided ticket,
a return, JAN barcodes as product ids and "" for absent values. The builders return request bodies, and
write the day as the folder `pos-partner push` reads (client/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.payloads import store
from tests.trade_payloads import Line, Pay, totals_of, trade_record

STORE = "麺屋-渋谷"
DAY = "2026-11-20"
MAPPING = [
    {"source_code": "01", "source_name": "売上", "standard_code": "SALE"},
    {"source_code": "02", "source_name": "返品", "standard_code": "RETURN"},
    {"source_code": "03", "source_name": "取消", "standard_code": "VOID"},
]
REVENUE_CODES = {"01", "02"}
DIRECTIONS = {"SALE": 1, "REFUND": -1, "DEPOSIT": 1, "DEPOSIT_APPLIED": 0, "ADJUSTMENT": 1}
OPENED = "2026-11-20T12:{:02d}:00+09:00"


def jan(body: str) -> str:
    """A JAN (EAN-13) barcode: 12 digits and their check digit."""
    total = sum(int(digit) * (3 if position % 2 else 1) for position, digit in enumerate(body))
    return body + str((10 - total % 10) % 10)


OOLONG = jan("490123456789")  # bottled tea, scanned
BEER = jan("490111122223")


def tax_line(rate: int, taxable: int, tax: int) -> dict:
    return {
        "tax_code": f"JP-{rate}",
        "tax_rate": str(rate),
        "taxable_amount": str(taxable),
        "tax_amount": str(tax),
        "is_inclusive": True,
    }


def _record(number: int, lines: list[Line], tax: int, **changes) -> dict:
    changes.setdefault("employee_id", "")  # the POS exports "" for what it does not know
    changes.setdefault("member_id", "")
    return trade_record(
        STORE,
        DAY,
        lines,
        currency="JPY",
        exponent=0,
        tax=tax,
        prices_include_tax=True,
        trade_record_id=f"{STORE}-{DAY}-{number:04d}",
        opened_at=OPENED.format(number),
        last_modified_at=OPENED.format(number),
        **changes,
    )


def ramen_records() -> list[dict]:
    """The day's 13 transactions."""
    records = [
        _record(1, [Line("P-RAMEN", 1, 980), Line("P-GYOZA", 1, 480)], 133),
        _record(2, [Line("P-GYOZA-TAKEOUT", 2, 480)], 71, order_type="TO_GO"),
        _record(
            3,
            [Line("P-RAMEN", 1, 980), Line("P-RAMEN-SOUVENIR", 1, 1200)],
            178,
            tax_lines=[tax_line(10, 980, 89), tax_line(8, 1200, 89)],
        ),
        _record(4, [Line("P-RAMEN", 1, 980)], 89, tip=200, payments=[Pay(1180, method="CREDIT_CARD", tip=200)]),
        _record(
            5,
            [Line("P-RAMEN", 2, 980), Line(BEER, 1, 600)],
            233,
            payments=[Pay(1000), Pay(1560, method="CREDIT_CARD")],
        ),
        _record(6, [Line("P-RAMEN", 1, 980)], 89, status="VOIDED", payments=[]),  # the voided ticket
        _record(7, [Line("P-RAMEN", -1, 980)], -89, source_type="02"),  # a return, refunded in cash
    ]
    for number in range(8, 14):
        records.append(_record(number, [Line("P-RAMEN", 1, 980), Line(OOLONG, 1, 150)], 103))
    return records


def ramen_close(records: list[dict]) -> dict:
    """The POS's control totals, counted as HQ counts them (by type: the voided ticket of type 01 too)."""
    return {
        "store_id": STORE,
        "business_date": DAY,
        **totals_of(records, REVENUE_CODES, DIRECTIONS, exponent=0),
        "currency": "JPY",
        "closed_at": "2026-11-21T02:00:00+09:00",
    }


def ramen_store() -> dict:
    return store(
        STORE,
        store_name="麺屋 一番 渋谷店",
        country_code="JP",
        currency="JPY",
        time_zone="Asia/Tokyo",
        locale="ja-JP",
        prices_include_tax=True,
    )


def write_day_folder(folder: Path, records: list[dict], close: dict) -> Path:
    """The day as `pos-partner push DIR` reads it: master data, the records, the close."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "stores.json": {"stores": [ramen_store()]},
        "mapping.json": {"mappings": MAPPING},
        "trade-records-ramen.json": records,
        "daily-close-ramen.json": close,
    }
    for name, body in files.items():
        (folder / name).write_text(json.dumps(body, ensure_ascii=False, indent=1), encoding="utf-8")
    return folder
