"""`hq key`: issue, revoke and list a partner's API keys (a key is shown once, when issued)."""

from __future__ import annotations

import argparse
import datetime as dt
import json

from backends.factory import Backend, open_backend
from core.clock import to_api_text, utc_now
from core.ports import AdminError
from hq.arguments import Subcommands
from hq.output import table


def add_group(groups: Subcommands) -> None:
    group = groups.add_parser("key", help="issue, revoke and list API keys")
    group.set_defaults(opens=open_backend)
    sub = group.add_subparsers(dest="action", required=True)
    issue = sub.add_parser("issue", help="create a key and print it once")
    issue.add_argument("partner_id")
    issue.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default) to read; json for a script: partner_id, key_id and key",
    )
    issue.set_defaults(run=key_issue)
    revoke = sub.add_parser("revoke", help="revoke a key by its id")
    revoke.add_argument("partner_id")
    revoke.add_argument("key_id", help="the KEY_ID column of `key list` (key_...), not the key itself")
    revoke.set_defaults(run=key_revoke)
    listing = sub.add_parser(
        "list", help="key ids, dates and the hour each was last used (never the keys), then the OAuth clients"
    )
    listing.add_argument("partner_id")
    listing.set_defaults(run=key_list)


def key_issue(backend: Backend, args: argparse.Namespace) -> None:
    from ingest.onboarding import issue_key

    key = issue_key(backend.storage, args.partner_id, utc_now())
    if args.format == "json":
        print(json.dumps({"partner_id": args.partner_id, "key_id": key.key_id, "key": key.secret}, indent=2))
        return
    print(f"Issued key {key.key_id} for partner {args.partner_id}.")
    print("The key is shown once, on the next line; only its hash is stored. Send it through a secure channel.")
    print(key.secret)


def key_revoke(backend: Backend, args: argparse.Namespace) -> None:
    from ingest.onboarding import NotAKeyId, revoke_key

    try:
        revoke_key(backend.storage, args.partner_id, args.key_id, utc_now())
    except NotAKeyId as refused:
        # Perhaps the key itself, pasted by mistake: never printed back. Its hash says which key it is.
        owner = refused.owner
        if owner is not None:
            raise AdminError(
                f"that is a key, not a key id (not shown here); it is key {owner.key_id} of partner "
                f"{owner.partner.partner_id}. Revoke it by its id: python -m hq key revoke "
                f"{owner.partner.partner_id} {owner.key_id}"
            ) from None
        raise AdminError(
            f"the value given is not a key id (not shown here, it may be a key); key ids look like "
            f"key_0123456789ab: see the KEY_ID column of: python -m hq key list {args.partner_id}"
        ) from None
    print(f"Revoked key {args.key_id} of partner {args.partner_id}: requests with it now get 401.")


def key_list(backend: Backend, args: argparse.Namespace) -> None:
    from hq.partners import clients_table

    _print_keys(backend, args.partner_id)
    print()  # the clients whose bearer tokens speak for the partner, beside its keys
    print(clients_table(backend, args.partner_id))


def _print_keys(backend: Backend, partner_id: str) -> None:
    keys = backend.storage.list_keys(partner_id)
    if not keys:
        print(f"Partner {partner_id} has no keys. Issue one with: python -m hq key issue {partner_id}")
        return
    print(
        table(
            ["KEY_ID", "STATUS", "CREATED_AT", "REVOKED_AT", "LAST_USED_HOUR"],
            [
                [
                    k.key_id,
                    "REVOKED" if k.revoked_at else "ACTIVE",
                    to_api_text(k.created_at),
                    to_api_text(k.revoked_at) if k.revoked_at else "-",
                    _hour(k.last_used_at),
                ]
                for k in keys
            ],
        )
    )


def _hour(moment: dt.datetime | None) -> str:
    """The hour (UTC) a key was last used in: kept to the hour, so that noting it costs one write an hour."""
    return "never" if moment is None else moment.strftime("%Y-%m-%dT%H:00Z")
