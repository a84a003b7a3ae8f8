"""`hq batch show`: what a partner's batch_id brought (its marker, never the body)."""

from __future__ import annotations

import argparse
import datetime as dt

from backends.admin_rules import require_partner
from backends.factory import Backend, open_backend
from core.clock import to_api_text
from core.ports import AdminError
from core.records import BatchMarker
from hq import arguments
from hq.arguments import Subcommands
from hq.output import table


def add_group(groups: Subcommands) -> None:
    group = groups.add_parser("batch", help="show what was received under a batch_id")
    group.set_defaults(opens=open_backend)
    sub = group.add_subparsers(dest="action", required=True)
    show = sub.add_parser("show", help="the batch marker: kind, record count, when, store-day (never the body)")
    show.add_argument("partner_id")
    show.add_argument("batch_id")
    show.set_defaults(run=batch_show)


def batch_show(backend: Backend, args: argparse.Namespace) -> None:
    batch_id = arguments.batch_id(args.batch_id)
    require_partner(backend.storage.get_partner, args.partner_id)
    marker = backend.storage.find_batch(args.partner_id, batch_id)
    if marker is None:
        settings = backend.settings
        kept = (
            f" (or its marker expired: markers are kept {settings.batch_marker_ttl_days} days)"
            if settings.backend == "azure" and settings.batch_marker_ttl_days
            else ""
        )
        raise AdminError(f"partner {args.partner_id} has no batch {batch_id}{kept}")
    rows = [
        ["batch_id", marker.batch_id],
        ["partner_id", marker.partner_id],
        ["kind", marker.kind],
        ["record_count", str(marker.record_count)],
        ["received_at", to_api_text(marker.received_at)],
        ["store_id", marker.store_id or "-"],
        ["business_date", marker.business_date.isoformat() if marker.business_date else "-"],
        ["batch_seq", "-" if marker.batch_seq is None else str(marker.batch_seq)],
        # Only a digest (SHA-256) is kept, to tell a resend with another body; never the body.
        ["body_digest", "stored (SHA-256 only; the body is not kept)" if marker.body_digest else "none"],
    ]
    if marker.store_id and marker.business_date:
        rows.append(["store_day", _store_day(backend, marker, marker.store_id, marker.business_date)])
    print(table(["FIELD", "VALUE"], rows))


def _store_day(backend: Backend, marker: BatchMarker, store_id: str, business_date: dt.date) -> str:
    """The reconciliation status of the store-day a trade-records batch or daily close belongs to."""
    day = backend.storage.get_closed_day(marker.partner_id, store_id, business_date)
    if day is None:
        return "no daily close received yet"
    status = day.status
    if marker.kind == "daily-close":
        status += (
            " (this close is the latest)"
            if day.close_batch_id == marker.batch_id
            else f" (of a later close, batch {day.close_batch_id}, which replaced this one)"
        )
    return status
