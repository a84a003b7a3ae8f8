"""Benchmark 5: the HQ dashboard's pages (decision 0078) on the embedded SQLite backend, against a floor.

Pages, as an operator's browser gets them from `python -m hq dashboard` (a process of its own; one GET
over loopback per sample):
- the overview of a partner with 500 stores x 30 business dates (quick: 20 x 30), seeded through the
  real use cases (bench/dashboard_data.py: mostly MATCHED, some MISMATCHED, RECEIVED, overdue, no close
  or nothing);
- the store-day page of a 10,000-record day (quick: 1,000), loaded and reconciled as benchmark 4 does.

The floor of each page is the same reads straight from SQLite in this process, and a bare join of the
same number of HTML cells or rows: for the overview, the registered stores, the day sums of the
trade-record batch markers and the closes' statuses over the range, one <td> per store-day; for the
store-day, the close, the day's sums by source code and payment type and its unknown products (the
adapter's own SQL, backends/sqlite/reads.py) and its batches, one <tr> per field and batch. Neither
floor does HTTP, escaping, URLs, titles, counters or charts, which the pages also do.
"""

from __future__ import annotations

import datetime as dt
import http.client
import os
import sqlite3
import sys
from functools import partial
from pathlib import Path
from urllib.parse import quote

from bench import dashboard_data, harness, reconciliation
from bench.measure import Config, fresh, ms, ratio, summary, timed
from bench.over_http import _process
from devhost.processes import free_port

GRID_PARTNER = "bench-grid"
DAY_PARTNER = "bench-day"
DAYS = 30
TARGET_MS = 300


def _fate(stores: int, today_index: int, store: int, day: int) -> str:
    """A month as HQ sees it: most days MATCHED; a few MISMATCHED, overdue or without a close; today's
    closes not all in yet."""
    turn = (store * 31 + day * 17) % 100
    if day == today_index:
        return "RECEIVED" if turn < 40 else "NO_CLOSE" if turn < 80 else "NOTHING"
    if turn < 5:
        return "MISMATCHED"
    if turn < 8:
        return "OVERDUE"
    if turn < 11:
        return "NO_CLOSE"
    if turn < 13:
        return "NOTHING"
    return "MATCHED"


def _seed(data_dir: Path, stores: list[str], dates: list[dt.date], day_size: int, day: dt.date, seed: int) -> dict:
    from reconcile.service import reconcile

    grid = dashboard_data.open_partner(data_dir, GRID_PARTNER, stores)
    fates = dashboard_data.seed_partner(
        grid,
        stores,
        dates,
        partial(_fate, len(stores), len(dates) - 1),
        lambda store, day_index: 2 + (store + day_index) % 4,
    )
    big = harness.open_service(data_dir, partner_id=DAY_PARTNER)
    request, _ = reconciliation.load_store_day(big, day_size, day, seed)
    if reconcile(big.storage, request).status != "MATCHED":
        raise RuntimeError("the store-day did not reconcile to MATCHED")
    return {"fates": fates, "store_day": big.store_id}


def _get(port: int, path: str) -> bytes:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    if response.status != 200:
        raise RuntimeError(f"GET {path} answered {response.status}: {body[:500]!r}")
    return body


def _floor_overview(db: sqlite3.Connection, first: str, last: str) -> str:
    stores = [
        row[0] for row in db.execute("SELECT store_id FROM registered_stores WHERE partner_id = ?", (GRID_PARTNER,))
    ]
    received = {
        (row[0], row[1]): row[2]
        for row in db.execute(
            "SELECT store_id, business_date, SUM(record_count) FROM batches WHERE partner_id = ? "
            "AND kind = 'trade-records' AND business_date BETWEEN ? AND ? GROUP BY store_id, business_date",
            (GRID_PARTNER, first, last),
        )
    }
    statuses = {
        (row[0], row[1]): row[2]
        for row in db.execute(
            "SELECT store_id, business_date, status FROM closed_days WHERE partner_id = ? "
            "AND business_date BETWEEN ? AND ?",
            (GRID_PARTNER, first, last),
        )
    }
    dates = sorted({date for _, date in received} | {date for _, date in statuses})
    rows = []
    for store in sorted(stores):
        cells = "".join(
            f'<td class="{statuses.get((store, date), "NOT_RECEIVED")}">{received.get((store, date), 0)}</td>'
            for date in dates
        )
        rows.append(f"<tr><th>{store}</th>{cells}</tr>")
    return "<table>" + "".join(rows) + "</table>"


