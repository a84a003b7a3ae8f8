"""Cosmos DB storage meeting injected 429s (devhost/cosmos_throttling.py), for the contract suite.

The SDK gives up on a 429 only after its own retries; the adapter then raises BackendUnavailable with
Cosmos DB's retry-after, and the partner (or the queue, or the timer) tries again once that wait is over.
RetriedAfterThrottling plays that caller: a call that meets a 429 is made again, with the plan paused (the
partition has room again), and that one attempt must complete. So the suite run through it proves that a
throttled call either completes or fails in a way its retry completes.

Two answers are read as the partner's service reads them:
- A batch write whose first attempt stored the batch (a close's or a mapping's receipt) before its 429 is
  answered with that batch's own marker on the retry (ALREADY_RECEIVED): the batch is this call's, so it
  is given back as accepted (None), unless a twin of the same batch was in flight (then either may own it).
- `register_stores` is an HQ operation that is not retry-safe on Cosmos DB (docs/reliability.md, "Cosmos
  DB throttling (429)"): it is called with the plan paused."""

from __future__ import annotations

import collections
import threading

from core.ports import BackendUnavailable
from core.records import BatchMarker, SavedTradeRecords

NOT_RETRY_SAFE = frozenset({"register_stores"})


def _same_batch(stored: BatchMarker, sent: BatchMarker) -> bool:
    # The kind too: a batch_id first used on another endpoint answers with that endpoint's marker, which is
    # not this call's batch however equal its digest and count.
    return (stored.partner_id, stored.batch_id, stored.kind, stored.body_digest, stored.record_count) == (
        sent.partner_id,
        sent.batch_id,
        sent.kind,
        sent.body_digest,
        sent.record_count,
    )


class RetriedAfterThrottling:
    """`storage`'s methods, each retried once after a 429 (BackendUnavailable with a retry-after)."""

    def __init__(self, storage, plan) -> None:
        self.storage = storage
        self.plan = plan
        self.retried = 0  # calls that met a 429 and were made again
        self._in_flight: dict[tuple, list[dict]] = collections.defaultdict(list)  # calls per batch
        self._lock = threading.Lock()

    def __getattr__(self, name: str):
        attribute = getattr(self.storage, name)
        if name.startswith("_") or not callable(attribute):
            return attribute
        if name in NOT_RETRY_SAFE:
            return self._paused(attribute)

        def call(*args, **kwargs):
            sent = args[0] if args and isinstance(args[0], BatchMarker) else None
            received_before = False
            if sent is not None:
                # A batch already received is a resend whatever happens to this call: its answer stays as is.
                with self.plan.paused():
                    received_before = self.storage.find_batch(sent.partner_id, sent.batch_id) is not None
            twins = self._enter(sent)
            try:
                try:
                    return attribute(*args, **kwargs)
                except BackendUnavailable as error:
                    if error.retry_after_seconds is None:
                        raise  # not throttling: the suite's own failure
                    with self._lock:
                        self.retried += 1
                with self.plan.paused():
                    answer = attribute(*args, **kwargs)
                if sent is None or twins["raced"] or received_before:
                    return answer
                return self._as_accepted(answer, sent)
            finally:
                self._leave(sent, twins)

        return call

    def _enter(self, sent: BatchMarker | None) -> dict:
        """This call's record; every call of the same batch that overlaps another is marked raced."""
        mine = {"raced": False}
        if sent is not None:
            with self._lock:
                others = self._in_flight[(sent.partner_id, sent.batch_id)]
                for call in [*others, mine] if others else []:
                    call["raced"] = True
                others.append(mine)
        return mine

    def _leave(self, sent: BatchMarker | None, mine: dict) -> None:
        if sent is not None:
            with self._lock:
                calls = self._in_flight[(sent.partner_id, sent.batch_id)]
                calls[:] = [call for call in calls if call is not mine]

    def _paused(self, attribute):
        def call(*args, **kwargs):
            with self.plan.paused():
                return attribute(*args, **kwargs)

        return call

    @staticmethod
    def _as_accepted(answer, sent: BatchMarker):
        if isinstance(answer, BatchMarker) and _same_batch(answer, sent):
            return None
        if isinstance(answer, SavedTradeRecords) and answer.existing and _same_batch(answer.existing, sent):
            return SavedTradeRecords(None, answer.existing.changes or answer.changes)
        return answer
