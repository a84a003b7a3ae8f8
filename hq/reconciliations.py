"""`hq reconcile`: reconcile a store-day now, show its result side by side, list closes and results.

The use cases are reconcile/operations.py; this module reads the arguments and words the results.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as dt
import json
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from backends.admin_rules import require_partner
from backends.factory import Backend, open_backend
from core.clock import to_api_text
from core.ports import AdminError
from core.records import ClosedDay
from core.stored_json import ResultDetails, TotalField
from hq import arguments
from hq.arguments import Subcommands
from hq.output import code_list, table
from hq.type_breakdown import breakdown_table

STATUSES = ("RECEIVED", "MATCHED", "MISMATCHED")


def add_group(groups: Subcommands) -> None:
    group = groups.add_parser("reconcile", help="reconcile a store-day now, show its result, or list results")
    group.set_defaults(opens=open_backend)
    sub = group.add_subparsers(dest="action", required=True)
    for name, text, run in (
        ("run", "reconcile the latest daily close now and show the result", reconcile_run),
        ("show", "expected, actual and differences side by side", reconcile_show),
    ):
        command = sub.add_parser(name, help=text)
        for argument in ("partner_id", "store_id", "business_date"):
            command.add_argument(argument)
        command.set_defaults(run=run)
    listing = sub.add_parser("list", help="daily closes and their status, of one partner or of all")
    listing.add_argument("partner_id", nargs="?", help="only this partner's closes (default: every partner's)")
    listing.add_argument(
        "--format",
        choices=("table", "json", "csv"),
        default="table",
        help="table (default) to read; json or csv for a script",
    )
    listing.add_argument("--status", type=str.upper, choices=STATUSES, help="only closes with this status")
    listing.add_argument("--date", metavar="YYYY-MM-DD", help="only this business date")
    listing.add_argument("--from", dest="date_from", metavar="YYYY-MM-DD", help="business dates from this one")
    listing.add_argument("--to", dest="date_to", metavar="YYYY-MM-DD", help="business dates up to this one")
    listing.add_argument("--store", metavar="STORE_ID", help="only this store")

    def check_usage(args: argparse.Namespace) -> None:
        if args.date is not None and (args.date_from is not None or args.date_to is not None):
            listing.error("--date cannot be combined with --from or --to")  # exits 2, before any settings

    listing.set_defaults(run=reconcile_list, check_usage=check_usage)


# -- run and show ---------------------------------------------------------------------------------


def reconcile_run(backend: Backend, args: argparse.Namespace) -> None:
    from reconcile import operations

    with _worded_refusal(args):
        operations.reconcile_now(backend.storage, args.partner_id, args.store_id, _business_date(backend, args))
    from hq.webhooks import publish_current_result

    publish_current_result(backend, args.partner_id, args.store_id, _business_date(backend, args))
    reconcile_show(backend, args)


def reconcile_show(backend: Backend, args: argparse.Namespace) -> None:
    from reconcile import operations
    from reconcile.totals import TOTAL_FIELDS

    with _worded_refusal(args):
        day = operations.latest_close(backend.storage, args.partner_id, args.store_id, _business_date(backend, args))
    print(
        f"{args.partner_id} {day.store_id} {day.business_date}: {day.status}"
        + (
            f" (checked {to_api_text(day.checked_at)})"
            if day.checked_at
            else f" (not reconciled yet, due {to_api_text(day.due_at)})"
        )
    )
    raw = {} if day.details is None else day.details.get("raw_differences") or {}
    rows = [
        [
            name,
            _cell(day.expected.get(name)),
            _cell(None if day.actual is None else day.actual[name]),
            _signed(raw.get(name)) if day.actual is not None else "-",
            _verdict(name, day, raw),
        ]
        for name in TOTAL_FIELDS
    ]
    print(table(["FIELD", "EXPECTED", "ACTUAL", "DIFFERENCE", "RESULT"], rows))
    if day.actual is not None:
        print("DIFFERENCE is actual - expected; counts must be equal, amounts may differ by one minor unit.")
    for line in [] if day.details is None else _detail_lines(day.details):
        print(line)
    if (breakdown := breakdown_table(day.details)) is not None:
        print(breakdown)
    if backend.storage.unregistered(args.partner_id, {day.store_id}):
        print(f"Store {day.store_id} is no longer registered for {args.partner_id}.")


def _business_date(backend: Backend, args: argparse.Namespace) -> dt.date:
    require_partner(backend.storage.get_partner, args.partner_id)
    return arguments.business_date(args.business_date)


@contextlib.contextmanager
def _worded_refusal(args: argparse.Namespace) -> Iterator[None]:
    """A store-day without a daily close, in words that say where to look."""
    from reconcile import operations

    try:
        yield
    except operations.NoDailyClose as missing:
        if not missing.registered:
            raise AdminError(
                f"store {args.store_id} is not registered for partner {args.partner_id}, so it has "
                f"no daily close; its stores: python -m hq store list {args.partner_id}"
            ) from None
        raise AdminError(
            f"no daily close received for {args.partner_id} {args.store_id} {args.business_date}"
        ) from None


def _cell(value: object) -> str:
    return "-" if value is None else str(value)


def _signed(value: object) -> str:
    """A raw difference with its sign: "+1", "-0.01"; "0" when there is none."""
    if value is None:
        return "0"
    text = str(value)
    return text if text.startswith("-") else "+" + text


def _verdict(name: TotalField, day: ClosedDay, raw: Mapping[str, str | int]) -> str:
    if name in day.differences:
        return "DIFFERS"
    return "within tolerance" if name in raw else ""


def _detail_lines(details: ResultDetails) -> list[str]:
    """The reconciliation's details in `reconcile show` (the raw differences and the source codes seen
    are in the table and the lines of the codes)."""
    lines = []
    if "batch_count_expected" in details:
        seqs = details.get("batch_seqs_received") or []
        line = (
            f"batches: {details.get('batch_count_received', len(seqs))} received of "
            f"{details['batch_count_expected']} expected"
            + (f" (batch_seq {', '.join(map(str, seqs))})" if seqs else "")
        )
        missing = details.get("missing_batch_seqs") or []
        lines.append(line + (f"; missing batch_seq {', '.join(map(str, missing))}" if missing else ""))
    moved = details.get("records_moved_out") or []
    if moved:  # a later version of each moved it: the day no longer counts it
        lines.append(
            "records moved out by a later version (no longer counted here): "
            + ", ".join(
                f"{code_list([entry['trade_record_id']])} to {entry['to_store_id']} {entry['to_business_date']}"
                for entry in moved
            )
        )
    # Codes as plain text (no Python brackets), each quoted only where its end would not show (see
    # hq.output.code_list).
    if unmapped := details.get("unmapped_source_codes"):
        lines.append("unmapped source codes (counted, but not as revenue): " + code_list(unmapped, ", "))
    if unknown := details.get("unknown_payment_types"):
        lines.append(
            "payment types of unknown direction (left out of payment_total_amount): " + code_list(unknown, ", ")
        )
    if mapped := details.get("mapped_source_codes"):
        lines.append(
            "source codes counted as: "
            + ", ".join(f"{code_list([code])}={code_list([standard])}" for code, standard in mapped.items())
        )
    return lines


# -- list -----------------------------------------------------------------------------------------


def reconcile_list(backend: Backend, args: argparse.Namespace) -> None:
    from reconcile import operations

    first: dt.date | None
    last: dt.date | None
    if args.date is not None:
        first = last = arguments.business_date(args.date, "--date")
    else:
        first = None if args.date_from is None else arguments.business_date(args.date_from, "--from")
        last = None if args.date_to is None else arguments.business_date(args.date_to, "--to")
        if first and last and first > last:
            raise AdminError(f"--from {first} is after --to {last}")
    partner = None if args.partner_id is None else require_partner(backend.storage.get_partner, args.partner_id)
    days = operations.closes(backend.storage, partner, args.status, args.store, first, last)
    if args.format != "table":
        _print_days(args.format, days)
        return
    whose = args.partner_id if args.partner_id is not None else "any partner"
    if not days:
        print(f"No daily closes of {whose}{_list_filters(args, first, last)}.")
        return
    print(
        table(
            ["PARTNER_ID", "STORE_ID", "BUSINESS_DATE", "STATUS", "CHECKED_AT", "DIFFERENCES", "NOTES"],
            [
                [
                    partner_id,
                    day.store_id,
                    day.business_date.isoformat(),
                    day.status,
                    to_api_text(day.checked_at) if day.checked_at else "-",
                    ",".join(day.differences) or "-",
                    _notes(day),
                ]
                for partner_id, day in days
            ],
        )
    )
    counts = Counter(day.status for _, day in days)
    print(f"{len(days)} store-day(s): " + ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s]) + ".")
    if counts["MISMATCHED"]:
        print(
            "Details of one: python -m hq reconcile show "
            f"{args.partner_id if args.partner_id is not None else 'PARTNER_ID'} STORE_ID BUSINESS_DATE"
        )


def _print_days(form: str, days: list[tuple[str, ClosedDay]]) -> None:
    """The list for a script: JSON (an array, null where the table shows "-") or CSV with a header row."""
    records: list[dict[str, Any]] = [
        {
            "partner_id": partner_id,
            "store_id": day.store_id,
            "business_date": day.business_date.isoformat(),
            "status": day.status,
            "checked_at": to_api_text(day.checked_at) if day.checked_at else None,
            "differences": list(day.differences),
            "notes": _notes(day),
        }
        for partner_id, day in days
    ]
    if form == "json":
        print(json.dumps(records, ensure_ascii=False, indent=2))
        return
    writer = csv.DictWriter(
        sys.stdout,
        fieldnames=["partner_id", "store_id", "business_date", "status", "checked_at", "differences", "notes"],
        lineterminator="\n",
    )
    writer.writeheader()
    for record in records:
        writer.writerow(
            {**record, "checked_at": record["checked_at"] or "", "differences": ",".join(record["differences"])}
        )


def _list_filters(args: argparse.Namespace, first: dt.date | None, last: dt.date | None) -> str:
    parts = []
    if args.status:
        parts.append(f"with status {args.status}")
    if args.store is not None:
        parts.append(f"for store {args.store}")
    if first and first == last:
        parts.append(f"on {first}")
    else:
        parts += [f"from {first}"] if first else []
        parts += [f"to {last}"] if last else []
    return (" " + " ".join(parts)) if parts else ""


def _notes(day: ClosedDay) -> str:
    """What the stored details say about the likely cause of a mismatch, in a few words."""
    details = day.details
    if details is None:
        return ""
    notes = []
    if details.get("missing_batch_seqs"):
        notes.append("missing batch_seq " + ",".join(map(str, details["missing_batch_seqs"])))
    if details.get("unmapped_source_codes"):
        notes.append("unmapped " + code_list(details["unmapped_source_codes"]))
    if details.get("unknown_payment_types"):
        notes.append("unknown payment_type " + code_list(details["unknown_payment_types"]))
    if details.get("records_moved_out"):
        notes.append(f"{len(details['records_moved_out'])} record(s) moved out")
    return "; ".join(notes)
