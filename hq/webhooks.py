"""`hq partner webhook`: a partner's webhook endpoints (add, list, remove, rotate, enable, test) and what
became of its events (deliveries, redeliver). Registered under `hq partner` (hq/partners.py).
Decisions 0104-0106."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypedDict, TypeVar

from backends.factory import Backend
from core.clock import to_api_text
from core.webhooks import WebhookDelivery
from hq.arguments import Subcommands
from hq.output import table

if TYPE_CHECKING:
    from backends.webhook_backend import Webhooks


class EndpointRow(TypedDict):
    """An endpoint as `webhook list --format json` prints it."""

    endpoint_id: str
    url: str
    active: bool
    created_at: str
    failing_since: str | None
    secrets_signing: int


class AttemptRow(TypedDict):
    at: str
    status_code: int | None
    outcome: str


class DeliveryRow(TypedDict):
    """A delivery as `webhook deliveries --format json` prints it and the dashboard's partner page reads it."""

    event_id: str
    type: str
    endpoint_id: str
    state: str
    created_at: str
    attempts: list[AttemptRow]
    next_attempt_at: str | None


Row = TypeVar("Row", EndpointRow, DeliveryRow)


def add_commands(partner_actions: Subcommands) -> None:
    webhook = partner_actions.add_parser("webhook", help="the partner's webhook endpoints and their deliveries")
    sub = webhook.add_subparsers(dest="webhook_action", required=True)
    add = sub.add_parser("add", help="register an https endpoint; its signing secret is printed once")
    add.add_argument("partner_id")
    add.add_argument("url")
    _format(add, "json for a script: partner_id, endpoint_id, url and secret")
    add.set_defaults(run=webhook_add)
    listing = sub.add_parser("list", help="the partner's endpoints (never their secrets)")
    listing.add_argument("partner_id")
    _format(listing, "json for a script")
    listing.set_defaults(run=webhook_list)
    for name, text, run in (
        ("remove", "stop sending to the endpoint and forget it", webhook_remove),
        ("enable", "send to a disabled endpoint again", webhook_enable),
        ("test", "send the endpoint a webhook.ping event", webhook_test),
    ):
        command = sub.add_parser(name, help=text)
        command.add_argument("partner_id")
        command.add_argument("endpoint_id")
        command.set_defaults(run=run)
    rotate = sub.add_parser("rotate", help="a new secret, printed once; the old one signs too during the overlap")
    rotate.add_argument("partner_id")
    rotate.add_argument("endpoint_id")
    rotate.add_argument("--overlap-hours", type=float, default=24.0, help="how long the old secret signs too (24)")
    _format(rotate, "json for a script: endpoint_id, secret and old_secret_until")
    rotate.set_defaults(run=webhook_rotate)
    deliveries = sub.add_parser("deliveries", help="the latest events sent: attempts, status codes, next retry")
    deliveries.add_argument("partner_id")
    deliveries.add_argument("--limit", type=int, default=50)
    _format(deliveries, "json for a script, every attempt included")
    deliveries.set_defaults(run=webhook_deliveries)
    redeliver = sub.add_parser("redeliver", help="send an event again to the endpoints it went to")
    redeliver.add_argument("partner_id")
    redeliver.add_argument("event_id", help="the EVENT_ID column of `webhook deliveries` (msg_...)")
    redeliver.set_defaults(run=webhook_redeliver)


def _format(parser: argparse.ArgumentParser, json_help: str) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text", help=f"text (default); {json_help}")


def _webhooks(backend: Backend) -> Webhooks:
    from backends.webhook_backend import open_webhooks

    return open_webhooks(backend.settings, backend.storage)


def webhook_add(backend: Backend, args: argparse.Namespace) -> None:
    from ingest.webhooks.subscriptions import add_endpoint

    hooks = _webhooks(backend)
    endpoint, secret = add_endpoint(backend.storage, hooks.store, hooks.sender, args.partner_id, args.url)
    if args.format == "json":
        print(
            json.dumps(
                {
                    "partner_id": args.partner_id,
                    "endpoint_id": endpoint.endpoint_id,
                    "url": endpoint.url,
                    "secret": secret,
                },
                indent=2,
            )
        )
        return
    print(f"Added webhook endpoint {endpoint.endpoint_id} for partner {args.partner_id}: {endpoint.url}")
    print("Its signing secret is shown once, on the next line. Send it to the partner through a secure channel.")
    print(secret)


def webhook_list(backend: Backend, args: argparse.Namespace) -> None:
    endpoints = _webhooks(backend).store.endpoints(args.partner_id)
    rows: list[EndpointRow] = [
        {
            "endpoint_id": e.endpoint_id,
            "url": e.url,
            "active": e.active,
            "created_at": to_api_text(e.created_at),
            "failing_since": None if e.failing_since is None else to_api_text(e.failing_since),
            "secrets_signing": len(e.signing_secrets(dt.datetime.now(dt.UTC))),
        }
        for e in endpoints
    ]
    _show(
        args,
        rows,
        f"Partner {args.partner_id} has no webhook endpoints.",
        ["ENDPOINT_ID", "URL", "STATE", "FAILING_SINCE", "CREATED"],
        lambda r: [
            r["endpoint_id"],
            r["url"],
            "active" if r["active"] else "DISABLED",
            r["failing_since"] or "-",
            r["created_at"],
        ],
    )


