"""The Azure storage adapter: Cosmos DB (NoSQL API), with the observable behaviour of SqliteStorage.

Cosmos DB gives no transaction across items (and the emulator the tests use has no transactional
batch), so a batch is made safe by order and idempotency instead:

- the data writes of a batch come first and are idempotent: a retry of the same batch after a crash
  writes the same items again and converges;
- the batch marker is created last, create-if-absent: a 409 means a concurrent twin won, and its
  stored marker is returned (the caller answers ALREADY_RECEIVED);
- every read-modify-write (latest version, store master, close result, payment directions, key
  revocation) is a replace conditioned on the ETag that was read, retried on 412.

Only point reads, single-partition or parameterised queries, create/upsert/replace/patch/delete are
used: no aggregates, GROUP BY or transactional batch, so the same code runs on the emulator.

Containers, partition keys and indexing policies come from infra/cosmos/containers.json, the file the
deployment uses too; docs/decisions.md ("Cosmos DB") says why they are what they are.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime as dt
import functools
import hashlib
import ipaddress
import json
import re
import string
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import urlsplit

import orjson
import requests
from azure.core import MatchConditions
from azure.core.exceptions import (
    ClientAuthenticationError,
    ServiceRequestError,
    ServiceResponseError,
)
from azure.core.pipeline.transport import RequestsTransport
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.exceptions import (
    CosmosAccessConditionFailedError,
    CosmosClientTimeoutError,
    CosmosHttpResponseError,
    CosmosResourceExistsError,
    CosmosResourceNotFoundError,
)
from urllib3.exceptions import InsecureRequestWarning
from urllib3.util.retry import Retry

from core import faults
from core.clock import epoch_micros, from_epoch_micros, from_utc_text, to_utc_text
from core.ports import AdminError, BackendUnavailable
from core.records import (
    ApiKeyInfo,
    BatchMarker,
    ClosedDay,
    KeyOwner,
    Mapping,
    ModifierGroupMaster,
    Partner,
    ProductMaster,
    RecordChanges,
    RecordMove,
    SavedTradeRecords,
    StoreDay,
    StoreDayTotals,
    StoreMaster,
    TradeRecordRow,
    UnknownProduct,
    merge_moved_out,
)
from core.settings import PROJECT_ROOT, Settings

CONTAINERS_FILE = PROJECT_ROOT / "infra" / "cosmos" / "containers.json"

PARTNERS = "partners"  # partner-scoped admin and reference data; API keys by hash
BATCHES = "batches"  # batch markers, one logical partition each
TRADE_RECORDS = "trade-records"  # store-day partitions, and one version entry per trade record
CLOSES = "daily-closes"  # daily closes and their results, one partition per partner

# Batch markers never expire unless BATCH_MARKER_TTL_DAYS opts in (docs/decisions.md, "Markers that do
# not expire"): a batch resent after its marker is gone would be taken for a new one.
DEFAULT_MARKER_TTL_DAYS = 0
# A rate-limit window is counted for 60 s; its counter then only has to outlive clock skew.
RATE_WINDOW_TTL_SECONDS = 120
# A tombstone only has to outlive a write already in flight when its record moved (seconds to
# minutes); a day is far beyond any request or retry.
TOMBSTONE_TTL_SECONDS = 86_400
# Items of one batch are written concurrently: a batch of 1,000 records is ~3,000 requests.
WRITE_CONCURRENCY = 16
# Optimistic concurrency gives up (503, the caller retries) only under pathological contention.
MAX_ATTEMPTS = 50
# Ids per parameterised query (ARRAY_CONTAINS): keeps the query text well under its size limit.
IDS_PER_QUERY = 500
# Cosmos DB numbers are IEEE doubles: integers beyond 2**53 (epoch microseconds after year 2255,
# huge minor-unit amounts) are stored as decimal strings so that nothing is rounded.
_SAFE_INT = 2**53
# An id is limited to 1,023 bytes; a longer compound id is replaced by its hash.
_MAX_ID_BYTES = 1023
# A status that means "Cosmos DB cannot serve us now": answered 503, the request may be retried.
# 401/403 are a credential or firewall problem of this deployment, not of the partner's request.
_OUTAGE_STATUS = {401, 403, 408, 410, 429, 449, 500, 502, 503, 504}
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}
_PLAIN = frozenset(string.ascii_letters + string.digits + "-._")

_IF_UNCHANGED = {"match_condition": MatchConditions.IfNotModified}


class _Contention(Exception):
    """Optimistic concurrency did not settle within MAX_ATTEMPTS."""


def load_container_definitions(path: Path = CONTAINERS_FILE) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["containers"]


def is_loopback(endpoint: str) -> bool:
    host = (urlsplit(endpoint).hostname or "").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _tls_verification(endpoint: str, verify_tls: bool | None) -> bool:
    """Verify certificates always, except for an emulator on this machine (self-signed certificate):
    traffic that never leaves the host cannot be intercepted on the way."""
    if verify_tls is None:
        return not is_loopback(endpoint)
    if not verify_tls and not is_loopback(endpoint):
        raise ValueError("TLS verification can only be turned off for a loopback endpoint (an emulator)")
    return verify_tls


def _part(value: str) -> str:
    """A partner's code made safe for ids and partition keys, readable when it is plain.

    Codes (product_id, trade_record_id, group_id, ...) may hold any printable character, "/ \\ ? #"
    included, which Cosmos DB refuses in an id; store and partner ids hold fewer. Some characters
    Cosmos DB accepts in an id still break its point operations (a "%" sequence is decoded by the
    gateway before it checks the request's signature: 401 or 404), and "|" separates compound keys.
    So letters, digits and "-._" stay, and every other character is written as ~XX per UTF-8 byte:
    injective, hence no two codes (or key parts) ever collide. A code is escaped, never refused; a
    key grown too long by escaping is hashed by _key.
    """
    if all(char in _PLAIN for char in value):
        return value
    return "".join(char if char in _PLAIN else "".join(f"~{byte:02X}" for byte in char.encode("utf-8"))
                   for char in value)


def _key(*parts: str) -> str:
    """A compound id or partition key value, unambiguous and within Cosmos DB's length limit."""
    joined = "|".join(_part(part) for part in parts)
    if len(joined.encode("utf-8")) > _MAX_ID_BYTES:
        return "sha256|" + hashlib.sha256(joined.encode("utf-8")).hexdigest()
    return joined


def _exact(number: int) -> int | str:
    return number if -_SAFE_INT < number < _SAFE_INT else str(number)


def _body(item: dict) -> dict:
    """An item without the system properties (_rid, _etag, _ts, ...) the service adds."""
    return {name: value for name, value in item.items() if not name.startswith("_")}


def _outage_as_unavailable(method):
    """A Cosmos DB outage (after the SDK's own retries) becomes BackendUnavailable: answered 503."""

    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except CosmosHttpResponseError as error:
            if error.status_code in _OUTAGE_STATUS:
                raise BackendUnavailable(f"Cosmos DB answered {error.status_code}") from error
            raise
        except (ServiceRequestError, ServiceResponseError, ClientAuthenticationError,
                CosmosClientTimeoutError) as error:
            raise BackendUnavailable(f"Cosmos DB cannot be reached: {type(error).__name__}") from error
        except _Contention as error:
            raise BackendUnavailable(str(error)) from error

    return guarded


def _transport(pool_size: int) -> RequestsTransport:
    # One connection per concurrent writer (the default pool keeps 10 and would reconnect, paying a
    # TLS handshake, whenever a batch writes with more threads). Retries are the Cosmos SDK's job.
    session = requests.Session()
    adapter = requests.adapters.HTTPAdapter(pool_connections=4, pool_maxsize=pool_size,
                                            max_retries=Retry(total=False, redirect=False, raise_on_status=False))
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return RequestsTransport(session=session, session_owner=True)


def _read(container, item_id: str, partition_key: str) -> dict | None:
    try:
        return container.read_item(item_id, partition_key=partition_key)
    except CosmosResourceNotFoundError:
        return None


def _stream(container, sql: str, partition_key: str | None = None, **parameters) -> Iterable[dict]:
    """A parameterised query, its items read page by page as they are consumed; within one logical
    partition when `partition_key` is given (the filter on c.pk is repeated in the SQL: the emulator
    scopes queries by their WHERE clause only)."""
    params = [{"name": f"@{name}", "value": value} for name, value in parameters.items()]
    if partition_key is None:
        return container.query_items(sql, parameters=params, enable_cross_partition_query=True)
    return container.query_items(sql, parameters=params, partition_key=partition_key)


def _query(container, sql: str, partition_key: str | None = None, **parameters) -> list[dict]:
    return list(_stream(container, sql, partition_key, **parameters))


def _write_if(container, item: dict, wins: Callable[[dict], bool], *, create_first: bool = False) -> bool:
    """Create `item`, or replace the stored one when wins(stored): an ETag-conditioned replace, so a
    concurrent writer in between makes us read again (412) instead of being overwritten."""
    for _ in range(MAX_ATTEMPTS):
        if create_first:
            try:
                container.create_item(item)
                return True
            except CosmosResourceExistsError:
                pass
        current = _read(container, item["id"], item["pk"])
        if current is None:
            create_first = True
            continue
        if not wins(current):
            return False
        try:
            container.replace_item(item["id"], item, etag=current["_etag"], **_IF_UNCHANGED)
            return True
        except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError):
            create_first = False
    raise _Contention(f"too many concurrent writes to {item['id']}")