def _floor_store_day(db: sqlite3.Connection, store_id: str, date: str) -> str:
    from backends.sqlite.reads import DAY_BY_PAYMENT_TYPE, DAY_BY_SOURCE_TYPE, DAY_UNKNOWN_PRODUCTS

    day = (DAY_PARTNER, store_id, date)
    close = db.execute(
        "SELECT status, expected, actual, details FROM closed_days WHERE partner_id = ? AND store_id = ? "
        "AND business_date = ?",
        day,
    ).fetchone()
    sums = db.execute(DAY_BY_SOURCE_TYPE, day).fetchall() + db.execute(DAY_BY_PAYMENT_TYPE, day).fetchall()
    unknown = db.execute(DAY_UNKNOWN_PRODUCTS, day).fetchall()
    batches = db.execute(
        "SELECT batch_seq, record_count, received_at FROM batches WHERE partner_id = ? AND store_id = ? "
        "AND business_date = ? AND kind = 'trade-records' ORDER BY batch_seq",
        day,
    ).fetchall()
    rows = [f"<tr><td>{close[0]}</td><td>{close[1]}</td><td>{close[2]}</td><td>{close[3]}</td></tr>"]
    rows += [f"<tr>{''.join(f'<td>{value}</td>' for value in row)}</tr>" for row in sums + unknown + batches]
    return "<table>" + "".join(rows) + "</table>"


def run(cfg: Config, tmp: Path) -> dict:
    data_dir = tmp / "dashboard"
    stores = dashboard_data.store_ids(20 if cfg.quick else 500)
    dates = dashboard_data.last_dates(DAYS, dt.datetime.now(dt.UTC).date())
    day_size = 1_000 if cfg.quick else 10_000
    day = dates[0] - dt.timedelta(days=7)  # outside the overview's range: the grid partner's pages stay apart
    setup_s, seeded = timed(partial(_seed, data_dir, stores, dates, day_size, day, cfg.seed))
    first, last = dates[0].isoformat(), dates[-1].isoformat()
    paths = {
        "overview": f"/partners/{GRID_PARTNER}?from={first}&to={last}",
        "store_day": f"/partners/{DAY_PARTNER}/stores/{quote(seeded['store_day'], safe='')}/days/{day.isoformat()}",
    }
    floor_db = sqlite3.connect(f"file:{data_dir / 'pos.sqlite3'}?mode=ro", uri=True)
    floors = {
        "overview": partial(_floor_overview, floor_db, first, last),
        "store_day": partial(_floor_store_day, floor_db, seeded["store_day"], day.isoformat()),
    }
    samples: dict[str, dict[str, list[float]]] = {name: {"service": [], "floor": []} for name in paths}
    sizes: dict[str, dict[str, int]] = {}
    port = free_port()
    env = {**os.environ, "POS_BACKEND": "sqlite", "POS_DATA_DIR": str(data_dir)}
    command = [sys.executable, "-m", "hq", "dashboard", "--port", str(port)]
    with _process(command, env, port, tmp / "dashboard.log", "/"):
        for index in range(cfg.repeat + 1):  # the first round is a warm-up
            for name, path in paths.items():
                fresh()
                service_s, page = timed(partial(_get, port, path))
                fresh()
                floor_s, bare = timed(floors[name])
                sizes[name] = {"page_bytes": len(page), "floor_bytes": len(bare)}
                if name == "overview" and page.count(b'<td class="cell ') != len(stores) * len(dates):
                    raise RuntimeError(f"the overview does not show {len(stores)} x {len(dates)} cells")
                if index:
                    samples[name]["service"].append(ms(service_s))
                    samples[name]["floor"].append(ms(floor_s))
    floor_db.close()
    pages = {}
    for name, timing in samples.items():
        service, floor = summary(timing["service"]), summary(timing["floor"])
        pages[name] = {
            "path": paths[name],
            "service": service,
            "floor": floor,
            "ratio": ratio(service["median_ms"], floor["median_ms"]),
            "met": service["median_ms"] < TARGET_MS,
            **sizes[name],
        }
    return {
        "stores": len(stores),
        "days": len(dates),
        "cells": len(stores) * len(dates),
        "store_day_records": day_size,
        "fates": seeded["fates"],
        "setup_s": setup_s,
        "target_ms": TARGET_MS,
        "pages": pages,
        "floor_explained": __doc__.split("\n\n")[2].replace("\n", " "),
        "note": "the service's time is one GET over loopback to `python -m hq dashboard`, the body read",
    }