def webhook_remove(backend: Backend, args: argparse.Namespace) -> None:
    from ingest.webhooks.subscriptions import remove_endpoint

    remove_endpoint(_webhooks(backend).store, args.partner_id, args.endpoint_id)
    print(f"Removed webhook endpoint {args.endpoint_id} of partner {args.partner_id}.")


def webhook_enable(backend: Backend, args: argparse.Namespace) -> None:
    from ingest.webhooks.subscriptions import enable_endpoint

    enable_endpoint(_webhooks(backend).store, args.partner_id, args.endpoint_id)
    print(f"Webhook endpoint {args.endpoint_id} of partner {args.partner_id} is active again.")


def webhook_test(backend: Backend, args: argparse.Namespace) -> None:
    from ingest.webhooks.subscriptions import test_endpoint

    hooks = _webhooks(backend)
    event_id = test_endpoint(hooks.store, hooks.queue, args.partner_id, args.endpoint_id)
    print(f"Queued webhook.ping {event_id}; see it with: hq partner webhook deliveries {args.partner_id}")


def webhook_rotate(backend: Backend, args: argparse.Namespace) -> None:
    from ingest.webhooks.subscriptions import rotate_secret

    secret, until = rotate_secret(
        _webhooks(backend).store, args.partner_id, args.endpoint_id, int(args.overlap_hours * 3600)
    )
    if args.format == "json":
        print(
            json.dumps(
                {"endpoint_id": args.endpoint_id, "secret": secret, "old_secret_until": to_api_text(until)}, indent=2
            )
        )
        return
    print(f"New signing secret for {args.endpoint_id}; the old one also signs until {to_api_text(until)}.")
    print("The new secret is shown once, on the next line.")
    print(secret)


def delivery_rows(deliveries: Iterable[WebhookDelivery]) -> list[DeliveryRow]:
    """A delivery as HQ reads it (the command's json and the dashboard's partner page)."""
    return [
        {
            "event_id": d.event_id,
            "type": d.event_type,
            "endpoint_id": d.endpoint_id,
            "state": d.state,
            "created_at": to_api_text(d.created_at),
            "attempts": [
                {"at": to_api_text(a.at), "status_code": a.status_code, "outcome": a.outcome} for a in d.attempts
            ],
            "next_attempt_at": None if d.next_attempt_at is None else to_api_text(d.next_attempt_at),
        }
        for d in deliveries
    ]


def webhook_deliveries(backend: Backend, args: argparse.Namespace) -> None:
    rows = delivery_rows(_webhooks(backend).store.deliveries(args.partner_id, args.limit))
    _show(
        args,
        rows,
        f"No webhook deliveries for partner {args.partner_id}.",
        ["EVENT_ID", "TYPE", "ENDPOINT_ID", "STATE", "ATTEMPTS", "LAST", "NEXT_RETRY"],
        lambda r: [
            r["event_id"],
            r["type"],
            r["endpoint_id"],
            r["state"],
            str(len(r["attempts"])),
            r["attempts"][-1]["outcome"] if r["attempts"] else "-",
            r["next_attempt_at"] or "-",
        ],
    )


def _show(
    args: argparse.Namespace, rows: Sequence[Row], empty: str, headers: list[str], cells: Callable[[Row], list[str]]
) -> None:
    """JSON for a script, else a table (or a sentence when there is nothing)."""
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    elif not rows:
        print(empty)
    else:
        print(table(headers, [cells(row) for row in rows]))


def webhook_redeliver(backend: Backend, args: argparse.Namespace) -> None:
    from ingest.webhooks.subscriptions import redeliver

    hooks = _webhooks(backend)
    again = redeliver(hooks.store, hooks.queue, args.partner_id, args.event_id)
    print(f"Queued {args.event_id} again for {len(again)} endpoint(s).")


def publish_current_result(backend: Backend, partner_id: str, store_id: str, business_date: dt.date) -> None:
    """After `hq reconcile run`: the store-day's result, as the queue worker publishes it, when the partner has
    webhook endpoints (only then is the delivery queue needed)."""
    from backends.queues import open_queue
    from backends.webhook_backend import WEBHOOK_QUEUE, open_webhook_store
    from ingest.webhooks.events import publish_result

    store = open_webhook_store(backend.settings, backend.storage)
    day = backend.storage.get_closed_day(partner_id, store_id, business_date)
    if day is None or not store.endpoints(partner_id):
        return
    try:
        queue = open_queue(backend.settings, WEBHOOK_QUEUE)
    except ValueError as problem:  # Azure without a queue setting here: say so, the result itself is saved
        print(f"warning: the result was not pushed to the partner's webhooks: {problem}", file=sys.stderr)
        return
    publish_result(store, queue, partner_id, day)
