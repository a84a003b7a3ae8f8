"""Request units of the Cosmos DB adapter, counted on the emulator and priced by Cosmos DB's documented
cost model.

The emulator the project runs (@vercel/cosmosdb-server) answers every request with
`x-ms-request-charge: 1`, whatever it did, so its charge says nothing. What is measured here is every
request the adapter makes (container, operation, status, the stored item's size and its indexed terms,
read from the SDK's calls and answers); what is computed is their charge, from the published table of
"Understand request unit consumption" (learn.microsoft.com, Cosmos DB): a point read and a write by item
size, Session consistency, one region. Where that page gives no figure the assumptions are named below
(ASSUMED), so that a real account's `x-ms-request-charge` can correct them one by one.

`RequestLog` is a context manager that wraps the SDK's ContainerProxy methods while it is open (the
adapter is unchanged) and keeps one `Request` per call.
"""

from __future__ import annotations

import bisect
import json
import re
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import orjson
from azure.cosmos.container import ContainerProxy
from azure.cosmos.exceptions import CosmosBatchOperationError, CosmosHttpResponseError

from backends.cosmos.connection import CONTAINERS_FILE
from devhost.cosmos_throttling import DATA_CALLS

# Published: item size (KB) -> RU of a point read and of a write (insert), indexing aside.
_SIZES_KB = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
_READ_RU = [1.00, 1.04, 1.14, 1.33, 1.67, 2.19, 4.76, 9.95, 20.28, 40.95, 145.90, 291.80]
_WRITE_RU = [4.95, 6.29, 6.67, 7.04, 9.52, 11.23, 22.67, 48.19, 98.29, 184.57, 625.00, 1250.00]

# ASSUMED (not in the published table): each indexed term a write adds; a request that finds nothing or
# loses its condition (404, 409, 412) costs a 1 KB read; a replace or a patch deletes and re-inserts
# (twice a write); a query's fixed part, to which it adds a point read of every document it loads (a
# projection shrinks what is returned, not what is loaded).
INDEXED_TERM_RU = 0.2
FAILED_REQUEST_RU = 1.0
REPLACE_FACTOR = 2.0
QUERY_BASE_RU = 2.5

_WRAPPED = sorted(DATA_CALLS)  # every data-plane call of the adapter, as throttling injection names them
# A transactional batch is charged the sum of its operations (learn.microsoft.com, "Transactional batch
# operations": "the request units consumed ... equal the sum of the individual operations").
_BATCH_OPERATIONS = {"create": "create_item", "upsert": "upsert_item", "replace": "replace_item", "read": "read_item"}
_TYPE_FILTER = re.compile(r"c\.type\s*=\s*'([^']+)'")


def _interpolated(table: list[float], size_bytes: int) -> float:
    """The table's figure for an item of size_bytes: its 1 KB figure below 1 KB, linear between rows."""
    kb = max(size_bytes / 1024, 1.0)
    if kb >= _SIZES_KB[-1]:
        return table[-1] * kb / _SIZES_KB[-1]
    upper = bisect.bisect_left(_SIZES_KB, kb)
    if _SIZES_KB[upper] == kb:
        return table[upper]
    low_kb, high_kb = _SIZES_KB[upper - 1], _SIZES_KB[upper]
    share = (kb - low_kb) / (high_kb - low_kb)
    return table[upper - 1] + share * (table[upper] - table[upper - 1])


def read_ru(size_bytes: int) -> float:
    return _interpolated(_READ_RU, size_bytes)


def write_ru(size_bytes: int, indexed_terms: int) -> float:
    return _interpolated(_WRITE_RU, size_bytes) + INDEXED_TERM_RU * indexed_terms


def _included_paths() -> dict[str, list[str]]:
    definitions = json.loads(CONTAINERS_FILE.read_text(encoding="utf-8"))["containers"]
    return {
        definition["id"]: [entry["path"] for entry in definition["indexingPolicy"]["includedPaths"]]
        for definition in definitions
    }


def indexed_terms(paths: list[str], item: dict) -> int:
    """Terms the container's indexing policy makes of the item (the policies index top-level paths only:
    "/name/?" one term when present, "/name/[]/?" one per array element)."""
    terms = 0
    for path in paths:
        name = path.strip("/").split("/")[0]
        value = item.get(name)
        if path.endswith("/[]/?"):
            terms += len(value) if isinstance(value, list) else 0
        elif name in item:
            terms += 1
    return terms


def stored_size(item: dict) -> int:
    return len(orjson.dumps(item))


