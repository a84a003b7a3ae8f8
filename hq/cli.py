"""`python -m hq`: HQ operations on the same backend the service uses (settings as the app's).

It talks to storage directly, not through the partner API, so it works whether or not the service
is running. Exit codes: 0 done, 1 refused (unknown partner, duplicate, ...), 2 bad usage.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

from core.clock import to_api_text, utc_now
from core.ports import AdminError, BackendUnavailable
from core.settings import Settings, load_local_settings

COMMANDS: dict[tuple[str, str], Callable] = {}


def command(group: str, name: str):
    def register(function):
        COMMANDS[(group, name)] = function
        return function
    return register


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in [headers, *rows]]
    return "\n".join(lines)


# -- partners ---------------------------------------------------------------------------------------

@command("partner", "add")
def partner_add(backend, args) -> None:
    # The id names the partner in every answer and log line: no empty id, no "/" or control characters.
    _check_ids("partner", [args.partner_id])
    partner = backend.storage.add_partner(args.partner_id, args.name or args.partner_id, utc_now())
    print(f"Added partner {partner.partner_id} ({partner.name}), active.")


@command("partner", "deactivate")
def partner_deactivate(backend, args) -> None:
    backend.storage.set_partner_active(args.partner_id, False)
    print(f"Partner {args.partner_id} is inactive: its requests now get 403 PARTNER_INACTIVE.")


@command("partner", "activate")
def partner_activate(backend, args) -> None:
    backend.storage.set_partner_active(args.partner_id, True)
    print(f"Partner {args.partner_id} is active.")


@command("partner", "list")
def partner_list(backend, args) -> None:
    partners = backend.storage.list_partners()
    if not partners:
        print("No partners yet. Add one with: python -m hq partner add PARTNER_ID --name NAME")
        return
    print(_table(["PARTNER_ID", "NAME", "STATUS", "CREATED_AT"],
                 [[p.partner_id, p.name, "ACTIVE" if p.active else "INACTIVE", to_api_text(p.created_at)]
                  for p in partners]))


# -- keys -------------------------------------------------------------------------------------------

@command("key", "issue")
def key_issue(backend, args) -> None:
    from ingest.access import new_key

    key = new_key()
    backend.storage.add_key(args.partner_id, key.key_id, key.key_hash, utc_now())
    print(f"Issued key {key.key_id} for partner {args.partner_id}.")
    print("The key is shown once, on the next line; only its hash is stored. Send it through a secure channel.")
    print(key.secret)


@command("key", "revoke")
def key_revoke(backend, args) -> None:
    backend.storage.revoke_key(args.partner_id, args.key_id, utc_now())
    print(f"Revoked key {args.key_id} of partner {args.partner_id}: requests with it now get 401.")


@command("key", "list")
def key_list(backend, args) -> None:
    keys = backend.storage.list_keys(args.partner_id)
    if not keys:
        print(f"Partner {args.partner_id} has no keys. Issue one with: python -m hq key issue {args.partner_id}")
        return
    print(_table(["KEY_ID", "CREATED_AT", "REVOKED_AT"],
                 [[k.key_id, to_api_text(k.created_at), to_api_text(k.revoked_at) if k.revoked_at else "-"]
                  for k in keys]))


# -- stores -----------------------------------------------------------------------------------------

@command("store", "register")
def store_register(backend, args) -> None:
    _check_ids("store", args.store_ids)
    backend.storage.register_stores(args.partner_id, args.store_ids, utc_now())
    print(f"Registered for {args.partner_id}: {', '.join(args.store_ids)}")


@command("store", "unregister")
def store_unregister(backend, args) -> None:
    backend.storage.unregister_stores(args.partner_id, args.store_ids)
    print(f"Unregistered for {args.partner_id}: {', '.join(args.store_ids)}")


@command("store", "list")
def store_list(backend, args) -> None:
    store_ids = backend.storage.registered_stores(args.partner_id)
    if not store_ids:
        print(f"No stores registered for {args.partner_id}.")
        return
    rows = []
    for store_id in store_ids:
        store = backend.storage.get_store(args.partner_id, store_id)
        rows.append([store_id, store.currency if store else "-", store.time_zone if store else "(no master data yet)"])
    print(_table(["STORE_ID", "CURRENCY", "TIME_ZONE"], rows))


def _check_ids(what: str, ids: list[str]) -> None:
    from pydantic import TypeAdapter, ValidationError

    from ingest.wire import Identifier

    adapter = TypeAdapter(Identifier)
    for value in ids:
        try:
            adapter.validate_python(value)
        except ValidationError:
            raise AdminError(f"invalid {what} id {value!r}: 1 to 100 characters, without / \\ ? # "
                             "or control characters") from None
    if len(set(ids)) != len(ids):
        raise AdminError(f"a {what} id is given twice")


# -- reconciliation --------------------------------------------------------------------------------

def _day(args):
    from reconcile.status import parse_business_date

    try:
        return parse_business_date(args.business_date)
    except Exception:
        raise AdminError(f"business date {args.business_date!r} is not a date in the form YYYY-MM-DD") from None


def _require_close(backend, args):
    backend.storage.get_partner(args.partner_id) or _raise(f"unknown partner {args.partner_id}")
    day = backend.storage.get_closed_day(args.partner_id, args.store_id, _day(args))
    if day is None:
        raise AdminError(f"no daily close received for {args.partner_id} {args.store_id} {args.business_date}")
    return day


def _raise(message: str):
    raise AdminError(message)


@command("reconcile", "run")
def reconcile_run(backend, args) -> None:
    from reconcile.service import reconcile, request_for

    day = _require_close(backend, args)
    reconcile(backend.storage, request_for(args.partner_id, day))
    reconcile_show(backend, args)


@command("reconcile", "show")
def reconcile_show(backend, args) -> None:
    day = _require_close(backend, args)
    print(f"{args.partner_id} {day.store_id} {day.business_date}: {day.status}"
          + (f" (checked {to_api_text(day.checked_at)})" if day.checked_at else " (not reconciled yet)"))
    from reconcile.totals import TOTAL_FIELDS

    actual = day.actual or {}
    rows = [[name, str(day.expected.get(name, "-")), str(actual.get(name, "-")),
             "DIFFERS" if name in day.differences else ""] for name in TOTAL_FIELDS]
    print(_table(["FIELD", "EXPECTED", "ACTUAL", ""], rows))
    for name, value in (day.details or {}).items():
        if value and name != "source_codes":
            print(f"{name}: {value}")


# -- queue ----------------------------------------------------------------------------------------
# These take the reconciliation queue (SQLite or Azure Storage, as the settings select), not storage.

def _request_columns(body: bytes | str) -> list[str]:
    from reconcile import messages

    try:
        request = messages.decode(body)
    except ValueError:
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        return ["(not a reconciliation request)", repr(text[:60]), "", ""]
    return [request.partner_id, request.store_id, request.business_date.isoformat(), request.close_batch_id]


@command("queue", "poison list")
def queue_poison_list(queue, args) -> None:
    import datetime as dt

    poisoned = queue.poison_messages()
    if not poisoned:
        print(f"No poisoned messages on {queue.poison_name}.")
        return
    rows = [[m.message_id, to_api_text(dt.datetime.fromtimestamp(m.inserted_at_us / 1e6, dt.timezone.utc)),
             *_request_columns(m.body)] for m in poisoned]
    print(_table(["MESSAGE_ID", "INSERTED_AT", "PARTNER_ID", "STORE_ID", "BUSINESS_DATE", "CLOSE_BATCH_ID"], rows))
    total = queue.poison_count() if hasattr(queue, "poison_count") else len(poisoned)
    if total > len(poisoned):
        print(f"Showing the first {len(poisoned)} of about {total}; replay them to see the rest, "
              "or replay all with: python -m hq queue poison replay --all")


@command("queue", "poison replay")
def queue_poison_replay(queue, args) -> None:
    if args.all:
        count = (queue.replay_all_poison() if hasattr(queue, "replay_all_poison")
                 else sum(queue.replay_poison(m.message_id) for m in queue.poison_messages()))
        print(f"Replayed {count} poisoned message(s) onto {queue.queue_name}.")
        return
    if not queue.replay_poison(args.message_id):
        raise AdminError(f"no poisoned message {args.message_id} on {queue.poison_name}")
    print(f"Replayed message {args.message_id} onto {queue.queue_name}: it is visible now, "
          "with a fresh dequeue count.")


# -- parser -----------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m hq", description="HQ operations for the partner POS ingestion service.")
    groups = parser.add_subparsers(dest="group", required=True, metavar="{partner,key,store,reconcile,queue}")

    partner = groups.add_parser("partner", help="add, list, activate and deactivate partners")
    sub = partner.add_subparsers(dest="action", required=True)
    add = sub.add_parser("add", help="add a partner (active)")
    add.add_argument("partner_id")
    add.add_argument("--name", help="display name (default: the id)")
    for name, text in (("deactivate", "refuse every request of the partner (403)"),
                       ("activate", "accept the partner's requests again")):
        sub.add_parser(name, help=text).add_argument("partner_id")
    sub.add_parser("list", help="list partners")

    key = groups.add_parser("key", help="issue, revoke and list API keys")
    sub = key.add_subparsers(dest="action", required=True)
    sub.add_parser("issue", help="create a key and print it once").add_argument("partner_id")
    revoke = sub.add_parser("revoke", help="revoke a key by its id")
    revoke.add_argument("partner_id")
    revoke.add_argument("key_id")
    sub.add_parser("list", help="key ids and dates (never the keys)").add_argument("partner_id")

    store = groups.add_parser("store", help="register, unregister and list a partner's stores")
    sub = store.add_subparsers(dest="action", required=True)
    for name, text in (("register", "allow the partner to send data for these stores"),
                       ("unregister", "stop accepting data for these stores")):
        command_parser = sub.add_parser(name, help=text)
        command_parser.add_argument("partner_id")
        command_parser.add_argument("store_ids", nargs="+", metavar="STORE_ID")
    sub.add_parser("list", help="list registered stores").add_argument("partner_id")

    reconcile = groups.add_parser("reconcile", help="reconcile a store-day now, or show its result")
    sub = reconcile.add_subparsers(dest="action", required=True)
    for name, text in (("run", "reconcile the latest daily close now and show the result"),
                       ("show", "expected, actual and differences side by side")):
        command_parser = sub.add_parser(name, help=text)
        for argument in ("partner_id", "store_id", "business_date"):
            command_parser.add_argument(argument)

    queue = groups.add_parser("queue", help="inspect and replay poisoned reconciliation requests")
    sub = queue.add_subparsers(dest="action", required=True)
    poison = sub.add_parser("poison", help="messages that failed maxDequeueCount times (host.json)")
    sub = poison.add_subparsers(dest="subaction", required=True)
    sub.add_parser("list", help="poisoned messages and the store-day each one names")
    replay = sub.add_parser("replay", help="put a poisoned message back on the queue, visible now")
    target = replay.add_mutually_exclusive_group(required=True)
    target.add_argument("message_id", nargs="?", help="the MESSAGE_ID that `queue poison list` shows")
    target.add_argument("--all", action="store_true", help="replay every poisoned message")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    load_local_settings()
    action = " ".join(filter(None, (args.action, getattr(args, "subaction", None))))
    try:
        settings = Settings.from_env()
        if args.group == "queue":
            from backends.queues import open_reconcile_queue

            COMMANDS[(args.group, action)](open_reconcile_queue(settings), args)
            return 0
        from backends.factory import open_backend

        COMMANDS[(args.group, action)](open_backend(settings), args)
    except AdminError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except (BackendUnavailable, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0
