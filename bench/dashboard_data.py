"""A partner's month for the HQ dashboard (decision 0078): stores by business dates, each store-day in one of
the states the overview shows, written through the real use cases into a SqliteStorage.

Used by the dashboard benchmark (bench/dashboard.py: 500 stores x 30 days) and by `make screenshots`
(tests/browser/screenshots.py: a few stores). Records come from the bench generator (bench/generate.py),
so they are valid and warning-free; a day's fate decides what follows them:

- MATCHED: a close with the records' totals, reconciled;
- MISMATCHED: a close that counts a second batch the POS never sent (so one record more and its amounts), reconciled;
- RECEIVED: a close due in an hour, not reconciled yet;
- OVERDUE: a close due an hour ago, never reconciled (its worker failed);
- NO_CLOSE: records but no close;
- NOTHING: no data at all.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import orjson

from bench import generate, harness

FATES = ("MATCHED", "MISMATCHED", "RECEIVED", "OVERDUE", "NO_CLOSE", "NOTHING")
HOUR = 3600


def store_ids(count: int) -> list[str]:
    return [f"NYC-{number:03d}" for number in range(1, count + 1)]


def last_dates(days: int, today: dt.date) -> list[dt.date]:
    return [today - dt.timedelta(days=back) for back in range(days - 1, -1, -1)]


def open_partner(data_dir: Path, partner_id: str, stores: list[str], name: str = "Bench partner") -> harness.Service:
    """The partner with every store registered and its master data, products and mapping."""
    from backends.sqlite.storage import SqliteStorage
    from ingest.stores import put_stores

    SqliteStorage(data_dir).add_partner(partner_id, name, dt.datetime.now(dt.UTC))
    service = harness.open_service(data_dir, "USD", stores[0], partner_id=partner_id)
    service.storage.register_stores(partner_id, stores[1:], dt.datetime.now(dt.UTC))
    for number, store_id in enumerate(stores[1:], start=2):
        outcome = put_stores(service.storage, service.partner, generate.stores_body("USD", store_id, seed=number))
        if outcome.http_status != 202 or outcome.warnings:
            raise RuntimeError(f"store {store_id} was not accepted: {outcome.as_dict()}")
    return service


def seed_store_day(service: harness.Service, store_id: str, day: dt.date, records: int, fate: str, seed: int) -> None:
    """One store-day: `records` trade records in one batch, then what `fate` says (FATES)."""
    from core.reconcile_reruns import request_for
    from ingest.daily_close import post_daily_close
    from ingest.trade_records import post_trade_records
    from reconcile.service import reconcile

    if fate == "NOTHING":
        return
    sent = generate.trade_records(records, seed=seed, store_id=store_id, business_date=day)
    body = generate.dumps(generate.trade_batch(sent, seed=seed))
    accepted = post_trade_records(service.storage, harness.NullQueue(), service.partner, body, 0)
    if accepted.http_status != 202:
        raise RuntimeError(f"{store_id} {day}: the records were not accepted: {accepted.as_dict()}")
    if fate == "NO_CLOSE":
        return
    close = orjson.loads(generate.daily_close_body(sent, batch_count=1, seed=seed))
    if fate == "MISMATCHED":  # the POS counted a second batch of one more sale that never arrived
        extra = generate.trade_records(1, seed=seed, store_id=store_id, business_date=day, start=records)
        close.update(generate.control_totals(sent + extra), batch_count=2)
    delay = {"RECEIVED": HOUR, "OVERDUE": -HOUR}.get(fate, 0)
    closed = post_daily_close(service.storage, harness.NullQueue(), service.partner, orjson.dumps(close), delay)
    if closed.http_status != 202:
        raise RuntimeError(f"{store_id} {day}: the close was not accepted: {closed.as_dict()}")
    if fate in ("MATCHED", "MISMATCHED"):
        stored = service.storage.get_closed_day(service.partner.partner_id, store_id, day)
        result = reconcile(service.storage, request_for(service.partner.partner_id, stored))
        if result is None or result.status != fate:
            raise RuntimeError(f"{store_id} {day} reconciled to {result and result.status}, not {fate}")


def seed_partner(
    service: harness.Service,
    stores: list[str],
    dates: list[dt.date],
    fate: Callable[[int, int], str],
    records: Callable[[int, int], int],
) -> dict[str, int]:
    """Every store-day of `stores` x `dates`; fate(store_index, date_index) and records(...) decide each.
    Returns how many store-days got each fate."""
    counts = dict.fromkeys(FATES, 0)
    for s, store_id in enumerate(stores):
        for d, day in enumerate(dates):
            chosen = fate(s, d)
            seed_store_day(service, store_id, day, records(s, d), chosen, seed=s * 1000 + d)
            counts[chosen] += 1
    return counts
