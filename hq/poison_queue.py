"""`hq queue poison`: list and replay reconciliation requests that failed maxDequeueCount times.

These take the reconciliation queue's consumer side (SQLite or Azure Storage, as the settings select:
core.ports.QueueConsumer), not storage.
"""

from __future__ import annotations

import argparse
import datetime as dt

from backends.queues import open_reconcile_queue
from core import reconcile_messages
from core.clock import to_api_text
from core.ports import AdminError
from core.queue_ports import Message, QueueConsumer
from hq.arguments import Subcommands
from hq.output import table


def add_group(groups: Subcommands) -> None:
    group = groups.add_parser("queue", help="inspect and replay poisoned reconciliation requests")
    group.set_defaults(opens=open_reconcile_queue)
    sub = group.add_subparsers(dest="action", required=True)
    poison = sub.add_parser(
        "poison", help="messages that failed maxDequeueCount times (host.json or its app-setting override)"
    )
    sub = poison.add_subparsers(dest="subaction", required=True)
    sub.add_parser("list", help="poisoned messages and the store-day each one names").set_defaults(run=poison_list)
    replay = sub.add_parser("replay", help="put a poisoned message back on the queue, visible now")
    target = replay.add_mutually_exclusive_group(required=True)
    target.add_argument("message_id", nargs="?", help="the MESSAGE_ID that `queue poison list` shows")
    target.add_argument("--all", action="store_true", help="replay every poisoned message")
    replay.set_defaults(run=poison_replay)


def poison_list(queue: QueueConsumer[Message], args: argparse.Namespace) -> None:
    poisoned = queue.poison_messages()
    if not poisoned:
        print(f"No poisoned messages on {queue.poison_name}.")
        return
    rows = [
        [
            m.message_id,
            to_api_text(dt.datetime.fromtimestamp(m.inserted_at_us / 1e6, dt.UTC)),
            *_request_columns(m.body),
        ]
        for m in poisoned
    ]
    print(table(["MESSAGE_ID", "INSERTED_AT", "PARTNER_ID", "STORE_ID", "BUSINESS_DATE", "CLOSE_BATCH_ID"], rows))
    total = queue.poison_count()
    if total > len(poisoned):
        print(
            f"Showing the first {len(poisoned)} of about {total}; replay them to see the rest, "
            "or replay all with: python -m hq queue poison replay --all"
        )


def _request_columns(body: bytes | str) -> list[str]:
    try:
        request = reconcile_messages.decode(body)
    except ValueError:
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        return ["(not a reconciliation request)", repr(text[:60]), "", ""]
    return [request.partner_id, request.store_id, request.business_date.isoformat(), request.close_batch_id]


def poison_replay(queue: QueueConsumer[Message], args: argparse.Namespace) -> None:
    if args.all:
        print(f"Replayed {queue.replay_all_poison()} poisoned message(s) onto {queue.queue_name}.")
        return
    if not queue.replay_poison(args.message_id):
        raise AdminError(f"no poisoned message {args.message_id} on {queue.poison_name}")
    print(f"Replayed message {args.message_id} onto {queue.queue_name}: it is visible now, with a fresh dequeue count.")
