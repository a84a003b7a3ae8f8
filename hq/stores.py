"""`hq store`: register, unregister and list a partner's stores (with their master data)."""

from __future__ import annotations

import argparse

from backends.admin_rules import require_partner
from backends.factory import Backend, open_backend
from core.clock import to_api_text, utc_now
from hq.arguments import Subcommands
from hq.output import table


def add_group(groups: Subcommands) -> None:
    group = groups.add_parser("store", help="register, unregister and list a partner's stores")
    group.set_defaults(opens=open_backend)
    sub = group.add_subparsers(dest="action", required=True)
    for name, text, run in (
        ("register", "allow the partner to send data for these stores (those already allowed stay)", store_register),
        ("unregister", "stop accepting data for these stores", store_unregister),
    ):
        command = sub.add_parser(name, help=text)
        command.add_argument("partner_id")
        command.add_argument("store_ids", nargs="+", metavar="STORE_ID")
        command.set_defaults(run=run)
    listing = sub.add_parser("list", help="list registered stores")
    listing.add_argument("partner_id")
    listing.set_defaults(run=store_list)


def store_register(backend: Backend, args: argparse.Namespace) -> None:
    from ingest.onboarding import check_ids, register_stores

    check_ids("store", args.store_ids)
    require_partner(backend.storage.get_partner, args.partner_id)
    new = register_stores(backend.storage, args.partner_id, args.store_ids, utc_now())
    already = [store_id for store_id in args.store_ids if store_id not in new]
    if new:
        print(f"Registered for {args.partner_id}: {', '.join(new)}")
    if already:
        print(f"Already registered for {args.partner_id}, left as they were: {', '.join(already)}")


def store_unregister(backend: Backend, args: argparse.Namespace) -> None:
    backend.storage.unregister_stores(args.partner_id, args.store_ids)
    print(f"Unregistered for {args.partner_id}: {', '.join(args.store_ids)}")


def store_list(backend: Backend, args: argparse.Namespace) -> None:
    store_ids = backend.storage.registered_stores(args.partner_id)
    if not store_ids:
        print(f"No stores registered for {args.partner_id}.")
        return
    rows = []
    for store_id in store_ids:
        store = backend.storage.get_store(args.partner_id, store_id)
        if store is None:  # registered, but PUT /stores has not sent its master data yet
            rows.append([store_id, "-", "-", "-", "-", "-", "(no master data yet)"])
            continue
        rows.append(
            [
                store_id,
                store.currency,
                store.country_code,
                store.time_zone,
                store.workday_start,
                "yes" if store.prices_include_tax else "no",
                to_api_text(store.last_modified_at),
            ]
        )
    print(
        table(
            ["STORE_ID", "CURRENCY", "COUNTRY", "TIME_ZONE", "WORKDAY_START", "TAX_INCLUDED", "LAST_MODIFIED_AT"], rows
        )
    )
