"""Benchmark 4: reconciliation of one store-day at three sizes (1k, 10k, 100k transactions; quick: 500 to
2,000) against one SQL aggregate over the same rows (bench/floors.py), and how its time scales with size.
`load_store_day` also serves the profiles (bench/profiles.py)."""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections import defaultdict
from functools import partial
from pathlib import Path

import orjson

from bench import catalogue, floors, generate, harness
from bench.measure import Config, fresh, ms, ratio, summary, timed
from core.money import format_minor_units


def _rows(records: list[dict], exponent: int) -> list:
    """The stored form of each record, as the accept use case builds it (ingest/trade_records.py _row)."""
    from core.records import TradeRecordRow

    rows = []
    for record in records:
        payments: dict[str, int] = defaultdict(int)
        for payment in record["payments"]:
            payments[payment["payment_type"]] += int(payment["amount"].replace(".", ""))
        rows.append(
            TradeRecordRow(
                trade_record_id=record["trade_record_id"],
                version=record["version"],
                last_modified_at=dt.datetime.fromisoformat(record["last_modified_at"]),
                store_id=record["store_id"],
                business_date=dt.date.fromisoformat(record["business_date"]),
                source_transaction_type=record["source_transaction_type"],
                item_rows=len(record["items"]),
                payment_rows=len(record["payments"]),
                total_minor=int(record["total_amount"].replace(".", "")),
                tax_minor=int(record["tax_amount"].replace(".", "")),
                tip_minor=int(record["tip_amount"].replace(".", "")),
                payments_minor=dict(payments),
                document_json=orjson.dumps(record).decode(),
            )
        )
    return rows


def load_store_day(service: harness.Service, size: int, business_date: dt.date, seed: int):
    """size records of one store-day saved in batches of 500 through SqliteStorage.save_trade_records,
    and a daily close with their control totals through the daily close use case; the reconcile request."""
    from core.reconcile_reruns import request_for
    from core.records import BatchMarker
    from ingest.daily_close import post_daily_close

    exponent = catalogue.profile_for(service.currency).exponent
    everything = []
    for seq, start in enumerate(range(0, size, generate.BATCH_LIMIT), start=1):
        records = generate.trade_records(
            min(generate.BATCH_LIMIT, size - start),
            seed=seed,
            currency=service.currency,
            store_id=service.store_id,
            business_date=business_date,
            start=start,
        )
        everything += records
        body = generate.dumps(generate.trade_batch(records, batch_seq=seq, seed=seed))
        marker = BatchMarker(
            service.partner.partner_id,
            generate.batch_uuid(seed, "recon", business_date, seq),
            "trade-records",
            len(records),
            hashlib.sha256(body).hexdigest(),
            dt.datetime.now(dt.UTC),
            service.store_id,
            business_date,
            seq,
        )
        if service.storage.save_trade_records(marker, _rows(records, exponent)).existing is not None:
            raise RuntimeError("the store-day was loaded before")
    batches = math.ceil(size / generate.BATCH_LIMIT)
    close = generate.daily_close_body(everything, batch_count=batches, currency=service.currency, seed=seed)
    outcome = post_daily_close(service.storage, harness.NullQueue(), service.partner, close, 0)
    if outcome.http_status != 202:
        raise RuntimeError(f"the daily close was not accepted: {outcome.as_dict()}")
    day = service.storage.get_closed_day(service.partner.partner_id, service.store_id, business_date)
    return request_for(service.partner.partner_id, day), generate.control_totals(everything, exponent)


