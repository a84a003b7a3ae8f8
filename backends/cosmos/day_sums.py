"""A store-day's sums item (id "day" in the store-day's partition of `trade-records`): the day's latest records
summed per source code and per payment type, and the batch_seq of each batch it received. Every change to the
day's records, tombstones and batch entries goes in one transactional batch with the item changed to match, so
that, a batch being all or nothing, the item sums what the partition holds through later versions, moves,
resends and crashes; reconciliation reads that one item, whatever the day holds (decision 0108)."""

from __future__ import annotations

import random
import threading
import time
import weakref
from collections import OrderedDict, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeVar

from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import CosmosBatchOperationError

from backends.cosmos.conditional import TRY_AGAIN, retry_until_settled
from backends.cosmos.connection import WriterPool
from backends.cosmos.expiry import with_ttl
from backends.cosmos.items import forget, json_safe_int, read_or_none, stored_version, stream
from backends.cosmos.transactional import MAX_OPERATIONS, REFUSED, BatchOperation, chunked
from core import faults
from core.records import SourceTypeTotals, StoreDayTotals
from core.stored_json import JsonObject
from core.versions import Version, trade_record_replaces

T = TypeVar("T")

DAY_ITEM_ID = "day"
# The sums of one record: (source_type, item_rows, payment_rows, total, tax, tip, payments per payment_type).
Sums = tuple[str, int, int, int, int, int, dict[str, int]]
# Properties of a record item its sums are read from (a projection).
SUMS_FIELDS = "c.source_type, c.item_rows, c.payment_rows, c.total_minor, c.tax_minor, c.tip_minor, c.payments"


def record_sums(item: JsonObject) -> Sums:
    """A stored record's sums, in the order StoreDayTotals.of_records and TradeRecordRow take them."""
    payments = {kind: int(amount) for kind, amount in item["payments"].items()}
    return (
        item["source_type"],
        item["item_rows"],
        item["payment_rows"],
        int(item["total_minor"]),
        int(item["tax_minor"]),
        int(item["tip_minor"]),
        payments,
    )


_NO_BATCHES: Mapping[str, int | None] = MappingProxyType({})
# What one record or tombstone written changes in its day's sums: the record it adds and the record it removes
# (as stored; None: nothing), and the day's ttl set anew with it (None: kept). A plain tuple: a batch makes one
# per item it writes, summed into one DayChange per transactional batch (decision 0130).
Write = tuple[JsonObject | None, JsonObject | None, int | None]


def write_of(new: JsonObject, old: JsonObject | None, ttl: int | None) -> Write:
    """Item `new` written over `old` (None: created): a record counts with its sums; a tombstone, or no item,
    with nothing."""
    return (
        new if new.get("type") == "record" else None,
        old if old is not None and old.get("type") == "record" else None,
        ttl,
    )


@dataclass(slots=True)
class DayChange:
    """What a write changes in its store-day's sums item; `ttl`: the day's (expiry.py), set anew with it.
    Immutable empties by default and no __dict__: a batch makes one per record it writes, and each container
    object is one more for the collector to walk (decision 0126)."""

    # Records added and removed, as stored: items (or projections) holding SUMS_FIELDS, read where summed
    # (`changed`), no tuple made per record first.
    added: Sequence[JsonObject] = ()
    removed: Sequence[JsonObject] = ()
    batches: Mapping[str, int | None] = _NO_BATCHES  # batch_id -> batch_seq, received
    batches_gone: Sequence[str] = ()
    ttl: int | None = None

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.batches or self.batches_gone)

    @classmethod
    def of_run(cls, changes: Sequence[Write | DayChange]) -> DayChange:
        """The change of a transactional batch's writes (a rider's DayChange among them), in their order."""
        added: list[JsonObject] = []
        removed: list[JsonObject] = []
        batches: dict[str, int | None] = {}
        gone: list[str] = []
        ttl = None
        for change in changes:
            if isinstance(change, DayChange):
                added += change.added
                removed += change.removed
                batches.update(change.batches)
                gone += change.batches_gone
                ttl = change.ttl if change.ttl is not None else ttl
                continue
            new, old, its_ttl = change
            if new is not None:
                added.append(new)
            if old is not None:
                removed.append(old)
            if its_ttl is not None:
                ttl = its_ttl
        return cls(added, removed, batches, gone, ttl)


def empty_day(pk: str) -> JsonObject:
    # sources: code -> [records, item_rows, payment_rows, total, tax, tip]; payments: type -> [records, amount]
    return {"id": DAY_ITEM_ID, "pk": pk, "type": "day", "sources": {}, "payments": {}, "batches": {}}


