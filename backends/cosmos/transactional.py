"""Writing many items of one logical partition in transactional batches (`execute_item_batch`: at most 100
operations and 2 MB a request, all or nothing in Cosmos DB). A batch that an operation refuses (409 exists,
412 changed, 404 gone) is handed back for the item-by-item path, which decides each item on what is stored;
so correctness never depends on the batch being atomic (the emulator applies the operations before the
refused one and keeps them: the item-by-item path then finds them written)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from azure.cosmos.exceptions import CosmosBatchOperationError

T = TypeVar("T")

MAX_OPERATIONS = 100  # Cosmos DB's limit per transactional batch
# Below the 2 MB a batch request may carry, with room for each operation's envelope.
MAX_BATCH_BYTES = 1_500_000
# What an operation that lost to a concurrent writer answers: the item-by-item path decides instead.
REFUSED = frozenset({404, 409, 412})


def chunked(work: Sequence[tuple[T, tuple, int]]) -> Iterator[list[tuple[T, tuple, int]]]:
    """(what, operation, size in bytes) in runs of at most MAX_OPERATIONS and MAX_BATCH_BYTES (one item
    larger than that alone in its run: Cosmos DB refuses it, as it would refuse the item on its own)."""
    run: list[tuple[T, tuple, int]] = []
    size = 0
    for entry in work:
        if run and (len(run) == MAX_OPERATIONS or size + entry[2] > MAX_BATCH_BYTES):
            yield run
            run, size = [], 0
        run.append(entry)
        size += entry[2]
    if run:
        yield run


def execute(container, partition_key: str, run: list[tuple[T, tuple, int]], after: Callable[[], None]) -> list[T]:
    """Execute one run as a transactional batch; [] when every operation was done, else the runs' items for
    the item-by-item path. `after` is called after a batch that was done (a fault point)."""
    try:
        container.execute_item_batch([operation for _, operation, _ in run], partition_key=partition_key)
    except CosmosBatchOperationError as error:
        if error.status_code not in REFUSED:  # the status of the operation that failed
            raise
        return [what for what, _, _ in run]
    after()
    return []
