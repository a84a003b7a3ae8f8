"""The operations page's read model: poisoned reconciliation requests (from the reconciliation queue's
consumer side, as `hq queue poison list` reads them), closes overdue across partners, the last sweep."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Protocol

from core import reconcile_messages
from core.ports import Overview, Reconciliations
from core.queue_ports import QueueConsumer, ReceivedMessage
from core.records import ClosedDay, ReconcileRequest


class OperationsStorage(Reconciliations, Overview, Protocol):
    """What the operations page reads of storage."""


@dataclass(frozen=True)
class Poisoned:
    message_id: str
    inserted_at: dt.datetime
    request: ReconcileRequest | None  # None: a message this service did not write
    text: str  # the start of such a message's text, to recognise it


@dataclass(frozen=True)
class OperationsView:
    poisoned: list[Poisoned] | None  # None: the queue could not be opened (queue_problem says why)
    poison_total: int
    queue_problem: str
    overdue: list[tuple[str, ClosedDay]]  # (partner_id, day), oldest due first
    last_sweep: dt.datetime | None


def operations_view(
    storage: OperationsStorage, queue: QueueConsumer[Any] | None, now: dt.datetime, queue_problem: str = ""
) -> OperationsView:
    poisoned, total = None, 0
    if queue is not None:
        poisoned = [_poisoned(message) for message in queue.poison_messages()]
        total = max(queue.poison_count(), len(poisoned))
    overdue = sorted(storage.days_due(now), key=lambda item: (item[1].due_at, item[0], item[1].store_id))
    return OperationsView(poisoned, total, queue_problem, overdue, storage.last_sweep())


def _poisoned(message: ReceivedMessage) -> Poisoned:
    inserted = dt.datetime.fromtimestamp(message.inserted_at_us / 1e6, dt.UTC)
    try:
        return Poisoned(message.message_id, inserted, reconcile_messages.decode(message.body), "")
    except ValueError:
        body = message.body
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        return Poisoned(message.message_id, inserted, None, text[:60])