def run(cfg: Config, tmp: Path) -> dict:
    from reconcile.service import reconcile

    service = harness.open_service(tmp / "reconcile")
    revenue_codes = sorted(
        code for code, (standard, _) in catalogue.MAPPING.items() if standard in catalogue.REVENUE_STANDARD_CODES
    )
    floor_sql = floors.reconcile_sql(revenue_codes, catalogue.PAYMENT_DIRECTIONS)
    int_sql = floors.reconcile_int_sql(revenue_codes)
    floor_db = floors.connect(tmp / "reconcile" / "pos.sqlite3", schema=None)

    def fetch_one(sql: str, args: tuple) -> tuple:
        return floor_db.execute(sql, args).fetchone()

    results: dict = {
        "sizes": {},
        "floor_sql": floor_sql,
        "floor_explained": "one SELECT over the store-day's rows of the service's own trade_records "
        "table (same database, same index): COUNT and SUMs of the integer "
        "minor-unit columns, net sales as a SUM with CASE on the revenue source "
        "codes, the payment total as a SUM over json_each(payments) times each "
        "payment type's direction. It does not collect the unmapped codes, "
        "unknown payment types, batch_seqs or write the result, which the "
        "service also does.",
    }
    exponent = catalogue.profile_for(service.currency).exponent
    days = {}
    for number, size in enumerate(cfg.recon_sizes):
        business_date = generate.DEFAULT_DATE + dt.timedelta(days=number)
        setup_s, (request, expected) = timed(partial(load_store_day, service, size, business_date, cfg.seed))
        days[size] = {
            "request": request,
            "expected": expected,
            "setup_s": setup_s,
            "args": (*revenue_codes, service.partner.partner_id, service.store_id, business_date.isoformat()),
            "repeat": cfg.recon_repeat_largest if size == max(cfg.recon_sizes) and not cfg.quick else cfg.repeat,
            "service": [],
            "floor": [],
            "int": [],
        }
    # Rounds over every size, so that a noisy neighbour slows all sizes alike (the scaling stays honest).
    for index in range(max(day["repeat"] for day in days.values()) + 1):
        for size, day in days.items():
            if index > day["repeat"]:
                continue
            fresh()
            service_s, result = timed(partial(reconcile, service.storage, day["request"]))
            fresh()
            floor_s, row = timed(partial(fetch_one, floor_sql, day["args"]))
            fresh()
            int_s, _ = timed(partial(fetch_one, int_sql, day["args"]))
            if result is None or result.status != "MATCHED":
                raise RuntimeError(f"{size} transactions did not reconcile to MATCHED: {result}")
            floor_totals = {
                "trade_record_count": row[0],
                "item_row_count": row[1],
                "payment_row_count": row[2],
                "net_sales_amount": format_minor_units(row[3], exponent),
                "tax_amount": format_minor_units(row[4], exponent),
                "tip_amount": format_minor_units(row[5], exponent),
                "payment_total_amount": format_minor_units(row[6], exponent),
            }
            if floor_totals != day["expected"] or result.actual != day["expected"]:
                raise RuntimeError(
                    f"totals differ: expected {day['expected']}, service {result.actual}, floor {floor_totals}"
                )
            if index:  # the first round is a warm-up
                day["service"].append(ms(service_s))
                day["floor"].append(ms(floor_s))
                day["int"].append(ms(int_s))
    for size, day in days.items():
        service_summary, floor_summary = summary(day["service"]), summary(day["floor"])
        results["sizes"][str(size)] = {
            "transactions": size,
            "setup_s": day["setup_s"],
            "service": service_summary,
            "floor": floor_summary,
            "floor_integer_columns_only": summary(day["int"]),
            "ratio": ratio(service_summary["median_ms"], floor_summary["median_ms"]),
            "service_ms_per_1k": service_summary["median_ms"] * 1000 / size,
            "floor_ms_per_1k": floor_summary["median_ms"] * 1000 / size,
        }
    smallest, largest = (results["sizes"][str(size)] for size in (min(cfg.recon_sizes), max(cfg.recon_sizes)))
    results["scaling"] = {
        "service_per_1k_largest_over_smallest": ratio(largest["service_ms_per_1k"], smallest["service_ms_per_1k"]),
        "floor_per_1k_largest_over_smallest": ratio(largest["floor_ms_per_1k"], smallest["floor_ms_per_1k"]),
        "ratio_largest_over_smallest": ratio(largest["ratio"], smallest["ratio"]),
        "note": "time per 1k transactions at the largest size over the same at the smallest: 1.0 is linear; "
        "the ratio to the floor at the largest over the same at the smallest cancels the machine's "
        "own non-linearity (caches) and most of its noise",
    }
    return results
