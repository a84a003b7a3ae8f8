"""`make screenshots`: docs/dashboard-overview.png and docs/dashboard-store-day.png, the pictures of the HQ
dashboard in the operator guide (docs/operator-guide.md).

Seeds a partner's last 30 business dates for eight stores in a temporary SQLite data dir through the real
use cases (bench/dashboard_data.py: most days MATCHED, some MISMATCHED, overdue, without a close or with
nothing), serves it with `python -m hq dashboard` and photographs two pages in headless chromium.

    python -m tests.browser.screenshots [--out docs]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import tempfile
from pathlib import Path

from bench import dashboard_data
from tests.browser.chromium import ROOT, chromium, start_dashboard

PARTNER = "acme-burgers"
STORES = 8


def fate(store: int, day: int, today: int) -> str:
    turn = (store * 37 + day * 11) % 41
    if day == today:
        return ("RECEIVED", "NO_CLOSE", "NOTHING")[store % 3]
    if store == 5 and day > today - 4:  # a store whose POS stopped sending three days ago
        return "NOTHING"
    return {0: "MISMATCHED", 1: "MISMATCHED", 2: "OVERDUE", 3: "NO_CLOSE"}.get(turn, "MATCHED")


def seed(data_dir: Path, today: dt.date) -> tuple[str, dt.date]:
    """The partner's month; returns a MISMATCHED store-day (store_id, date) to photograph."""
    stores = dashboard_data.store_ids(STORES)
    dates = dashboard_data.last_dates(30, today)
    service = dashboard_data.open_partner(data_dir, PARTNER, stores, "Acme Burgers")
    dashboard_data.seed_partner(
        service,
        stores,
        dates,
        lambda store, day: fate(store, day, len(dates) - 1),
        lambda store, day: 20 + (store * 7 + day * 3) % 25,
    )
    store, day = next((s, d) for s in range(STORES) for d in range(len(dates)) if fate(s, d, 29) == "MISMATCHED")
    return stores[store], dates[day]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.browser.screenshots", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="dashboard-shots-") as temp:
        tmp = Path(temp)
        store_id, day = seed(tmp / "data", dt.datetime.now(dt.UTC).date())
        env = {**os.environ, "POS_BACKEND": "sqlite", "POS_DATA_DIR": str(tmp / "data")}
        dashboard = start_dashboard(env, tmp / "dashboard.log")
        try:
            with chromium(tmp / "profile", viewport={"width": 1500, "height": 900}) as browser:
                page = browser.new_page()
                shots = {
                    "dashboard-overview.png": dashboard.url(f"partners/{PARTNER}"),
                    "dashboard-store-day.png": dashboard.store_day_url(PARTNER, store_id, day.isoformat()),
                }
                for name, url in shots.items():
                    response = page.goto(url)
                    if response is None or response.status != 200:
                        raise RuntimeError(f"{url} answered {response and response.status}")
                    page.screenshot(path=str(args.out / name), full_page=True)
                    print(f"{args.out / name} written ({url})")
        finally:
            dashboard.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