def changed(day: JsonObject, change: DayChange) -> JsonObject:
    """The day item with `change` applied (a group no record holds any more leaves it, as in a sum of the
    records themselves)."""
    sources = {code: [int(value) for value in values] for code, values in day["sources"].items()}
    payments = {kind: [int(value) for value in values] for kind, values in day["payments"].items()}
    for sign, records in ((1, change.added), (-1, change.removed)):
        for record in records:  # read as record_sums reads it, without its tuple (decision 0130)
            group = sources.setdefault(record["source_type"], [0, 0, 0, 0, 0, 0])
            # Unrolled: the loop over the six took a third of this function (decision 0126).
            group[0] += sign
            group[1] += sign * record["item_rows"]
            group[2] += sign * record["payment_rows"]
            group[3] += sign * int(record["total_minor"])
            group[4] += sign * int(record["tax_minor"])
            group[5] += sign * int(record["tip_minor"])
            for kind, amount in record["payments"].items():
                held = payments.setdefault(kind, [0, 0])
                held[0] += sign
                held[1] += sign * int(amount)
    batches = {**day["batches"], **change.batches}
    for batch_id in change.batches_gone:
        batches.pop(batch_id, None)
    item = {
        **{name: value for name, value in day.items() if not name.startswith("_") and name != "ttl"},
        "sources": {code: [json_safe_int(value) for value in group] for code, group in sources.items() if group[0]},
        "payments": {kind: [held[0], json_safe_int(held[1])] for kind, held in payments.items() if held[0]},
        "batches": batches,
    }
    return with_ttl(item, change.ttl if change.ttl is not None else day.get("ttl"))


def day_totals(day: JsonObject) -> StoreDayTotals:
    return StoreDayTotals(
        {code: SourceTypeTotals(*(int(value) for value in group)) for code, group in day["sources"].items()},
        {kind: int(held[1]) for kind, held in day["payments"].items()},
    )


def day_batch_seqs(day: JsonObject) -> list[int]:
    return sorted(day["batches"].values(), key=lambda seq: (seq is not None, seq or 0))


def summed_day(container: ContainerProxy, pk: str) -> JsonObject:
    """The day item summed from what the partition holds: for a day written before the item existed (read
    once, when it is first written; then kept by every write)."""
    added: list[JsonObject] = []
    batches: dict[str, int | None] = {}
    for item in stream(
        container,
        f"SELECT c.type, c.batch_id, c.batch_seq, {SUMS_FIELDS} FROM c "
        "WHERE c.pk = @pk AND (c.type = 'record' OR c.type = 'batch')",
        pk,
        pk=pk,
    ):
        if item["type"] == "batch":
            batches[item["batch_id"]] = item.get("batch_seq")
        else:
            added.append(item)
    return changed(empty_day(pk), DayChange(added, batches=batches))


# A day item this process read or wrote in the last seconds is most likely still the one stored: an accept reads
# the day's batch_seqs, then writes its records, then its batch entry, each needing the item. A guess only:
# every write is conditioned on its ETag (or on its absence), and a stale one is read again.
RECENT_SECONDS = 10.0
# The longest wait before a writer that lost the day item to another tries again (with jitter).
MAX_BACKOFF_SECONDS = 0.2
RECENT_DAYS = 1024


class _RecentDays:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_container: weakref.WeakKeyDictionary[ContainerProxy, OrderedDict[str, tuple[float, JsonObject]]] = (
            weakref.WeakKeyDictionary()
        )

    def recall(self, container: ContainerProxy, pk: str) -> JsonObject | None:
        with self._lock:
            days = self._by_container.get(container)
            kept = None if days is None else days.get(pk)
        return kept[1] if kept is not None and time.monotonic() - kept[0] < RECENT_SECONDS else None

    def remember(self, container: ContainerProxy, pk: str, day: JsonObject | None) -> None:
        with self._lock:
            days = self._by_container.setdefault(container, OrderedDict())
            days.pop(pk, None)
            if day is not None:
                days[pk] = (time.monotonic(), day)
                if len(days) > RECENT_DAYS:
                    days.popitem(last=False)


_recent = _RecentDays()


def read_day(container: ContainerProxy, pk: str) -> JsonObject:
    """The day's sums item as stored, or summed from the partition when it has none (not written)."""
    return day_as_read(container, pk, read_or_none(container, DAY_ITEM_ID, pk))


def day_as_read(container: ContainerProxy, pk: str, item: JsonObject | None) -> JsonObject:
    """`read_day` of the sums item just read (None: absent), however it was read."""
    day = item or summed_day(container, pk)
    _recent.remember(container, pk, day)
    return day


def batches_with(day: JsonObject, batch_seq: int, limit: int) -> list[str]:
    """The batch_ids of the day item's batches that had batch_seq, at most `limit` of them."""
    return sorted(batch_id for batch_id, seq in day["batches"].items() if seq == batch_seq)[:limit]


