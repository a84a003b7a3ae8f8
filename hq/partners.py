"""`hq partner`: add, list, activate and deactivate partners; set a partner's own rate limit; map the OAuth
clients that speak for one."""

from __future__ import annotations

import argparse

from backends.factory import Backend, open_backend
from core.clients import ANY_ISSUER
from core.clock import to_api_text, utc_now
from core.ports import AdminError
from core.records import Partner
from hq import webhooks
from hq.arguments import Subcommands
from hq.output import table


def add_group(groups: Subcommands) -> None:
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
    client = sub.add_parser("client", help="the OAuth clients whose bearer tokens speak for a partner")
    client_actions = client.add_subparsers(dest="client_action", required=True)
    for name, text, run in (
        ("add", "let the client's tokens (its client_id, azp or appid) speak for the partner", client_add),
        ("remove", "refuse the client's tokens from now on (401)", client_remove),
    ):
        command = client_actions.add_parser(name, help=text)
        command.add_argument("partner_id")
        command.add_argument("client_id", help="the application (client) id the identity provider assigned")
        command.add_argument(
            "--issuer",
            action="append",
            help="the issuer whose client it is, as in OAUTH_ISSUER (repeat for several); add: needed when "
            "OAUTH_ISSUER lists several, remove: default every issuer",
        )
        command.set_defaults(run=run)
    listing = client_actions.add_parser("list", help="the partner's clients (also shown by `hq key list`)")
    listing.add_argument("partner_id")
    listing.set_defaults(run=client_list)
    limit = sub.add_parser(
        "rate-limit",
        help="the partner's own requests per minute (size it to its stores), or --default for RATE_LIMIT_PER_MINUTE",
    )
    limit.add_argument("partner_id")
    value = limit.add_mutually_exclusive_group(required=True)
    value.add_argument("per_minute", nargs="?", type=_positive, help="requests per minute, 1 or more")
    value.add_argument("--default", action="store_true", help="use the service's RATE_LIMIT_PER_MINUTE again")
    limit.set_defaults(run=partner_rate_limit)
    webhooks.add_commands(sub)


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


def client_add(backend: Backend, args: argparse.Namespace) -> None:
    """A client is an issuer's (decision 0103): with one issuer configured it is that one's; with several, HQ
    names it; with none (tokens off), the mapping holds for any issuer, as mappings made before issuers did."""
    from ingest.onboarding import add_client

    configured = backend.settings.oauth_issuers
    issuers = args.issuer or (list(configured) if len(configured) == 1 else [ANY_ISSUER] if not configured else [])
    if not issuers:
        raise AdminError(
            f"OAUTH_ISSUER lists {len(configured)} issuers: name the client's with --issuer "
            "(once for each issuer whose tokens it gets, such as Entra ID's v1 and v2 issuers)"
        )
    unknown = [issuer for issuer in issuers if configured and issuer not in configured]
    if unknown:
        raise AdminError(f"not an issuer of OAUTH_ISSUER: {', '.join(unknown)}")
    for issuer in issuers:
        add_client(backend.storage, args.partner_id, args.client_id, utc_now(), issuer)
    print(
        f"Client {args.client_id} now speaks for partner {args.partner_id}: its bearer tokens from "
        f"{_issuers_text(issuers)} are accepted."
    )


def client_remove(backend: Backend, args: argparse.Namespace) -> None:
    mapped = [c.issuer for c in backend.storage.list_clients(args.partner_id) if c.client_id == args.client_id]
    for issuer in args.issuer or mapped or [ANY_ISSUER]:  # none mapped: the storage says so
        backend.storage.remove_client(args.partner_id, args.client_id, issuer)
    print(f"Removed client {args.client_id} of partner {args.partner_id}: its bearer tokens now get 401.")


def _issuers_text(issuers: list[str]) -> str:
    return ", ".join(issuer or "any issuer" for issuer in issuers)


def client_list(backend: Backend, args: argparse.Namespace) -> None:
    print(clients_table(backend, args.partner_id))


def clients_table(backend: Backend, partner_id: str) -> str:
    clients = backend.storage.list_clients(partner_id)
    if not clients:
        return (
            f"Partner {partner_id} has no OAuth clients. "
            f"Add one with: python -m hq partner client add {partner_id} CLIENT_ID"
        )
    return table(
        ["CLIENT_ID", "ISSUER", "ADDED_AT"],
        [[client.client_id, client.issuer or "any", to_api_text(client.added_at)] for client in clients],
    )
