"""The Cosmos DB adapter's queries and the SDK's shared response headers (backends/cosmos/items.py `stream`).

azure-cosmos writes into headers that every thread shares, so a query can fail with "dictionary changed size
during iteration" when another thread's request ends at that moment. The race cannot be provoked on demand
against the emulator, so a container stands in for the SDK's here: its query fails as the SDK's does (in
the first page's fetch, when the paged result is first iterated), the given number of times. The real
queries run on the emulator in the contract and e2e suites.
"""

from __future__ import annotations

import pytest

from backends.cosmos.items import QUERY_ATTEMPTS, query, stream

RACE = RuntimeError("dictionary changed size during iteration")


class Pages:
    """What container.query_items returns: lazy; the first page is fetched at the first next(), page by page
    with by_page (whose page iterator keeps its last page, as azure-core's does)."""

    def __init__(self, items: list[dict], error: Exception | None):
        self.items, self.error = items, error
        self.iterators: list[PageIterator] = []

    def by_page(self):
        self.iterators.append(PageIterator(self.items, self.error))
        return self.iterators[-1]


class PageIterator:
    def __init__(self, items: list[dict], error: Exception | None):
        self.items, self.error = items, error
        self._response: object = None
        self._current_page: object = None

        self._pages = self._fetched()

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._pages)

    def _fetched(self):
        if self.error is not None:
            raise self.error
        yield iter([])  # an empty page first, as a cross-partition query may answer
        for item in self.items:  # then a page an item
            self._response = self._current_page = [item]
            yield iter(self._current_page)


class Container:
    def __init__(self, items: list[dict], failures: int, error: Exception = RACE):
        self.items, self.failures, self.error = items, failures, error
        self.calls: list[tuple[str, dict]] = []

    def query_items(self, sql, **kwargs):
        self.calls.append((sql, kwargs))
        failing = len(self.calls) <= self.failures
        self.pages = Pages(self.items, self.error if failing else None)
        return self.pages


ITEMS = [{"id": "a"}, {"id": "b"}]


@pytest.mark.parametrize("failures", range(QUERY_ATTEMPTS))
def test_a_query_that_meets_the_race_before_its_first_item_is_run_again(failures):
    container = Container(ITEMS, failures)
    assert query(container, "SELECT * FROM c WHERE c.pk = @pk", "p1", pk="p1") == ITEMS
    assert len(container.calls) == failures + 1
    sql, kwargs = container.calls[-1]
    assert kwargs == {"parameters": [{"name": "@pk", "value": "p1"}], "partition_key": "p1"}


def test_the_race_every_time_fails_after_the_last_attempt():
    container = Container(ITEMS, QUERY_ATTEMPTS)
    with pytest.raises(RuntimeError, match="changed size"):
        query(container, "SELECT * FROM c")
    assert len(container.calls) == QUERY_ATTEMPTS


def test_another_runtime_error_is_not_retried():
    container = Container(ITEMS, 1, RuntimeError("something else"))
    with pytest.raises(RuntimeError, match="something else"):
        query(container, "SELECT * FROM c")
    assert len(container.calls) == 1


def test_a_query_without_items_and_a_cross_partition_query():
    container = Container([], 1)
    assert list(stream(container, "SELECT * FROM c WHERE c.x = @x", x=1)) == []
    assert container.calls[-1][1] == {"parameters": [{"name": "@x", "value": 1}], "enable_cross_partition_query": True}


def test_the_query_is_issued_only_when_its_items_are_read():
    container = Container(ITEMS, 0)
    items = stream(container, "SELECT * FROM c")
    assert container.calls == []
    assert next(items) == {"id": "a"}
    assert len(container.calls) == 1


@pytest.mark.parametrize("read", [list, lambda items: next(items)], ids=["all", "the first only"])
def test_a_query_lets_go_of_its_last_page(read):
    """The SDK's page iterator refers to itself, so only the collector would free the page it holds (decision
    0126): the page is let go of once the items are read, or the reading stopped."""
    container = Container(ITEMS, 0)
    items = stream(container, "SELECT * FROM c")
    read(items)
    items.close()
    (iterator,) = container.pages.iterators
    assert iterator._response is None and iterator._current_page is None
