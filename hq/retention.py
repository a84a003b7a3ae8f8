"""`hq retention run`: retire the store-days past TRADE_RECORD_RETENTION_DAYS from the hot store now, with
progress and a summary (decision 0086). The export timer runs the same use case
(reconcile/retention.py) after each export; this is for a first run or a catch-up by hand."""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from typing import TYPE_CHECKING

from backends.factory import Backend, open_backend
from core.clock import utc_now
from core.retention import HeldDay
from hq.arguments import Subcommands
from hq.output import progress_lines

if TYPE_CHECKING:
    from backends.cosmos.ttl_backfill import Backfilled


def add_group(groups: Subcommands) -> None:
    group = groups.add_parser("retention", help="store-days past the retention leaving the hot store")
    group.set_defaults(opens=open_backend)
    sub = group.add_subparsers(dest="action", required=True)
    run = sub.add_parser(
        "run", help="delete the records and trade record batches of store-days past the retention (SQLite)"
    )
    export = run.add_mutually_exclusive_group(required=True)
    export.add_argument(
        "--exported-through",
        metavar="TIME",
        type=_moment,
        help="the export's checkpoint (ISO 8601 with an offset): only days whose result was checked by then leave",
    )
    export.add_argument(
        "--without-export", action="store_true", help="no export is configured: days leave by date alone"
    )
    run.add_argument(
        "--max-rows", type=_positive, default=500, help="rows deleted per transaction (default 500): the write lock"
    )
    run.set_defaults(run=retention_run)
    sub.add_parser(
        "backfill",
        help="Cosmos DB: give items written before retention was on the ttl they would have had (resumable)",
    ).set_defaults(run=retention_backfill)


def _moment(text: str) -> dt.datetime:
    moment = dt.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no UTC offset (write it as 2026-11-27T02:00:00Z)")
    return moment


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def retention_run(backend: Backend, args: argparse.Namespace) -> None:
    from reconcile.retention import export_lag_warning, retire_store_days

    days = backend.settings.trade_record_retention_days
    if days == 0:
        print("Retention is off (TRADE_RECORD_RETENTION_DAYS=0): every store-day stays in the hot store.")
        return
    now = utc_now()
    lag = export_lag_warning(args.exported_through, now)
    if lag is not None:
        print(f"Warning: {lag}.", file=sys.stderr)
    if backend.settings.backend == "azure":
        print(
            f"Cosmos DB: the items of store-days past the retention of {days} days expire by their ttl; "
            "nothing to delete here."
        )
        return
    started = time.monotonic()

    def progress(day: HeldDay, rows: int) -> None:
        print(f"  {day.partner_id} {day.store_id} {day.business_date}: {rows:,} rows deleted", file=sys.stderr)

    assert backend.retirement is not None  # POS_BACKEND=sqlite, the other backend that opens
    retired = retire_store_days(
        backend.retirement,
        now.date(),
        days,
        args.exported_through,
        args.max_rows,
        progress,
    )
    print(
        f"Retention of {days} days: {retired.days:,} store-days retired, {retired.rows:,} rows deleted "
        f"({time.monotonic() - started:.1f} s)."
    )
    for reason, count in sorted(retired.kept.items()):
        print(f"  {count:,} store-days past the retention kept: {reason}")


def retention_backfill(backend: Backend, args: argparse.Namespace) -> None:
    """Decision 0094: items of store-days written while retention was off carry no ttl on Cosmos DB."""
    days = backend.settings.trade_record_retention_days
    backfill = getattr(backend.storage, "backfill_ttl", None)
    if backend.settings.backend != "azure" or backfill is None:
        print("Nothing to backfill: on SQLite `hq retention run` deletes every store-day past the retention.")
        return
    if days == 0:
        print("Retention is off (TRADE_RECORD_RETENTION_DAYS=0): no item gets a ttl.")
        return
    print(f"Giving items without a ttl the one of their store-day (retention {days} days) ...", file=sys.stderr)

    def step(done: Backfilled) -> str:
        return (
            f"{done.store_days:,} store-days ({done.items:,} items), {done.entries:,} index entries, "
            f"{done.markers:,} markers"
        )

    done = backfill(progress_lines(step))
    print(
        f"ttl backfilled: {done.store_days:,} store-days ({done.items:,} items), {done.entries:,} index entries, "
        f"{done.markers:,} batch markers. Stopped or not, running it again continues where it was."
    )
