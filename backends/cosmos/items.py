"""Reading and shaping items, the same way in every repository of the Cosmos DB adapter: a point read
that answers None for a missing item, parameterised queries, an item without its system properties,
integers kept exact in JSON, and the version an item holds."""

from __future__ import annotations

from collections.abc import Iterator

from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import CosmosResourceNotFoundError

from core.stored_json import JsonObject
from core.versions import Version

# Ids per parameterised query (ARRAY_CONTAINS), and their characters: a query with its parameters stays well
# under Cosmos DB's limit on a query's length (a 500-record batch's payment ids fit in one query).
IDS_PER_QUERY = 1000
ID_CHARACTERS_PER_QUERY = 100_000
# Cosmos DB numbers are IEEE doubles: integers beyond 2**53 (epoch microseconds after year 2255,
# huge minor-unit amounts) are stored as decimal strings so that nothing is rounded.
_SAFE_INT = 2**53


def json_safe_int(number: int) -> int | str:
    """`number` as a JSON number when a double holds it exactly, else as its decimal string (read back
    with int(), which takes either)."""
    return number if -_SAFE_INT < number < _SAFE_INT else str(number)


def without_system_properties(item: JsonObject) -> JsonObject:
    """An item without the system properties (_rid, _etag, _ts, ...) the service adds."""
    return {name: value for name, value in item.items() if not name.startswith("_")}


def stored_version(item: JsonObject) -> Version:
    """The version an item holds: a record, a version entry, a tombstone, a product, or a store (which has
    no version property: compared as version 0)."""
    return Version(int(item.get("version", 0)), int(item["last_modified_us"]))


def forget(error: BaseException | None) -> None:
    """Drop the traceback of an SDK error caught as an answer (404, 409, 412), and of what it was raised from.
    The SDK's frames hold the error, so error, traceback and frames form a cycle, and through the frames every
    caller's locals stay reachable: until the collector runs, the whole batch being accepted stays in memory,
    and the collection then walks it all (decision 0126)."""
    while error is not None and error.__traceback__ is not None:
        error.__traceback__ = None
        error = error.__context__


def read_or_none(container: ContainerProxy, item_id: str, partition_key: str) -> JsonObject | None:
    try:
        return container.read_item(item_id, partition_key=partition_key)
    except CosmosResourceNotFoundError as error:
        forget(error)
        return None


# azure-cosmos (4.17) keeps the last response's headers on the client, shared by every thread, and writes its
# throttle counts into them after each request. A query whose thread is copying its page's headers at that
# moment fails with "RuntimeError: dictionary changed size during iteration" (seen with concurrent batches on
# the emulator: a 500; in Azure a queue trigger runs beside a request). It read nothing wrong. Before its
# first item it is run again; on a later page it is not (the items before it are already used) and fails.
SHARED_HEADERS_RACE = "changed size during iteration"
QUERY_ATTEMPTS = 3


def stream(
    container: ContainerProxy, sql: str, partition_key: str | None = None, **parameters: object
) -> Iterator[JsonObject]:
    """A parameterised query, its items read page by page as they are consumed; within one logical
    partition when `partition_key` is given (the filter on c.pk is repeated in the SQL: the emulator
    scopes queries by their WHERE clause only)."""
    params = [{"name": f"@{name}", "value": value} for name, value in parameters.items()]
    scope = {"enable_cross_partition_query": True} if partition_key is None else {"partition_key": partition_key}
    for attempt in range(1, QUERY_ATTEMPTS + 1):
        pages = container.query_items(sql, parameters=params, **scope).by_page()
        try:
            try:
                first = _first_items(pages)
            except RuntimeError as error:
                if attempt < QUERY_ATTEMPTS and SHARED_HEADERS_RACE in str(error):
                    continue
                raise
            if first:
                yield from first
                for page in pages:
                    yield from page
            return
        finally:
            let_go(pages)


def _first_items(pages: Iterator[Iterator[JsonObject]]) -> list[JsonObject]:
    """The items of the first page that has any (a page may be empty); none when no page has."""
    for page in pages:
        items = list(page)
        if items:
            return items
    return []


def let_go(pages: object) -> None:
    """Let go of the last page a query read. The SDK's page iterator refers to itself (its fetch and unpack are
    its own bound methods), so only the collector frees it, and with it the page it holds: a batch of later
    versions read its 500 entries and what its days hold that way, kept until a young collection walked them
    all (decision 0126). azure-core's PageIterator names them `_response` and `_current_page`."""
    for name in ("_response", "_current_page"):
        if hasattr(pages, name):
            setattr(pages, name, None)


def query(
    container: ContainerProxy, sql: str, partition_key: str | None = None, **parameters: object
) -> list[JsonObject]:
    return list(stream(container, sql, partition_key, **parameters))


def chunks(values: list[str]) -> Iterator[list[str]]:
    """`values` in slices of at most IDS_PER_QUERY values and ID_CHARACTERS_PER_QUERY characters (a value
    longer than that alone), one parameterised query each."""
    if len(values) <= IDS_PER_QUERY and sum(map(len, values)) <= ID_CHARACTERS_PER_QUERY:
        yield list(values)  # nearly always (a batch's ids): one slice, without a step per value (decision 0127)
        return
    chunk: list[str] = []
    characters = 0
    for value in values:
        if chunk and (len(chunk) == IDS_PER_QUERY or characters + len(value) > ID_CHARACTERS_PER_QUERY):
            yield chunk
            chunk, characters = [], 0
        chunk.append(value)
        characters += len(value)
    if chunk:
        yield chunk