def _write_unless_received(container, item_id: str, pk: str, receipt: dict,
                           build: Callable[[dict | None], dict]) -> dict | None:
    """Write build(current item or None) as the item, with the receipts it holds plus `receipt`, unless they hold receipt's
    batch_id already: then nothing is written and that earlier receipt is returned.

    The receipts (every batch that ever wrote this item) never expire, unlike batch markers, so a batch
    resent after its marker is gone is still known. The write is conditioned on the ETag read, so of
    concurrent writers each sees the receipts of those before it."""
    for _ in range(MAX_ATTEMPTS):
        current = _read(container, item_id, pk)
        receipts = [] if current is None else current.get("received", [])  # none in items of before
        earlier = next((seen for seen in receipts if seen["batch_id"] == receipt["batch_id"]), None)
        if earlier is not None:
            return earlier
        item = {**build(current), "received": receipts + [receipt]}
        try:
            if current is None:
                container.create_item(item)
            else:
                container.replace_item(item_id, item, etag=current["_etag"], **_IF_UNCHANGED)
            return None
        except (CosmosResourceExistsError, CosmosAccessConditionFailedError, CosmosResourceNotFoundError):
            continue
    raise _Contention(f"too many concurrent writes to {item_id}")


def _receipt(marker: BatchMarker) -> dict:
    return {"batch_id": marker.batch_id, "record_count": marker.record_count, "body_digest": marker.body_digest,
            "received_at": to_utc_text(marker.received_at)}


def _received_marker(marker: BatchMarker, receipt: dict) -> BatchMarker:
    """The marker of the batch a receipt records (`marker`: this request's, of the same batch_id)."""
    return dataclasses.replace(marker, record_count=receipt["record_count"], body_digest=receipt["body_digest"],
                               received_at=from_utc_text(receipt["received_at"]))


def _day_key(partner_id: str, store_id: str, business_date: str) -> str:
    return _key("d", partner_id, store_id, business_date)


def _close_id(store_id: str, business_date: dt.date) -> str:
    return _key(store_id, business_date.isoformat())


def _version_key(partner_id: str, trade_record_id: str) -> str:
    return _key("v", partner_id, trade_record_id)


def _record_id(trade_record_id: str) -> str:
    return _key("r", trade_record_id)


def _payment_key(partner_id: str, payment_id: str) -> str:
    """What a record item lists per payment: partner and payment_id in one indexed value, so that a look-up
    finds only the partner's own (other partners' numeric ids like "1001" are never loaded)."""
    return _key(partner_id, payment_id)


def _chunks(values: list[str]) -> Iterable[list[str]]:
    return (values[start:start + IDS_PER_QUERY] for start in range(0, len(values), IDS_PER_QUERY))


def _lines_of(item: dict) -> dict[str, int]:
    """A record item's lines per product_id: stored with it, or, for a record written before they were,
    counted from its document's items."""
    lines = item.get("lines")
    if isinstance(lines, dict):
        return lines
    counted: dict[str, int] = {}
    for line in lines or []:
        counted[line["product_id"]] = counted.get(line["product_id"], 0) + 1
    return counted


def _latest_of_each(rows: list[TradeRecordRow]) -> list[TradeRecordRow]:
    """One row per trade_record_id, the one the version rule keeps (the first of equals), as SQLite's upsert
    keeps it: rows of one batch are written concurrently, and two of one record would race."""
    kept: dict[str, TradeRecordRow] = {}
    for row in rows:
        other = kept.get(row.trade_record_id)
        if other is None or (row.version, row.last_modified_at) > (other.version, other.last_modified_at):
            kept[row.trade_record_id] = row
    return list(kept.values())


def _version_of(item: dict) -> tuple[int, int]:
    return int(item["version"]), int(item["last_modified_us"])


def _opt_text(moment: dt.datetime | None) -> str | None:
    return None if moment is None else to_utc_text(moment)


def _opt_time(text: str | None) -> dt.datetime | None:
    return None if text is None else from_utc_text(text)


