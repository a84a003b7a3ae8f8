"""`hq export PARTNER --from DATE --to DATE --out DEST`: write the partner's reconciled store-days of the period
as Parquet (the use case: export/store_days.py; the layout and schemas: docs/exports.md). DEST is a folder or
a Blob Storage / ADLS Gen2 location, signed in with Entra ID as for Cosmos DB (EXPORT_STORAGE_CONNECTION, a
connection string with an account key, instead: Azurite). Running it again writes the same files."""

from __future__ import annotations

import argparse
import sys
import time

from backends.admin_rules import require_partner
from backends.factory import Backend, open_backend
from core.ports import AdminError
from core.records import StoreDay
from hq import arguments
from hq.arguments import Subcommands

PROGRESS_EVERY_SECONDS = 2.0


def add_group(groups: Subcommands) -> None:
    command = groups.add_parser(
        "export", help="write a partner's reconciled store-days of a period as Parquet (docs/exports.md)"
    )
    command.add_argument("partner_id")
    command.add_argument("--from", dest="date_from", metavar="YYYY-MM-DD", required=True, help="first business date")
    command.add_argument("--to", dest="date_to", metavar="YYYY-MM-DD", required=True, help="last business date")
    command.add_argument(
        "--out",
        metavar="DEST",
        required=True,
        help="a folder, https://ACCOUNT.blob.core.windows.net/CONTAINER[/PREFIX] or abfss://CONTAINER@ACCOUNT.dfs.core.windows.net[/PREFIX]",
    )
    command.set_defaults(opens=open_backend, run=export_command)


def export_command(backend: Backend, args: argparse.Namespace) -> None:
    from backends.export_destinations import open_destination
    from export.store_days import Exported, export_period

    first = arguments.business_date(args.date_from, "--from")
    last = arguments.business_date(args.date_to, "--to")
    if last < first:
        raise AdminError(f"--to {last} is before --from {first}")
    require_partner(backend.storage.get_partner, args.partner_id)
    destination = open_destination(args.out, backend.settings.export_storage_connection)
    started = last_shown = time.monotonic()
    print(f"Exporting {args.partner_id} {first} to {last} into {destination.location} ...", file=sys.stderr)

    def progress(day: StoreDay, exported: Exported) -> None:
        nonlocal last_shown
        if time.monotonic() - last_shown >= PROGRESS_EVERY_SECONDS:
            last_shown = time.monotonic()
            print(
                f"  {exported.days:,} store-days, {exported.rows:,} rows, {_size(exported.bytes)} "
                f"(at {day.business_date} {day.store_id}; {last_shown - started:.0f} s)",
                file=sys.stderr,
            )

    exported = export_period(backend.storage, destination, args.partner_id, first, last, progress)
    print(
        f"Exported {exported.days:,} reconciled store-days of {args.partner_id} ({first} to {last}): "
        f"{exported.files:,} files, {exported.rows:,} rows, {_size(exported.bytes)} in {destination.location} "
        f"({time.monotonic() - started:.1f} s). Running it again writes the same files."
    )
    for day in exported.changed:
        print(f"  {day}: its records changed while it was read; exported after its next reconciliation")


def _size(count: int) -> str:
    return f"{count / 1e6:,.1f} MB" if count >= 100_000 else f"{count:,} bytes"
