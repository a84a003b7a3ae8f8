"""Writing many items in transactional batches (`execute_item_batch`: one logical partition, at most 100
operations and 2 MB a request, all or nothing in Cosmos DB). A batch that an operation refuses (409 exists,
412 changed, 404 gone) is handed back for the item-by-item path, which decides each item on what is stored;
so correctness never depends on the batch being atomic (the emulator applies the operations before the
refused one and keeps them: the item-by-item path then finds them written)."""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import CosmosBatchOperationError

from backends.cosmos.connection import WriterPool
from backends.cosmos.items import forget
from core import faults
from core.stored_json import JsonObject

T = TypeVar("T")
# One operation of a transactional batch, as the SDK's execute_item_batch takes it: (kind, arguments[, options]).
BatchOperation = tuple[str, tuple[Any, ...]] | tuple[str, tuple[Any, ...], dict[str, Any]]
W = TypeVar("W", bound=tuple[Any, ...])

MAX_OPERATIONS = 100  # Cosmos DB's limit per transactional batch
# Below the 2 MB a batch request may carry, with room for each operation's envelope.
MAX_BATCH_BYTES = 1_500_000
# What an operation that lost to a concurrent writer answers: the item-by-item path decides instead.
REFUSED = frozenset({404, 409, 412})


def in_batches(
    container: ContainerProxy, writers: WriterPool, work: Sequence[tuple[T, BatchOperation, int]], point: str
) -> list[tuple[T, JsonObject | None]]:
    """Execute the operations (what each is for, the operation as the SDK takes it, its size in bytes) in
    transactional batches per logical partition (the `pk` of each operation's item), concurrently: each
    `what` with its operation's answer, or None when its batch was refused. The fault point `point` is
    passed after each batch done."""
    by_pk: dict[str, list[tuple[T, BatchOperation, int]]] = defaultdict(list)
    for entry in work:
        by_pk[entry[1][1][-1]["pk"]].append(entry)  # the item is the last argument of a create or a replace
    runs = [(pk, run) for pk, partition in by_pk.items() for run in chunked(partition)]
    answered = writers.each(lambda job: _execute(container, job[0], job[1], point), runs)
    return [
        (what, None if answers is None else answer)
        for (_, run), answers in zip(runs, answered, strict=True)
        for (what, _, _), answer in zip(run, [None] * len(run) if answers is None else answers, strict=True)
    ]


def chunked(work: Sequence[W], operations: int = MAX_OPERATIONS) -> Iterator[list[W]]:
    """Runs of at most `operations` and MAX_BATCH_BYTES (an item larger than that alone in its run), each the
    longest that fits from where the last ended; each entry's size in bytes is its third member."""
    start = 0
    while start < len(work):
        run = list(work[start : start + operations])
        # Nearly always the next `operations` fit: one slice and a sum in C, not a step per entry (decision 0130).
        if sum(map(_size, run)) > MAX_BATCH_BYTES:
            run = _fitting(run)
        yield run
        start += len(run)


_size = operator.itemgetter(2)


def _fitting(run: list[W]) -> list[W]:
    """The longest start of `run` within MAX_BATCH_BYTES (its first entry at least)."""
    size = 0
    for end, entry in enumerate(run):
        size += entry[2]
        if end and size > MAX_BATCH_BYTES:
            return run[:end]
    return run


def _execute(
    container: ContainerProxy, partition_key: str, run: list[tuple[T, BatchOperation, int]], point: str
) -> list[JsonObject] | None:
    try:
        # The items written are not read back from the answer (its eTag is): Cosmos DB may leave them out.
        answers = container.execute_item_batch(
            [operation for _, operation, _ in run], partition_key=partition_key, no_response=True
        )
    except CosmosBatchOperationError as error:
        if error.status_code not in REFUSED:  # the status of the operation that failed
            raise
        forget(error)
        return None
    faults.point(point)
    return list(answers)