class CosmosStorage:
    """The Storage port on Cosmos DB. One instance per process; it is thread-safe."""

    def __init__(self, endpoint: str, database: str = "pos", *, key: str | None = None, credential=None,
                 create_containers: bool = False, marker_ttl_days: int = DEFAULT_MARKER_TTL_DAYS,
                 verify_tls: bool | None = None, containers_file: Path = CONTAINERS_FILE) -> None:
        if not endpoint:
            raise ValueError("COSMOS_ENDPOINT is not set")
        if marker_ttl_days < 0:
            raise ValueError("marker_ttl_days must be 0 (keep forever) or more")
        verify = _tls_verification(endpoint, verify_tls)
        host = urlsplit(endpoint).hostname or ""
        if key:
            credential = key
        elif credential is None:
            from azure.identity import DefaultAzureCredential

            credential = DefaultAzureCredential()  # managed identity in Azure
        if not verify:  # the emulator's self-signed certificate: silence that warning for its host only
            warnings.filterwarnings("ignore", category=InsecureRequestWarning,
                                    message=f"Unverified HTTPS request is being made to host '{re.escape(host)}'")
        self._marker_ttl = marker_ttl_days * 86_400
        try:
            # The SDK retries throttling (429: up to 9 times, 30 s in all, honouring Retry-After) and
            # transient failures (connection errors, 408/410/449/503) before raising.
            self.client = CosmosClient(endpoint, credential, connection_verify=verify,
                                       transport=_transport(2 * WRITE_CONCURRENCY),
                                       user_agent_suffix="pos-ingestion")
            containers = self._open(database, load_container_definitions(containers_file), create_containers)
        except (CosmosHttpResponseError, ServiceRequestError, ServiceResponseError, ClientAuthenticationError,
                CosmosClientTimeoutError) as error:
            raise BackendUnavailable(f"cannot open Cosmos DB database {database!r} at {endpoint}: "
                                     f"{type(error).__name__}") from error
        self._partners = containers[PARTNERS]
        self._batches = containers[BATCHES]
        self._trades = containers[TRADE_RECORDS]
        self._closes = containers[CLOSES]
        self._pool = concurrent.futures.ThreadPoolExecutor(WRITE_CONCURRENCY, thread_name_prefix="cosmos-write")

    @classmethod
    def from_settings(cls, settings: Settings) -> CosmosStorage:
        return cls(settings.cosmos_endpoint, settings.cosmos_database, key=settings.cosmos_key or None,
                   create_containers=settings.cosmos_create_containers,
                   marker_ttl_days=settings.batch_marker_ttl_days)

    def _open(self, database_name: str, definitions: list[dict], create: bool) -> dict:
        if create:
            database = self.client.create_database_if_not_exists(database_name)
            for definition in definitions:
                key = definition["partitionKey"]
                database.create_container_if_not_exists(
                    id=definition["id"],
                    partition_key=PartitionKey(path=key["paths"][0], kind=key.get("kind", "Hash"),
                                               version=key.get("version", 2)),
                    indexing_policy=definition.get("indexingPolicy"),
                    default_ttl=definition.get("defaultTtl"))
        else:
            database = self.client.get_database_client(database_name)
        containers = {definition["id"]: database.get_container_client(definition["id"]) for definition in definitions}
        for container_id, container in containers.items():
            # Once per process: a missing container would otherwise pass for a missing item (404).
            try:
                container.read()
            except CosmosResourceNotFoundError:
                raise BackendUnavailable(f"Cosmos DB container {container_id!r} of database {database_name!r} does "
                                         "not exist: deploy infra/ or set COSMOS_CREATE_CONTAINERS=true") from None
        return containers

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self.client.close()

    def _each(self, work: Callable, items: Iterable) -> list:
        """Run work(item) for every item concurrently; wait for all, then raise the first failure, or
        return their results in the order of the items."""
        items = list(items)
        if len(items) <= 1:
            return [work(item) for item in items]
        futures = [self._pool.submit(work, item) for item in items]
        concurrent.futures.wait(futures)
        return [future.result() for future in futures]

    # -- HQ administration ------------------------------------------------------------------------

    @_outage_as_unavailable
    def add_partner(self, partner_id: str, name: str, now: dt.datetime) -> Partner:
        try:
            self._partners.create_item({"id": "partner", "pk": _key(partner_id), "type": "partner",
                                        "partner_id": partner_id, "name": name, "active": True,
                                        "created_at": to_utc_text(now)})
        except CosmosResourceExistsError:
            raise AdminError(f"partner {partner_id} already exists") from None
        return Partner(partner_id, name, True, now)

    @_outage_as_unavailable
    def set_partner_active(self, partner_id: str, active: bool) -> Partner:
        try:
            item = self._partners.patch_item("partner", partition_key=_key(partner_id),
                                             patch_operations=[{"op": "set", "path": "/active", "value": active}])
        except CosmosResourceNotFoundError:
            raise AdminError(f"unknown partner {partner_id}") from None
        return self._partner(item)

    @_outage_as_unavailable
    def get_partner(self, partner_id: str) -> Partner | None:
        item = _read(self._partners, "partner", _key(partner_id))
        return None if item is None else self._partner(item)

    @_outage_as_unavailable
    def list_partners(self) -> list[Partner]:
        items = _query(self._partners, "SELECT * FROM c WHERE c.type = 'partner'")
        return sorted((self._partner(item) for item in items), key=lambda partner: partner.partner_id)

    @staticmethod
    def _partner(item: dict) -> Partner:
        return Partner(item["partner_id"], item["name"], bool(item["active"]), from_utc_text(item["created_at"]))

    def _require_partner(self, partner_id: str) -> Partner:
        partner = self.get_partner(partner_id)
        if partner is None:
            raise AdminError(f"unknown partner {partner_id}")
        return partner

    @_outage_as_unavailable
    def add_key(self, partner_id: str, key_id: str, key_hash: str, now: dt.datetime) -> ApiKeyInfo:
        self._require_partner(partner_id)
        # Keyed by the hash in its own logical partition: a request's key is one point read away.
        try:
            self._partners.create_item({"id": "key", "pk": _key("key", key_hash), "type": "key",
                                        "partner_id": partner_id, "key_id": key_id, "key_hash": key_hash,
                                        "created_at": to_utc_text(now), "revoked_at": None, "last_used_at": None})
        except CosmosResourceExistsError:
            raise AdminError(f"key {key_id} already exists") from None
        return ApiKeyInfo(key_id, partner_id, now, None)

    @_outage_as_unavailable
    def revoke_key(self, partner_id: str, key_id: str, now: dt.datetime) -> ApiKeyInfo:
        self._require_partner(partner_id)
        for _ in range(MAX_ATTEMPTS):
            found = _query(self._partners, "SELECT * FROM c WHERE c.type = 'key' AND c.partner_id = @partner "
                                           "AND c.key_id = @key", partner=partner_id, key=key_id)
            if not found:
                raise AdminError(f"partner {partner_id} has no key {key_id}")
            item = found[0]
            if item["revoked_at"] is not None:
                raise AdminError(f"key {key_id} is already revoked")
            try:
                self._partners.replace_item(item["id"], {**_body(item), "revoked_at": to_utc_text(now)},
                                            etag=item["_etag"], **_IF_UNCHANGED)
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError):
                continue
            return ApiKeyInfo(key_id, partner_id, from_utc_text(item["created_at"]), now)
        raise _Contention(f"too many concurrent changes to key {key_id}")

    @_outage_as_unavailable
    def list_keys(self, partner_id: str) -> list[ApiKeyInfo]:
        self._require_partner(partner_id)
        items = _query(self._partners, "SELECT c.key_id, c.partner_id, c.created_at, c.revoked_at, c.last_used_at "
                                       "FROM c WHERE c.type = 'key' AND c.partner_id = @partner", partner=partner_id)
        items.sort(key=lambda item: (item["created_at"], item["key_id"]))
        # A key item written before last_used_at existed has no such property.
        return [ApiKeyInfo(item["key_id"], item["partner_id"], from_utc_text(item["created_at"]),
                           _opt_time(item["revoked_at"]), _opt_time(item.get("last_used_at"))) for item in items]

    @_outage_as_unavailable
    def register_stores(self, partner_id: str, store_ids: list[str], now: dt.datetime) -> None:
        self._require_partner(partner_id)
        known = self._registered_among(partner_id, store_ids)
        if known:
            raise AdminError(f"already registered for {partner_id}: {', '.join(sorted(known))}")
        raced: set[str] = set()

        def register(store_id: str) -> None:
            try:
                self._partners.create_item({"id": _key("registration", store_id), "pk": _key(partner_id),
                                            "type": "registration", "store_id": store_id,
                                            "registered_at": to_utc_text(now)})
            except CosmosResourceExistsError:
                raced.add(store_id)

        self._each(register, sorted(set(store_ids)))
        if raced:
            raise AdminError(f"already registered for {partner_id}: {', '.join(sorted(raced))}")

    @_outage_as_unavailable
    def unregister_stores(self, partner_id: str, store_ids: list[str]) -> None:
        self._require_partner(partner_id)
        missing = set(store_ids) - self._registered_among(partner_id, store_ids)
        if missing:
            raise AdminError(f"not registered for {partner_id}: {', '.join(sorted(missing))}")

        def unregister(store_id: str) -> None:
            try:
                self._partners.delete_item(_key("registration", store_id), partition_key=_key(partner_id))
            except CosmosResourceNotFoundError:
                pass  # a concurrent unregister did it

        self._each(unregister, sorted(set(store_ids)))

    @_outage_as_unavailable
    def registered_stores(self, partner_id: str) -> list[str]:
        self._require_partner(partner_id)
        items = _query(self._partners, "SELECT c.store_id FROM c WHERE c.pk = @pk AND c.type = 'registration'",
                       _key(partner_id), pk=_key(partner_id))
        return sorted(item["store_id"] for item in items)

    def _registered_among(self, partner_id: str, store_ids) -> set[str]:
        ids = sorted(set(store_ids))
        pk = _key(partner_id)
        if len(ids) <= 3:  # the usual request names one store: point reads (1 RU each) beat a query
            return {store_id for store_id in ids
                    if _read(self._partners, _key("registration", store_id), pk) is not None}
        found: set[str] = set()
        for start in range(0, len(ids), 500):  # keep the query text well under its size limit
            items = _query(self._partners, "SELECT c.store_id FROM c WHERE c.pk = @pk AND c.type = 'registration' "
                                           "AND ARRAY_CONTAINS(@ids, c.store_id)", pk, pk=pk,
                           ids=ids[start:start + 500])
            found.update(item["store_id"] for item in items)
        return found

    @_outage_as_unavailable
    def set_payment_direction(self, partner_id: str, payment_type: str, direction: int) -> None:
        self._require_partner(partner_id)
        pk = _key(partner_id)
        for _ in range(MAX_ATTEMPTS):
            item = _read(self._partners, "payment-directions", pk)
            if item is None:
                try:
                    self._partners.create_item({"id": "payment-directions", "pk": pk, "type": "payment-directions",
                                                "directions": {payment_type: direction}})
                    return
                except CosmosResourceExistsError:
                    continue
            directions = {**item["directions"], payment_type: direction}
            try:
                self._partners.replace_item(item["id"], {**_body(item), "directions": directions},
                                            etag=item["_etag"], **_IF_UNCHANGED)
                return
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError):
                continue
        raise _Contention(f"too many concurrent changes to the payment directions of {partner_id}")

    @_outage_as_unavailable
    def payment_directions(self, partner_id: str) -> dict[str, int]:
        item = _read(self._partners, "payment-directions", _key(partner_id))
        return {} if item is None else dict(item["directions"])

    @_outage_as_unavailable
    def delete_payment_direction(self, partner_id: str, payment_type: str) -> bool:
        self._require_partner(partner_id)
        pk = _key(partner_id)
        for _ in range(MAX_ATTEMPTS):
            item = _read(self._partners, "payment-directions", pk)
            if item is None or payment_type not in item["directions"]:
                return False
            directions = {code: value for code, value in item["directions"].items() if code != payment_type}
            try:
                self._partners.replace_item(item["id"], {**_body(item), "directions": directions},
                                            etag=item["_etag"], **_IF_UNCHANGED)
                return True
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError):
                continue
        raise _Contention(f"too many concurrent changes to the payment directions of {partner_id}")

    # -- request admission ------------------------------------------------------------------------

    @_outage_as_unavailable
    def find_key(self, key_hash: str) -> KeyOwner | None:
        key = _read(self._partners, "key", _key("key", key_hash))
        if key is None:
            return None
        partner = _read(self._partners, "partner", _key(key["partner_id"]))
        if partner is None:
            return None
        return KeyOwner(self._partner(partner), key["key_id"], key["key_hash"], key["revoked_at"] is not None,
                        _opt_time(key.get("last_used_at")))

    @_outage_as_unavailable
    def record_key_use(self, key_hash: str, hour: dt.datetime) -> None:
        # Read, compare, replace on the ETag read: a concurrent revocation is never overwritten, and an
        # earlier hour never replaces a later one. At most once an hour per key (the caller decides).
        text = to_utc_text(hour)
        for _ in range(MAX_ATTEMPTS):
            item = _read(self._partners, "key", _key("key", key_hash))
            if item is None or (item.get("last_used_at") or "") >= text:
                return
            try:
                self._partners.replace_item(item["id"], {**_body(item), "last_used_at": text},
                                            etag=item["_etag"], **_IF_UNCHANGED)
                return
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError):
                continue
        raise _Contention("too many concurrent changes to a key")

    @_outage_as_unavailable
    def unregistered(self, partner_id: str, store_ids: set[str]) -> set[str]:
        return set(store_ids) - self._registered_among(partner_id, store_ids)

    @_outage_as_unavailable
    def count_request(self, partner_id: str, window_start: int) -> int:
        # A patch increment is atomic on the server: concurrent instances never lose a count.
        item_id, pk = f"rate|{window_start}", _key(partner_id)
        for _ in range(MAX_ATTEMPTS):
            try:
                item = self._partners.patch_item(item_id, partition_key=pk,
                                                 patch_operations=[{"op": "incr", "path": "/count", "value": 1}])
                return int(item["count"])
            except CosmosResourceNotFoundError:
                pass
            try:  # first request of the window; old windows expire by TTL
                self._partners.create_item({"id": item_id, "pk": pk, "type": "rate-window", "count": 1,
                                            "ttl": RATE_WINDOW_TTL_SECONDS})
                return 1
            except CosmosResourceExistsError:
                continue
        raise _Contention(f"too many concurrent requests counted for {partner_id}")

    @_outage_as_unavailable
    def ping(self) -> None:
        # A point read of an item that does not exist: a data-plane request (~1 RU), not a metadata
        # read, which Cosmos DB throttles separately and which a frequent health probe could exhaust.
        _read(self._partners, "ping", "ping")

    # -- batches ----------------------------------------------------------------------------------

    @_outage_as_unavailable
    def find_batch(self, partner_id: str, batch_id: str) -> BatchMarker | None:
        return self._find_batch(partner_id, batch_id)

    def _find_batch(self, partner_id: str, batch_id: str) -> BatchMarker | None:
        item = _read(self._batches, _key(batch_id), _key(partner_id, batch_id))
        if item is None:
            return None
        return BatchMarker(
            item["partner_id"], item["batch_id"], item["kind"], item["record_count"], item["body_digest"],
            from_utc_text(item["received_at"]), item["store_id"],
            None if item["business_date"] is None else dt.date.fromisoformat(item["business_date"]),
            item["batch_seq"], RecordChanges.from_json(item.get("changes")))

    def _commit_marker(self, marker: BatchMarker, *, receipt_written: bool = False) -> BatchMarker | None:
        """Create the marker, last, if absent: None when this call accepted the batch, else the
        marker of the concurrent twin that won. `receipt_written`: this call wrote the batch's receipt
        (a close or mapping), so a twin that found the receipt may have put this very marker back from
        it (_restore_marker) in between; the batch is still this call's."""
        item = {"id": _key(marker.batch_id), "pk": _key(marker.partner_id, marker.batch_id), "type": "batch",
                "partner_id": marker.partner_id, "batch_id": marker.batch_id, "kind": marker.kind,
                "record_count": marker.record_count, "body_digest": marker.body_digest,
                "received_at": to_utc_text(marker.received_at), "store_id": marker.store_id,
                "business_date": None if marker.business_date is None else marker.business_date.isoformat(),
                "batch_seq": marker.batch_seq}
        if marker.changes is not None:
            item["changes"] = marker.changes.as_json()
        if self._marker_ttl:
            item["ttl"] = self._marker_ttl
        faults.point("storage.data_written")
        for _ in range(MAX_ATTEMPTS):
            try:
                self._batches.create_item(item)
                faults.point("cosmos.marker_committed")
                return None
            except CosmosResourceExistsError:
                stored = self._find_batch(marker.partner_id, marker.batch_id)
                if stored is not None:  # else it expired in between: try again
                    return None if receipt_written and stored == marker else stored
        raise _Contention(f"batch marker {marker.batch_id} keeps changing")

    @_outage_as_unavailable
    def save_stores(self, marker: BatchMarker, stores: list[StoreMaster]) -> BatchMarker | None:
        existing = self._find_batch(marker.partner_id, marker.batch_id)
        if existing is not None:
            return existing
        pk = _key(marker.partner_id)

        def save(store: StoreMaster) -> None:
            modified = epoch_micros(store.last_modified_at)
            item = {"id": _key("store", store.store_id), "pk": pk, "type": "store", "store_id": store.store_id,
                    "currency": store.currency, "country_code": store.country_code, "time_zone": store.time_zone,
                    "workday_start": store.workday_start, "prices_include_tax": store.prices_include_tax,
                    "last_modified_us": _exact(modified), "document": store.document}
            # The later last_modified_at wins; equal: the newer request.
            _write_if(self._partners, item, lambda current: modified >= int(current["last_modified_us"]))
            faults.point("cosmos.master_written")

        self._each(save, stores)
        return self._commit_marker(marker)

    @_outage_as_unavailable
    def save_products(self, marker: BatchMarker, products: list[ProductMaster],
                      groups: list[ModifierGroupMaster]) -> BatchMarker | None:
        existing = self._find_batch(marker.partner_id, marker.batch_id)
        if existing is not None:
            return existing
        pk = _key(marker.partner_id)

        def save_product(product: ProductMaster) -> None:
            mine = (product.version, epoch_micros(product.last_modified_at))
            item = {"id": _key("product", product.product_id, product.store_id or ""), "pk": pk, "type": "product",
                    "product_id": product.product_id, "store_key": product.store_id or "",
                    "version": product.version, "last_modified_us": _exact(mine[1]), "document": product.document}
            # The higher version wins; equal versions: the later (or equal) last_modified_at.
            _write_if(self._partners, item, lambda current: mine >= _version_of(current))
            faults.point("cosmos.master_written")

        def save_group(group: ModifierGroupMaster) -> None:
            self._partners.upsert_item({"id": _key("group", group.group_id), "pk": pk, "type": "modifier-group",
                                        "group_id": group.group_id, "document": group.document})
            faults.point("cosmos.master_written")

        self._each(save_product, products)
        self._each(save_group, groups)
        return self._commit_marker(marker)

    @_outage_as_unavailable
    def replace_mapping(self, marker: BatchMarker, entries: list[dict]) -> BatchMarker | None:
        existing = self._find_batch(marker.partner_id, marker.batch_id)
        if existing is not None:
            return existing
        earlier = _write_unless_received(
            self._partners, "mapping", _key(marker.partner_id), _receipt(marker),
            lambda current: {"id": "mapping", "pk": _key(marker.partner_id), "type": "mapping", "batch_id": marker.batch_id,
                     "updated_at": to_utc_text(marker.received_at), "entries": entries})
        if earlier is not None:  # uploaded before, its marker gone: the mapping stays as it is
            return self._restore_marker(_received_marker(marker, earlier))
        return self._commit_marker(marker, receipt_written=True)

    @_outage_as_unavailable
    def save_trade_records(self, marker: BatchMarker, rows: list[TradeRecordRow]) -> SavedTradeRecords:
        existing = self._find_batch(marker.partner_id, marker.batch_id)
        if existing is not None:
            return SavedTradeRecords(existing)
        saved = self._each(lambda row: self._save_trade_record(marker.partner_id, marker.batch_id, row),
                           _latest_of_each(rows))
        moves = tuple(move for newer, move in saved if move is not None)
        changes = RecordChanges(sum(newer for newer, _ in saved), moves)
        marker = dataclasses.replace(marker, changes=changes)
        received = self._batch_entry(marker)
        if received is not None:
            self._trades.upsert_item(received)
            faults.point("cosmos.batch_entry")
        stored = self._commit_marker(marker)
        if stored is not None and received is not None:
            self._settle_batch_entry(received, stored)
        return SavedTradeRecords(stored, changes)

    @staticmethod
    def _batch_entry(marker: BatchMarker) -> dict | None:
        """What batch_seqs reads: an entry per received batch in its store-day's partition."""
        if marker.store_id is None or marker.business_date is None:
            return None
        return {"id": _key("batch", marker.batch_id),
                "pk": _day_key(marker.partner_id, marker.store_id, marker.business_date.isoformat()),
                "type": "batch", "batch_id": marker.batch_id, "batch_seq": marker.batch_seq}

    def _settle_batch_entry(self, ours: dict, stored: BatchMarker) -> None:
        """A twin with the same batch_id won: its entry is the one that counts."""
        theirs = self._batch_entry(stored) if stored.kind == "trade-records" else None
        if theirs is not None and theirs["pk"] == ours["pk"]:
            self._trades.upsert_item(theirs)
            return
        try:
            self._trades.delete_item(ours["id"], partition_key=ours["pk"])
        except CosmosResourceNotFoundError:
            pass

    def _save_trade_record(self, partner_id: str, batch_id: str, row: TradeRecordRow) -> tuple[int, RecordMove | None]:
        """Keep the latest version of a trade record for the whole partner.

        Its version entry (own logical partition, keyed by partner and trade_record_id) says which
        version is the latest and in which store-day it lives; it changes only by ETag-conditioned
        writes, so of concurrent writers exactly one moves it forward at a time. The record itself
        lives in its store-day's partition. A record that moves to another store or date leaves a
        tombstone where it was, so that a slower writer of an older version cannot bring it back; the
        store-days still to bury stay listed in the version entry ("dirty") until that is done, so
        a crash in between is completed by the retry or by the next version.

        Returns (1, the move or None) when this version is newer than the one stored, else (0, None). The
        entry names the batch that wrote it and the store-day of the version it replaced ("previous"), so a
        retry of the same batch (same version, found already written) reports what its first attempt did.
        """
        version_pk = _version_key(partner_id, row.trade_record_id)
        mine = (row.version, epoch_micros(row.last_modified_at))
        here = [row.store_id, row.business_date.isoformat()]
        entry = {"id": "version", "pk": version_pk, "type": "version", "partner_id": partner_id,
                 "trade_record_id": row.trade_record_id, "version": row.version,
                 "last_modified_us": _exact(mine[1]), "store_id": here[0], "business_date": here[1],
                 "batch_id": batch_id, "previous": None}
        for _ in range(MAX_ATTEMPTS):
            current = _read(self._trades, "version", version_pk)
            if current is None:
                try:
                    written = self._trades.create_item({**entry, "dirty": []})
                except CosmosResourceExistsError:
                    continue
                was_here = False
                faults.point("cosmos.version_entry")
                break
            stored = _version_of(current)
            there = [current["store_id"], current["business_date"]]
            if mine < stored or (mine == stored and here != there):
                return 0, None  # a later version (or the same version first received elsewhere) stays
            if mine == stored:  # a resend or a retry: complete what it may have left undone
                written, was_here = current, True
                break
            dirty = sorted({tuple(day) for day in current["dirty"] + [there] if day != here})
            try:
                written = self._trades.replace_item("version", {**entry, "previous": there,
                                                                "dirty": [list(day) for day in dirty]},
                                                    etag=current["_etag"], **_IF_UNCHANGED)
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError):
                continue
            was_here = there == here
            faults.point("cosmos.version_entry")
            break
        else:
            raise _Contention(f"too many concurrent versions of trade record {row.trade_record_id}")

        self._put_record(partner_id, row, mine, expected=was_here)
        faults.point("cosmos.record")
        dirty = written["dirty"]
        for store_id, business_date in dirty:
            self._bury(partner_id, row.trade_record_id, store_id, business_date, mine)
            faults.point("cosmos.tombstone")
        if dirty:
            try:
                self._trades.replace_item("version", {**_body(written), "dirty": []}, etag=written["_etag"],
                                          **_IF_UNCHANGED)
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError):
                pass  # a newer version took over, and with it the days still to bury
            faults.point("cosmos.cleanup")
        if written.get("batch_id") != batch_id:
            return 0, None  # the same version, written by another batch: a resend under a new batch_id
        previous = written.get("previous")
        if previous is None or previous == here:
            return 1, None
        return 1, RecordMove(row.trade_record_id, StoreDay(previous[0], dt.date.fromisoformat(previous[1])),
                             StoreDay(row.store_id, row.business_date))

    def _put_record(self, partner_id: str, row: TradeRecordRow, mine: tuple[int, int], expected: bool) -> None:
        # The narrow fields reconciliation reads are top-level properties (a projection reads them);
        # the record as received goes under "document", which no index covers.
        item = {"id": _record_id(row.trade_record_id),
                "pk": _day_key(partner_id, row.store_id, row.business_date.isoformat()),
                "type": "record", "trade_record_id": row.trade_record_id, "version": row.version,
                "last_modified_us": _exact(mine[1]), "source_type": row.source_transaction_type,
                "item_rows": row.item_rows, "payment_rows": row.payment_rows,
                "total_minor": _exact(row.total_minor), "tax_minor": _exact(row.tax_minor),
                "tip_minor": _exact(row.tip_minor),
                "payments": {kind: _exact(amount) for kind, amount in row.payments_minor.items()},
                "payment_keys": [_payment_key(partner_id, payment_id) for payment_id in row.payment_ids],
                "product_lines": row.product_lines,
                "document": orjson.loads(row.document_json) if row.document_json else None}
        _write_if(self._trades, item, lambda current: _version_of(current) < mine, create_first=not expected)

    def _bury(self, partner_id: str, trade_record_id: str, store_id: str, business_date: str,
              mine: tuple[int, int]) -> None:
        tombstone = {"id": _record_id(trade_record_id), "pk": _day_key(partner_id, store_id, business_date),
                     "type": "tombstone", "version": mine[0], "last_modified_us": _exact(mine[1]),
                     "ttl": TOMBSTONE_TTL_SECONDS}
        _write_if(self._trades, tombstone, lambda current: _version_of(current) < mine)

    @_outage_as_unavailable
    def save_daily_close(self, marker: BatchMarker, day: ClosedDay) -> BatchMarker | None:
        existing = self._find_batch(marker.partner_id, marker.batch_id)
        if existing is not None:
            return existing
        # The last close received wins: it replaces the previous one and its result. A close the day
        # received before (its marker gone) is a resend: the later close stays.
        earlier = _write_unless_received(self._closes, _close_id(day.store_id, day.business_date),
                                         _key(marker.partner_id), _receipt(marker),
                                         lambda current: self._close_item(marker.partner_id, day, current))
        if earlier is not None:
            return self._restore_marker(_received_marker(marker, earlier))
        return self._commit_marker(marker, receipt_written=True)

    def _restore_marker(self, received: BatchMarker) -> BatchMarker:
        """Put back the lost marker of a batch received before, so that its next resend is answered from it.
        A resend either way: its marker (or the twin's that is committing it right now) is the answer."""
        return self._commit_marker(received) or received

    @_outage_as_unavailable
    def close_received(self, partner_id: str, store_id: str, business_date: dt.date, batch_id: str) -> bool:
        item = _read(self._closes, _close_id(store_id, business_date), _key(partner_id))
        return item is not None and any(seen["batch_id"] == batch_id for seen in item.get("received", []))

    @staticmethod
    def _close_item(partner_id: str, day: ClosedDay, current: dict | None) -> dict:
        """A new close of the day; its revision and the records moved out of the day stay with the day."""
        kept = {"revision": current.get("revision", 0), "moved_out": current.get("moved_out", [])} if current else {}
        return {**kept,"id": _close_id(day.store_id, day.business_date), "pk": _key(partner_id), "type": "close",
                "partner_id": partner_id, "store_id": day.store_id, "business_date": day.business_date.isoformat(),
                "close_batch_id": day.close_batch_id, "currency": day.currency, "expected": day.expected,
                "received_at": to_utc_text(day.received_at), "due_at": to_utc_text(day.due_at),
                "status": day.status, "checked_at": None, "actual": None, "differences": [], "details": None}

    # -- reads ------------------------------------------------------------------------------------

    @_outage_as_unavailable
    def get_store(self, partner_id: str, store_id: str) -> StoreMaster | None:
        item = _read(self._partners, _key("store", store_id), _key(partner_id))
        if item is None:
            return None
        return StoreMaster(item["store_id"], item["currency"], item["country_code"], item["time_zone"],
                           item["workday_start"], bool(item["prices_include_tax"]),
                           from_epoch_micros(int(item["last_modified_us"])), item["document"])

    @_outage_as_unavailable
    def get_product(self, partner_id: str, product_id: str, store_id: str | None) -> ProductMaster | None:
        item = _read(self._partners, _key("product", product_id, store_id or ""), _key(partner_id))
        if item is None:
            return None
        return ProductMaster(item["product_id"], item["store_key"] or None, int(item["version"]),
                             from_epoch_micros(int(item["last_modified_us"])), item["document"])

    @_outage_as_unavailable
    def get_mapping(self, partner_id: str) -> Mapping:
        item = _read(self._partners, "mapping", _key(partner_id))
        if item is None:
            return Mapping(None, None, [])
        return Mapping(item["batch_id"], from_utc_text(item["updated_at"]), item["entries"])

    @_outage_as_unavailable
    def get_closed_day(self, partner_id: str, store_id: str, business_date: dt.date) -> ClosedDay | None:
        item = _read(self._closes, _close_id(store_id, business_date), _key(partner_id))
        return None if item is None else self._closed_day(item)

    @staticmethod
    def _closed_day(item: dict) -> ClosedDay:
        return ClosedDay(
            item["store_id"], dt.date.fromisoformat(item["business_date"]), item["close_batch_id"], item["currency"],
            item["expected"], from_utc_text(item["received_at"]), from_utc_text(item["due_at"]), item["status"],
            _opt_time(item["checked_at"]), item["actual"], list(item["differences"]), item["details"],
            item.get("revision", 0), item.get("moved_out", []))

    @_outage_as_unavailable
    def store_day_totals(self, partner_id: str, store_id: str, business_date: dt.date) -> StoreDayTotals:
        # Summed here, as the pages arrive (a big day is never held whole): the emulator has no GROUP BY.
        # The projection keeps the pages small; request units go by the records loaded (docs/decisions.md).
        pk = _day_key(partner_id, store_id, business_date.isoformat())
        items = _stream(self._trades,
                        "SELECT c.source_type, c.item_rows, c.payment_rows, c.total_minor, c.tax_minor, c.tip_minor, "
                        "c.payments FROM c WHERE c.pk = @pk AND c.type = 'record'", pk, pk=pk)
        return StoreDayTotals.of_records(
            (item["source_type"], item["item_rows"], item["payment_rows"], int(item["total_minor"]),
             int(item["tax_minor"]), int(item["tip_minor"]),
             {kind: int(amount) for kind, amount in item["payments"].items()})
            for item in items)

    @_outage_as_unavailable
    def store_day_rows(self, partner_id: str, store_id: str, business_date: dt.date) -> list[TradeRecordRow]:
        pk = _day_key(partner_id, store_id, business_date.isoformat())
        items = _query(self._trades,
                       "SELECT c.trade_record_id, c.version, c.last_modified_us, c.source_type, c.item_rows, "
                       "c.payment_rows, c.total_minor, c.tax_minor, c.tip_minor, c.payments FROM c "
                       "WHERE c.pk = @pk AND c.type = 'record'", pk, pk=pk)
        return [TradeRecordRow(item["trade_record_id"], int(item["version"]),
                               from_epoch_micros(int(item["last_modified_us"])), store_id, business_date,
                               item["source_type"], item["item_rows"], item["payment_rows"],
                               int(item["total_minor"]), int(item["tax_minor"]), int(item["tip_minor"]),
                               {kind: int(amount) for kind, amount in item["payments"].items()})
                for item in items]

    @_outage_as_unavailable
    def batch_seqs(self, partner_id: str, store_id: str, business_date: dt.date) -> list[int]:
        pk = _day_key(partner_id, store_id, business_date.isoformat())
        items = _query(self._trades, "SELECT c.batch_seq FROM c WHERE c.pk = @pk AND c.type = 'batch'", pk, pk=pk)
        return sorted((item["batch_seq"] for item in items), key=lambda seq: (seq is not None, seq or 0))

    @_outage_as_unavailable
    def batches_with_seq(self, partner_id: str, store_id: str, business_date: dt.date, batch_seq: int,
                         limit: int) -> list[str]:
        # Served by the index on /batch_seq within the store-day's partition: it loads the entries with
        # that batch_seq only (none, usually), not one per batch of the day (docs/decisions.md).
        pk = _day_key(partner_id, store_id, business_date.isoformat())
        items = _query(self._trades, f"SELECT TOP {int(limit)} c.batch_id FROM c "
                       "WHERE c.pk = @pk AND c.type = 'batch' AND c.batch_seq = @seq", pk, pk=pk, seq=batch_seq)
        return [item["batch_id"] for item in items]

    @_outage_as_unavailable
    def trade_records_by_payment_id(self, partner_id: str, payment_ids) -> dict[str, set[str]]:
        # One query per 500 ids across the store-day partitions, served by the index on /payment_keys/[]:
        # it loads only the records that use one of the ids (none, usually); docs/decisions.md counts the RU.
        payment_id_of = {_payment_key(partner_id, payment_id): payment_id for payment_id in set(payment_ids)}
        users: dict[str, set[str]] = {}
        for keys in _chunks(sorted(payment_id_of)):
            for item in _stream(self._trades, "SELECT c.trade_record_id, k AS payment_key FROM c "
                                "JOIN k IN c.payment_keys WHERE c.type = 'record' AND ARRAY_CONTAINS(@keys, k)",
                                keys=keys):
                users.setdefault(payment_id_of[item["payment_key"]], set()).add(item["trade_record_id"])
        return users

    @_outage_as_unavailable
    def unknown_products(self, partner_id: str, store_id: str, business_date: dt.date) -> list[UnknownProduct]:
        pk = _day_key(partner_id, store_id, business_date.isoformat())
        lines: dict[str, list[int]] = {}  # product_id -> [item lines, records]
        for item in _stream(self._trades, "SELECT (IS_DEFINED(c.product_lines) ? c.product_lines : c.document.items) "
                            "AS lines FROM c WHERE c.pk = @pk AND c.type = 'record'", pk, pk=pk):
            for product_id, count in _lines_of(item).items():
                seen = lines.setdefault(product_id, [0, 0])
                seen[0] += count
                seen[1] += 1
        known = self._products_in_master(partner_id, store_id, sorted(lines))
        return [UnknownProduct(product_id, *lines[product_id]) for product_id in sorted(lines)
                if product_id not in known]

    def _products_in_master(self, partner_id: str, store_id: str, product_ids: list[str]) -> set[str]:
        """Those of `product_ids` the product master holds for `store_id` or for all stores."""
        pk = _key(partner_id)
        known: set[str] = set()
        for ids in _chunks(product_ids):
            items = _stream(self._partners, "SELECT c.product_id, c.store_key FROM c WHERE c.pk = @pk "
                            "AND c.type = 'product' AND ARRAY_CONTAINS(@ids, c.product_id)", pk, pk=pk, ids=ids)
            known.update(item["product_id"] for item in items if item["store_key"] in ("", store_id))
        return known

    @_outage_as_unavailable
    def closed_days(self, partner_id: str, status: str | None = None) -> list[ClosedDay]:
        pk = _key(partner_id)
        if status:
            items = _query(self._closes, "SELECT * FROM c WHERE c.pk = @pk AND c.status = @status", pk,
                           pk=pk, status=status)
        else:
            items = _query(self._closes, "SELECT * FROM c WHERE c.pk = @pk", pk, pk=pk)
        # Sorted here rather than by ORDER BY, which on two properties would need another composite index.
        items.sort(key=lambda item: (item["business_date"], item["store_id"]))
        return [self._closed_day(item) for item in items]

    @_outage_as_unavailable
    def days_due(self, before: dt.datetime) -> list[tuple[str, ClosedDay]]:
        # Across partners (the periodic sweep): served by the composite index (status, due_at).
        items = _query(self._closes, "SELECT * FROM c WHERE c.status = 'RECEIVED' AND c.due_at < @before",
                       before=to_utc_text(before))
        return [(item["partner_id"], self._closed_day(item)) for item in items]

    # -- reconciliation results -------------------------------------------------------------------

    @_outage_as_unavailable
    def save_result(self, partner_id: str, day: ClosedDay) -> bool:
        item_id, pk = _close_id(day.store_id, day.business_date), _key(partner_id)
        for _ in range(MAX_ATTEMPTS):
            current = _read(self._closes, item_id, pk)
            if current is None or current["close_batch_id"] != day.close_batch_id:
                return False  # a newer close replaced the one reconciled
            if current.get("revision", 0) != day.revision:
                return False  # the day's records changed during the run
            result = {**_body(current), "status": day.status, "checked_at": _opt_text(day.checked_at),
                      "actual": day.actual, "differences": list(day.differences), "details": day.details}
            try:
                # Conditioned on the ETag read: a close saved in between makes us look again.
                self._closes.replace_item(item_id, result, etag=current["_etag"], **_IF_UNCHANGED)
                return True
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError):
                continue
        raise _Contention(f"too many concurrent changes to the close of {day.store_id} {day.business_date}")

    @_outage_as_unavailable
    def reopen_day(self, partner_id: str, day: StoreDay, due_at: dt.datetime, moved_out: list[RecordMove],
                   checked_before: dt.datetime | None = None) -> ClosedDay | None:
        item_id, pk = _close_id(day.store_id, day.business_date), _key(partner_id)
        for _ in range(MAX_ATTEMPTS):
            current = _read(self._closes, item_id, pk)
            if current is None:
                return None
            closed = self._closed_day(current)
            reopen = closed.status != "RECEIVED" and (checked_before is None or closed.checked_at < checked_before)
            changed = {**_body(current), "revision": closed.revision + 1,
                       "moved_out": merge_moved_out(closed.moved_out, day, moved_out)}
            if reopen:  # the result is gone, as when a new close arrives: the day is due again
                changed.update(status="RECEIVED", due_at=to_utc_text(due_at), checked_at=None, actual=None,
                               differences=[], details=None)
            try:
                # Conditioned on the ETag read: of concurrent reopens (or a result saved meanwhile) one wins,
                # and the others look again (and find the day RECEIVED).
                self._closes.replace_item(item_id, changed, etag=current["_etag"], **_IF_UNCHANGED)
            except (CosmosAccessConditionFailedError, CosmosResourceNotFoundError):
                continue
            return self._closed_day(changed) if reopen else None
        raise _Contention(f"too many concurrent changes to the close of {day.store_id} {day.business_date}")

    @_outage_as_unavailable
    def postpone(self, partner_id: str, store_id: str, business_date: dt.date, due_at: dt.datetime) -> None:
        try:
            self._closes.patch_item(_close_id(store_id, business_date), partition_key=_key(partner_id),
                                    patch_operations=[{"op": "set", "path": "/due_at", "value": to_utc_text(due_at)}])
        except CosmosResourceNotFoundError:
            pass
