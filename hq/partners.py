"""`hq partner`: add, list, activate and deactivate partners."""

from __future__ import annotations

import argparse

from backends.factory import Backend, open_backend
from core.clock import to_api_text, utc_now
from core.ports import AdminError
from core.records import Partner
from hq.output import table


def add_group(groups) -> None:
    group = groups.add_parser("partner", help="add, list, activate and deactivate partners")
    group.set_defaults(opens=open_backend)
    sub = group.add_subparsers(dest="action", required=True)
    add = sub.add_parser("add", help="add a partner (active)")
    add.add_argument("partner_id")
    add.add_argument("--name", help="display name (default: the id)")
    add.set_defaults(run=partner_add)
    for name, text, run in (
        ("deactivate", "refuse every request of the partner (403)", partner_deactivate),
        ("activate", "accept the partner's requests again", partner_activate),
    ):
        command = sub.add_parser(name, help=text)
        command.add_argument("partner_id")
        command.set_defaults(run=run)
    sub.add_parser("list", help="list partners").set_defaults(run=partner_list)


def partner_add(backend: Backend, args: argparse.Namespace) -> None:
    from ingest.onboarding import PartnerExists, add_partner

    try:
        partner = add_partner(backend.storage, args.partner_id, args.name or args.partner_id, utc_now())
    except PartnerExists as exists:  # exit 1 like every refusal: a script that meant to create it must notice
        raise AdminError(_exists(exists.partner)) from exists
    print(f"Added partner {partner.partner_id} ({partner.name}), active.")


def _exists(partner: Partner) -> str:
    return (
        f"partner {partner.partner_id} already exists ({partner.name}, "
        f"{'active' if partner.active else 'inactive'}, added {to_api_text(partner.created_at)}); "
        "nothing changed. Its keys: python -m hq key list " + partner.partner_id
    )


def partner_deactivate(backend: Backend, args: argparse.Namespace) -> None:
    backend.storage.set_partner_active(args.partner_id, False)
    print(f"Partner {args.partner_id} is inactive: its requests now get 403 PARTNER_INACTIVE.")


def partner_activate(backend: Backend, args: argparse.Namespace) -> None:
    backend.storage.set_partner_active(args.partner_id, True)
    print(f"Partner {args.partner_id} is active.")


def partner_list(backend: Backend, args: argparse.Namespace) -> None:
    partners = backend.storage.list_partners()
    if not partners:
        print("No partners yet. Add one with: python -m hq partner add PARTNER_ID --name NAME")
        return
    print(
        table(
            ["PARTNER_ID", "NAME", "STATUS", "CREATED_AT"],
            [[p.partner_id, p.name, "ACTIVE" if p.active else "INACTIVE", to_api_text(p.created_at)] for p in partners],
        )
    )
