"""How the Cosmos DB adapter cuts a partition's writes into transactional batches (backends/cosmos/transactional.py
`chunked`): each run the longest that fits from where the last ended, by operations and by bytes."""

import random

from backends.cosmos.transactional import MAX_BATCH_BYTES, MAX_OPERATIONS, chunked


def _greedy(work: list[tuple[int, str, int]], operations: int) -> list[list[tuple[int, str, int]]]:
    """The cut as a writer adding one operation at a time would make it."""
    runs: list[list[tuple[int, str, int]]] = []
    for entry in work:
        if runs and len(runs[-1]) < operations and sum(size for *_, size in runs[-1]) + entry[2] <= MAX_BATCH_BYTES:
            runs[-1].append(entry)
        else:
            runs.append([entry])
    return runs


def test_a_days_records_go_in_runs_of_the_most_operations_a_batch_takes():
    work = [(n, "op", 2_000) for n in range(500)]
    runs = list(chunked(work, MAX_OPERATIONS - 1))
    assert [len(run) for run in runs] == [99, 99, 99, 99, 99, 5]
    assert [entry for run in runs for entry in run] == work


def test_large_items_end_a_run_before_its_bytes_exceed_a_batchs_and_one_larger_goes_alone():
    work = [(0, "op", 600_000), (1, "op", 600_000), (2, "op", 600_000), (3, "op", 2_000_000), (4, "op", 10)]
    assert [[n for n, *_ in run] for run in chunked(work)] == [[0, 1], [2], [3], [4]]


def test_every_cut_is_the_one_made_an_operation_at_a_time():
    chance = random.Random(130)
    for _ in range(200):
        sizes = [chance.choice([10, 2_000, 40_000, 400_000, 900_000, 1_600_000]) for _ in range(chance.randrange(300))]
        work = [(n, "op", size) for n, size in enumerate(sizes)]
        operations = chance.choice([1, 7, MAX_OPERATIONS - 1, MAX_OPERATIONS])
        assert list(chunked(work, operations)) == _greedy(work, operations)
