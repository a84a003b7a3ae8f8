"""`hq partner`: add, list, activate and deactivate partners, and set a partner's own rate limit."""

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
    limit = sub.add_parser(
        "rate-limit",
        help="the partner's own requests per minute (size it to its stores), or --default for RATE_LIMIT_PER_MINUTE",
    )
    limit.add_argument("partner_id")
    value = limit.add_mutually_exclusive_group(required=True)
    value.add_argument("per_minute", nargs="?", type=_positive, help="requests per minute, 1 or more")
    value.add_argument("--default", action="store_true", help="use the service's RATE_LIMIT_PER_MINUTE again")
    limit.set_defaults(run=partner_rate_limit)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of requests per minute, 1 or more")
    return value


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


def partner_rate_limit(backend: Backend, args: argparse.Namespace) -> None:
    partner = backend.storage.set_partner_rate_limit(args.partner_id, None if args.default else args.per_minute)
    if partner.rate_limit_per_minute is None:
        print(
            f"Partner {partner.partner_id} has the service's rate limit again "
            f"(RATE_LIMIT_PER_MINUTE, {backend.settings.rate_limit_per_minute} here; 0 is off)."
        )
    else:
        print(f"Partner {partner.partner_id} may send {partner.rate_limit_per_minute} requests a minute.")


def _limit_text(partner: Partner) -> str:
    return "default" if partner.rate_limit_per_minute is None else f"{partner.rate_limit_per_minute}/min"


def partner_list(backend: Backend, args: argparse.Namespace) -> None:
    partners = backend.storage.list_partners()
    if not partners:
        print("No partners yet. Add one with: python -m hq partner add PARTNER_ID --name NAME")
        return
    print(
        table(
            ["PARTNER_ID", "NAME", "STATUS", "CREATED_AT", "RATE_LIMIT"],
            [
                [p.partner_id, p.name, "ACTIVE" if p.active else "INACTIVE", to_api_text(p.created_at), _limit_text(p)]
                for p in partners
            ],
        )
    )
