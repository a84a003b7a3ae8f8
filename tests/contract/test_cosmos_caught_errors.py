"""What the Cosmos DB adapter leaves for the collector (decision 0126): SDK errors caught as answers (404, 409,
412) nothing (the error, its traceback and the SDK's frames form a cycle, and the frames reach every caller's
locals, a whole batch being accepted); a query only its page iterator's own few objects, not its last page."""

from __future__ import annotations

import gc
import weakref

import pytest

from backends.cosmos import items, transactional
from backends.cosmos.connection import WriterPool


class Batch:
    """Stands for what the callers of a read hold (the parsed batch)."""


@pytest.fixture
def no_collector():
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def held_while(step) -> weakref.ref[Batch]:
    held = Batch()
    step()
    return weakref.ref(held)


def test_a_missing_item_read_frees_its_callers_at_once(cosmos_storage, no_collector):
    container = cosmos_storage._trade_records._trades
    held = held_while(lambda: items.read_or_none(container, "absent", "nowhere"))
    assert held() is None  # freed by reference counting, no collection needed


def test_a_refused_transactional_batch_frees_its_callers_at_once(cosmos_storage, no_collector):
    container = cosmos_storage._trade_records._trades
    item = {"id": "twice", "pk": "caught-errors"}
    container.upsert_item(item)
    writers = WriterPool()
    try:
        answered: list = []
        held = held_while(
            lambda: answered.extend(transactional.in_batches(container, writers, [(1, ("create", (item,)), 10)], "x"))
        )
    finally:
        writers.shutdown()
    assert answered == [(1, None)]  # refused: it exists
    assert held() is None


def test_without_forgetting_the_callers_wait_for_the_collector(cosmos_storage, no_collector, monkeypatch):
    """What the tests above guard against, shown on the same read."""
    monkeypatch.setattr(items, "forget", lambda error: None)
    container = cosmos_storage._trade_records._trades
    held = held_while(lambda: items.read_or_none(container, "absent", "nowhere"))
    assert held() is not None
    gc.collect()
    assert held() is None


def test_a_query_leaves_its_items_to_reference_counting(cosmos_storage, no_collector):
    container = cosmos_storage._trade_records._trades
    for number in range(300):
        container.upsert_item({"id": f"q{number}", "pk": "queried", "lines": [number], "sums": {"n": number}})
    found = items.query(container, "SELECT * FROM c WHERE c.pk = @pk", "queried", pk="queried")
    assert len(found) == 300
    del found
    assert gc.collect() < 100  # the SDK's page iterator and its closures; without letting go, its page too: 630


def test_a_page_of_a_store_days_records_leaves_its_items_to_reference_counting(cosmos_storage, no_collector):
    """The partner's read of a store-day's records (GET /trade-records) pages by the SDK's token itself."""
    container = cosmos_storage._trade_records._trades
    for number in range(300):
        container.upsert_item({"id": f"r{number}", "pk": "paged", "type": "record", "lines": [number]})
    sql = "SELECT * FROM c WHERE c.pk = @pk AND c.type = 'record'"
    page, token = cosmos_storage._day_records._page(sql, [{"name": "@pk", "value": "paged"}], "paged", 200, None)
    assert len(page) == 200 and token is not None
    del page
    assert gc.collect() < 100  # the page iterator's own few objects; without letting go, its page too