@dataclass(frozen=True)
class Request:
    container: str
    operation: str
    status: int
    size: int  # bytes of the item stored or read; for a query, of each document it loaded
    terms: int  # indexed terms of the item written
    loaded: int = 0  # documents a query loaded
    emulator_charge: float = 0.0
    operations: tuple[Request, ...] = ()  # of a transactional batch

    @property
    def ru(self) -> float:
        if self.status >= 400:
            return FAILED_REQUEST_RU
        if self.operation == "execute_item_batch":
            return sum(operation.ru for operation in self.operations)
        if self.operation == "read_item":
            return read_ru(self.size)
        if self.operation in ("create_item", "upsert_item", "delete_item"):
            return write_ru(self.size, self.terms)
        if self.operation in ("replace_item", "patch_item"):
            return REPLACE_FACTOR * write_ru(self.size, self.terms)
        return QUERY_BASE_RU + self.loaded * read_ru(self.size)


@dataclass
class RequestLog:
    """Every Cosmos DB request made while open: `with RequestLog() as log: ...`; log.requests."""

    requests: list[Request] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _originals: dict = field(default_factory=dict)
    _paths: dict[str, list[str]] = field(default_factory=_included_paths)
    _sizes: dict[tuple[str, str], list[int]] = field(default_factory=lambda: defaultdict(list))

    def __enter__(self) -> RequestLog:
        for name in _WRAPPED:
            self._originals[name] = getattr(ContainerProxy, name)
            setattr(ContainerProxy, name, self._wrapper(name, self._originals[name]))
        return self

    def __exit__(self, *exc) -> None:
        for name, original in self._originals.items():
            setattr(ContainerProxy, name, original)
        self._originals.clear()

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def total_ru(self) -> float:
        return sum(request.ru for request in self.requests)

    def counts(self) -> Counter:
        """Requests by (container, operation, status)."""
        return Counter((request.container, request.operation, request.status) for request in self.requests)

    def written_bytes(self, container: str) -> int:
        """Bytes of the items created or upserted in a container (what it stores more)."""
        return sum(
            part.size
            for request in self.requests
            for part in (request.operations or (request,))
            if part.container == container and part.operation in ("create_item", "upsert_item")
        )

    def _wrapper(self, name: str, original):
        log = self

        def wrapped(container, *args, **kwargs):
            try:
                answer = original(container, *args, **kwargs)
            except (CosmosHttpResponseError, CosmosBatchOperationError) as error:
                log._add(Request(container.id, name, int(error.status_code or 0), 0, 0))
                raise
            if name == "query_items":
                return log._counted_query(container, args, kwargs, answer)
            if name == "execute_item_batch":
                log._add(log._batch_of(container, args[0] if args else kwargs["batch_operations"], answer))
                return answer
            log._add(log._request_of(container, name, answer))
            return answer

        return wrapped

    def _request_of(self, container, name: str, answer) -> Request:
        item = answer if isinstance(answer, dict) else {}
        size = stored_size(item) if item else 0
        terms = indexed_terms(self._paths.get(container.id, []), item) if name != "read_item" else 0
        if item and name in ("create_item", "upsert_item", "replace_item", "patch_item"):
            with self._lock:
                self._sizes[(container.id, str(item.get("type")))].append(size)
        return Request(container.id, name, 200, size, terms, emulator_charge=_emulator_charge(container))

    def _batch_of(self, container, operations, answers) -> Request:
        """A transactional batch: one request, priced as its operations would be one by one."""
        parts = tuple(
            # the item as stored when the answer carries it, else as sent
            self._request_of(container, _BATCH_OPERATIONS[operation[0]], answer.get("resourceBody") or operation[1][-1])
            for operation, answer in zip(operations, answers, strict=True)
        )
        return Request(container.id, "execute_item_batch", 200, 0, 0, operations=parts)

    def _counted_query(self, container, args, kwargs, pages):
        """The query's rows as it yields them; logged once read to the end. A row of a projection is priced
        as the whole document it came from: the average stored size of that type (c.type = '...')."""
        sql = args[0] if args else kwargs.get("query", "")
        wanted = _TYPE_FILTER.search(sql)
        rows = list(pages)
        with self._lock:
            sizes = self._sizes.get((container.id, wanted.group(1))) if wanted else None
        if sizes:
            size = sum(sizes) // len(sizes)
        else:
            size = max((stored_size(row) for row in rows), default=0)
        self._add(Request(container.id, "query_items", 200, size, 0, loaded=len(rows)))
        return _ReadRows(rows)

    def _add(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)


class _ReadRows:
    """A query's rows, read already: item by item, or as one page (`by_page`, as the adapter reads them)."""

    def __init__(self, rows: list) -> None:
        self._rows = iter(rows)

    def __iter__(self):
        return self._rows

    def by_page(self, continuation_token: str | None = None):
        return iter([self._rows])


def _emulator_charge(container) -> float:
    headers = getattr(container.client_connection, "last_response_headers", None) or {}
    try:
        return float(headers.get("x-ms-request-charge", 0))
    except ValueError:
        return 0.0