class DayWriter:
    """Writes into one store-day's partition, each transactional batch with the day item changed to match."""

    def __init__(self, container: ContainerProxy, pk: str) -> None:
        self._trades = container
        self._pk = pk
        self._day: JsonObject | None = _recent.recall(container, pk)  # as last read or written (with its _etag)

    def execute(
        self, operations: list[BatchOperation], change: DayChange, point: str | None = None
    ) -> list[JsonObject] | None:
        """The answers of `operations` (all in this partition), done in one batch with the day item's change;
        None when one of them was refused (404, 409, 412: nothing written). Lost races for the day item
        itself are retried on the item read again."""

        def attempt(number: int) -> list[JsonObject] | None | object:
            if number:  # writers of one store-day racing for its item: spread them out before trying again
                time.sleep(random.uniform(0, min(MAX_BACKOFF_SECONDS, 0.005 * 2**number)))
            day = self._day or read_or_none(self._trades, DAY_ITEM_ID, self._pk)
            if day is None:
                day = summed_day(self._trades, self._pk)
            wanted = changed(day, change)
            if "_etag" in day:
                day_write: BatchOperation = ("replace", (DAY_ITEM_ID, wanted), {"if_match_etag": day["_etag"]})
            else:
                day_write = ("create", (wanted,))
            # The SDK pops each operation's conditions from its dict: a retry sends copies, conditions kept.
            sent = [
                (*operation[:2], dict(operation[2])) if len(operation) > 2 else operation for operation in operations
            ]
            batch = [*sent, day_write] if change or "_etag" not in day else sent
            if not batch:
                return []
            try:
                answers = list(self._trades.execute_item_batch(batch, partition_key=self._pk, no_response=True))
            except CosmosBatchOperationError as error:
                if error.status_code not in REFUSED:
                    raise
                forget(error)
                if error.error_index < len(operations):
                    return None
                self._day = None  # another writer changed the day item: read it again
                return TRY_AGAIN
            if len(batch) > len(operations):
                self._day = {**wanted, "_etag": answers[-1]["eTag"]}
                _recent.remember(self._trades, self._pk, self._day)
            if point is not None:
                faults.point(point)
            return answers[: len(operations)]

        outcome = retry_until_settled(attempt, f"the sums of {self._pk!r}")
        return outcome if isinstance(outcome, list) else None


@dataclass
class Rider:
    """One more write into a store-day, taken by the last transactional batch of the writes into that day, when
    there are any (`written` then says whether it was done): a batch entry goes with its day's records, a
    request less (decision 0121)."""

    operation: BatchOperation
    size: int
    change: DayChange
    written: bool = False


def in_day_batches(
    container: ContainerProxy,
    writers: WriterPool,
    work: Sequence[tuple[T, BatchOperation, int, Write]],
    point: str,
    rider: Rider | None = None,
) -> list[tuple[T, JsonObject | None]]:
    """transactional.in_batches for writes into store-days: each batch carries its day item's change, so the
    batches of one store-day go one after the other (store-days concurrently). Each `what` with its
    operation's answer, or None when its batch was refused (for the item-by-item path)."""
    by_pk: dict[str, list[tuple[T | None, BatchOperation, int, Write | DayChange]]] = defaultdict(list)
    for entry in work:
        by_pk[entry[1][1][-1]["pk"]].append(entry)  # the item is the last argument of a create or a replace
    if rider is not None and (pk := rider.operation[1][-1]["pk"]) in by_pk:
        by_pk[pk].append((None, rider.operation, rider.size, rider.change))  # last: after the day's records

    def day_of(pk: str) -> list[tuple[T | None, JsonObject | None]]:
        writer = DayWriter(container, pk)
        done: list[tuple[T | None, JsonObject | None]] = []
        for run in chunked(by_pk[pk], MAX_OPERATIONS - 1):  # room for the day item
            change = DayChange.of_run([one for _, _, _, one in run])
            answers = writer.execute([operation for _, operation, _, _ in run], change, point)
            done += [(entry[0], None if answers is None else answers[number]) for number, entry in enumerate(run)]
        return done

    pairs = [pair for pairs in writers.each(day_of, list(by_pk)) for pair in pairs]
    if rider is not None:
        rider.written = any(what is None and answer is not None for what, answer in pairs)
    return [(what, answer) for what, answer in pairs if what is not None]


def write_if_replaces(
    container: ContainerProxy, item: JsonObject, version: Version, ttl: int | None, *, create_first: bool = False
) -> bool:
    """write_if_replaces (conditional.py) of a record or tombstone of `version`, with its day item: created
    when absent, replaced on the ETag read when older. False when the stored item stays."""
    writer = DayWriter(container, item["pk"])

    def attempt(number: int) -> bool | object:
        current = None if create_first and number == 0 else read_or_none(container, item["id"], item["pk"])
        if current is not None and not trade_record_replaces(version, stored_version(current)):
            return False
        if current is None:
            write: BatchOperation = ("create", (item,))
        else:
            write = ("replace", (item["id"], item), {"if_match_etag": current["_etag"]})
        answers = writer.execute([write], DayChange.of_run([write_of(item, current, ttl)]))
        return TRY_AGAIN if answers is None else True

    return bool(retry_until_settled(attempt, f"item {item['id']!r} of {container.id}"))
