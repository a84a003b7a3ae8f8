"""The ports: what the service needs from storage and from the delayed queue.

Shaped by the use cases (claim a batch, keep the latest version, read a store-day's totals, save a close
and its result), not a generic key-value API. Storage is split by role: each use case names the roles it
uses, and `Storage`, every role together, is what an adapter implements and the composition root holds.
The adapters are in backends/: SQLite (embedded), Cosmos DB, and an in-memory storage for fast tests.
The delayed queue's ports are in core/queue_ports.py. The data shapes the ports carry are in core/records.py.

Every write that carries a batch marker commits the marker last: it returns the marker already stored
when the batch_id was known (the caller answers ALREADY_RECEIVED), or None when this call accepted it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterator
from typing import Protocol

from core.clients import ANY_ISSUER, ClientInfo, ClientOwner, SigningKey
from core.day_records import DayRecordReads
from core.documents_page import DocumentsPage
from core.records import (
    ApiKeyInfo,
    BatchMarker,
    ClosedDay,
    DayStatus,
    KeyOwner,
    Mapping,
    ModifierGroupMaster,
    Partner,
    ProductMaster,
    ReceivedDay,
    RecordMove,
    SavedTradeRecords,
    StoreDay,
    StoreDayTotals,
    StoredVersion,
    StoreMaster,
    TradeRecordRow,
    UnknownProduct,
)
from core.retention import HeldDay, Retention
from core.stored_json import JsonObject
from core.trade_inputs import TradeInputReads


class BackendUnavailable(Exception):
    """Storage or queue cannot serve us now; the request may be retried (503). `retry_after_seconds`: when
    the backend said how long to wait (Cosmos DB throttling, 429), else None."""

    def __init__(self, message: str, *, retry_after_seconds: int | None = None) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds


class IdentityProviderUnavailable(BackendUnavailable):
    """An OAuth issuer's signing keys cannot be read (its provider is down or unreachable) and none are held:
    its tokens cannot be checked now. `retry_after_seconds`: when this instance will try the provider again."""


class AddressNotAllowed(BackendUnavailable):
    """The storage account's network rules (its firewall) refused the caller's address: a 403 that no
    retry cures until the address is allowed or the caller runs inside the virtual network. Still a
    BackendUnavailable, so the service answers 503 as for any deployment fault; `hq` names the cause.
    `service`: "Cosmos DB" or "Azure Storage"; `address`: the address the service saw, when it said."""

    def __init__(self, service: str, address: str | None = None) -> None:
        super().__init__(f"{service} refused the request: this address is not allowed by its network rules")
        self.service = service
        self.address = address


class AdminError(Exception):
    """An HQ operation that cannot be done as asked (unknown partner, duplicate, ...)."""


class PartnerAdmin(Protocol):
    """HQ's administration (the hq command line): partners, their keys, stores and payment directions."""

    def add_partner(self, partner_id: str, name: str, now: dt.datetime) -> Partner: ...
    def set_partner_active(self, partner_id: str, active: bool) -> Partner: ...
    def set_partner_rate_limit(self, partner_id: str, per_minute: int | None) -> Partner:
        """The partner's own requests per minute (a positive number), or None for the service's default."""
        ...

    def get_partner(self, partner_id: str) -> Partner | None: ...
    def list_partners(self) -> list[Partner]: ...
    def add_key(self, partner_id: str, key_id: str, key_hash: str, now: dt.datetime) -> ApiKeyInfo: ...
    def revoke_key(self, partner_id: str, key_id: str, now: dt.datetime) -> ApiKeyInfo: ...
    def list_keys(self, partner_id: str) -> list[ApiKeyInfo]: ...
    def add_client(self, partner_id: str, client_id: str, now: dt.datetime, issuer: str = ANY_ISSUER) -> ClientInfo:
        """Let the tokens of the issuer's OAuth client speak for the partner; AdminError when that client of that
        issuer already speaks for a partner (this one or another): a client is one partner's."""
        ...

    def remove_client(self, partner_id: str, client_id: str, issuer: str = ANY_ISSUER) -> None:
        """AdminError when the issuer's client does not speak for this partner."""
        ...

    def list_clients(self, partner_id: str) -> list[ClientInfo]: ...
    def register_stores(self, partner_id: str, store_ids: list[str], now: dt.datetime) -> None: ...
    def unregister_stores(self, partner_id: str, store_ids: list[str]) -> None: ...
    def registered_stores(self, partner_id: str) -> list[str]: ...
    def set_payment_direction(self, partner_id: str, payment_type: str, direction: int) -> None: ...
    def delete_payment_direction(self, partner_id: str, payment_type: str) -> bool:
        """Forget the partner's own direction of `payment_type`; False when it had none."""
        ...


class Admission(Protocol):
    """What every partner request is checked against before its use case runs: its key, its stores,
    the partner's rate limit."""

    def find_key(self, key_hash: str) -> KeyOwner | None: ...
    def find_client(self, client_id: str, issuer: str = ANY_ISSUER) -> ClientOwner | None:
        """The partner the issuer's OAuth client speaks for: its mapping for that issuer, else one made before
        mappings named an issuer (ANY_ISSUER). Read only for requests that carry a bearer token."""
        ...

    def record_key_use(self, key_hash: str, hour: dt.datetime) -> None:
        """Note that the key was used in the hour starting at `hour`; an earlier hour than the one stored
        changes nothing. Callers write only when find_key's last_used_at is older, so a key costs at most
        one write an hour, not one per request."""
        ...

    def unregistered(self, partner_id: str, store_ids: set[str]) -> set[str]: ...
    def count_request(self, partner_id: str, window_start: int) -> int: ...


class SigningKeys(Protocol):
    """The identity providers' public keys, from each issuer's OpenID configuration and JWKS."""

    def signing_key(self, issuer: str, key_id: str | None) -> SigningKey | None:
        """The issuer's key named `key_id` (None: the issuer's only key), fetching the issuer's keys again
        when it is unknown, at most as often as the adapter allows; None when there is no such key.
        BackendUnavailable when the issuer's keys could never be read."""
        ...


class Reachable(Protocol):
    """The health check: answers, or raises BackendUnavailable."""

    def ping(self) -> None: ...


class BatchMarkers(Protocol):
    """The markers of accepted batches: a resend is found by its batch_id, a store-day's trade record
    batches by their batch_seq."""

    def find_batch(self, partner_id: str, batch_id: str) -> BatchMarker | None: ...
    def batch_seqs(self, partner_id: str, store_id: str, business_date: dt.date) -> list[int]: ...

    def batches_with_seq(
        self, partner_id: str, store_id: str, business_date: dt.date, batch_seq: int, limit: int
    ) -> list[str]:
        """The batch_ids (canonical) of at most `limit` trade record batches of the store-day that have
        batch_seq: read before each such batch is accepted, so it reads those entries only, however
        many batches the day has."""
        ...


class BatchWrites(Protocol):
    """A partner's write batches, each saved with its marker (the marker last, create-if-absent)."""

    def save_stores(self, marker: BatchMarker, stores: list[StoreMaster]) -> BatchMarker | None: ...
    def save_products(
        self, marker: BatchMarker, products: list[ProductMaster], groups: list[ModifierGroupMaster]
    ) -> BatchMarker | None: ...
    def replace_mapping(self, marker: BatchMarker, entries: list[JsonObject]) -> BatchMarker | None:
        """Replace the partner's mapping, unless the partner already uploaded a mapping with this batch_id:
        then nothing changes and its marker is returned (re-created when it is gone), as for a close."""
        ...

    def save_trade_records(
        self, marker: BatchMarker, rows: list[TradeRecordRow], *, looked_up: bool = False
    ) -> SavedTradeRecords:
        """Keep the latest version of each record (higher version; equal versions: later last_modified_at)
        and the marker, which carries what changed. A record counts as newer when it replaced what was
        stored or was not stored; on Cosmos DB also when this same batch_id wrote it in an attempt that
        failed before its marker (a retry), so that the retry reports what the first attempt changed.
        `looked_up`: the caller found no marker of this batch_id in this request, so an adapter that writes
        the marker last need not look again: its create-if-absent answers a twin stored meanwhile
        (decision 0121)."""
        ...

    def save_daily_close(self, marker: BatchMarker, day: ClosedDay) -> BatchMarker | None:
        """Store `day` as the store-day's latest close, unless the store-day already received a close with
        this batch_id: then nothing changes and its marker is returned (re-created from the store-day's own
        record of it when the batch marker itself is gone), so an earlier close never replaces a later one."""
        ...


class MasterReads(Protocol):
    """The partner's reference data as stored: stores, products, the mapping in effect, and the payment
    directions HQ recorded for the partner's own payment types."""

    def get_store(self, partner_id: str, store_id: str) -> StoreMaster | None: ...
    def get_product(self, partner_id: str, product_id: str, store_id: str | None) -> ProductMaster | None: ...
    def get_mapping(self, partner_id: str) -> Mapping: ...
    def payment_directions(self, partner_id: str) -> dict[str, int]: ...


class TradeRecordReads(Protocol):
    """The latest version of each stored trade record: a store-day's sums and rows, and partner-wide
    look-ups of the codes records use."""

    def store_day_totals(self, partner_id: str, store_id: str, business_date: dt.date) -> StoreDayTotals:
        """The sums reconciliation compares, over the latest version of each record of the store-day."""
        ...

    def store_day_rows(self, partner_id: str, store_id: str, business_date: dt.date) -> list[TradeRecordRow]:
        """Each latest record of the store-day, one by one: to inspect what is stored (tests); reconciliation
        reads store_day_totals. `document_json` is not read."""
        ...

    def trade_records_by_payment_id(self, partner_id: str, payment_ids: Collection[str]) -> dict[str, set[str]]:
        """For each of `payment_ids` that the latest version of a stored trade record of the partner uses
        (any store, any date): the trade_record_ids using it. Ids nobody uses are left out. One look-up
        for a whole batch."""
        ...

    def trade_record_versions(self, partner_id: str, trade_record_ids: Collection[str]) -> dict[str, StoredVersion]:
        """For each of `trade_record_ids` the partner has stored: its latest version and store-day. Ids never
        stored are left out. What a validate-only batch reads to tell which records it would move."""
        ...

    def unknown_products(self, partner_id: str, store_id: str, business_date: dt.date) -> list[UnknownProduct]:
        """The product_ids of the store-day's latest records that the product master does not hold for
        that store or for all stores, by product_id. Reads the day's records one by one (never the
        partner's), and the master entries of the day's product_ids only."""
        ...


class Reconciliations(Retention, Protocol):
    """Closed store-days and their reconciliation results: what is due, what a run may save, what puts
    a checked day back to RECEIVED; and how long the store keeps a day's records (Retention): a day past
    it keeps its result, never computed again from records that are gone."""

    def get_closed_day(self, partner_id: str, store_id: str, business_date: dt.date) -> ClosedDay | None: ...

    def close_received(self, partner_id: str, store_id: str, business_date: dt.date, batch_id: str) -> bool:
        """Whether the store-day has received a close with this batch_id, whatever became of its batch
        marker. The store-day keeps this for good (closes stored before it was kept: only their markers)."""
        ...

    def closed_days(self, partner_id: str, status: str | None = None) -> list[ClosedDay]: ...
    def days_due(self, before: dt.datetime) -> list[tuple[str, ClosedDay]]: ...

    def save_result(self, partner_id: str, day: ClosedDay, replacing: ClosedDay | None = None) -> bool:
        """Store status/checked_at/actual/differences/details of `day` only if its close_batch_id is
        still the latest close of that store-day and its revision unchanged, and, given `replacing` (the
        close as the run read it), only if the stored result is still that one's (same checked_at: of
        concurrent runs of one close, one saves); False when a newer close replaced it, its records
        changed or another run saved its result meanwhile."""
        ...

    def reopen_day(
        self,
        partner_id: str,
        day: StoreDay,
        due_at: dt.datetime,
        moved_out: list[RecordMove],
        checked_before: dt.datetime | None = None,
    ) -> ClosedDay | None:
        """Accepted records changed the store-day: count the change (revision + 1), keep the records that
        moved out of it (`moved_out`; a record moving back in, i.e. a move to this day, leaves the list),
        and put a day that has a result (MATCHED or MISMATCHED) back to RECEIVED, due at `due_at`; with
        `checked_before`, only a result checked before that time. Returns the day when this call put it
        back to RECEIVED (the caller then sends its message), else None: no close, or already RECEIVED
        (already due), or checked later. One conditional write: of concurrent calls one reopens."""
        ...

    def reopen_days(
        self,
        partner_id: str,
        days: list[tuple[StoreDay, list[RecordMove]]],
        due_at: dt.datetime,
        checked_before: dt.datetime | None = None,
    ) -> list[ClosedDay | None]:
        """`reopen_day` for each day and the records that moved out of it, in order; an adapter may read the
        closes of one store's days together (Cosmos DB: a move's two days in one request, decision 0121)."""
        ...

    def postpone(self, partner_id: str, store_id: str, business_date: dt.date, due_at: dt.datetime) -> None: ...


class Overview(Protocol):
    """HQ's dashboard (read-only): a partner's store-days over a range of business dates, read narrow and
    bounded by the range (never a partner's records), and when the overdue sweep last ran."""

    def received_days(self, partner_id: str, first: dt.date, last: dt.date) -> list[ReceivedDay]:
        """Each store-day from `first` to `last` (inclusive) that received trade record batches, summed
        from the batches' markers, ordered by business_date then store_id."""
        ...

    def day_statuses(self, partner_id: str, first: dt.date, last: dt.date) -> list[DayStatus]:
        """Each store-day from `first` to `last` (inclusive) with a close, ordered by business_date then
        store_id."""
        ...

    def store_day_batches(self, partner_id: str, store_id: str, business_date: dt.date) -> list[BatchMarker]:
        """The markers of the store-day's trade record batches, with their warnings, by batch_seq then
        received_at."""
        ...

    def stores(self, partner_id: str) -> list[StoreMaster]:
        """The master data of every store of the partner (PUT /stores), by store_id."""
        ...

    def record_sweep(self, at: dt.datetime) -> None:
        """Note that the overdue sweep ran at `at` (an earlier time than the one stored changes nothing)."""
        ...

    def last_sweep(self) -> dt.datetime | None: ...


class ExportReads(Protocol):
    """What the Parquet export reads beyond the closes (Overview.day_statuses, get_closed_day): the store-days
    checked in a span of time, across partners, and a store-day's latest records with their documents."""

    def days_checked(
        self, after: dt.datetime | None, through: dt.datetime, limit: int | None = None
    ) -> list[tuple[str, StoreDay]]:
        """Each store-day, of any partner, whose result was checked after `after` (None: whenever) and not
        after `through`, with its partner_id; ordered by partner_id, business_date, store_id. With a `limit`,
        at most that many, which ones unspecified: a caller given `limit` days asks for a narrower span."""
        ...

    def store_day_documents(self, partner_id: str, store_id: str, business_date: dt.date) -> Iterator[DocumentsPage]:
        """The store-day's latest records with their documents, page by page as consumed, in no order."""
        ...


class Retirement(Retention, Protocol):
    """Store-days leaving the hot store in bounded steps (SQLite and memory; Cosmos DB lets them expire by
    their items' ttl): decision 0086."""

    def held_days_before(self, before: dt.date) -> list[HeldDay]:
        """Every store-day with a business_date before `before` that still holds trade records or trade
        record batches, oldest first, with its close's status and checked_at."""
        ...

    def retire_rows(self, partner_id: str, store_id: str, business_date: dt.date, max_rows: int) -> int:
        """Delete, in one transaction, at most `max_rows` of the store-day's trade records (with their
        payment-id entries), or once none is left its trade record batches (markers); the number
        deleted, 0 when nothing is left. Its close, the close's receipts and result stay."""
        ...


class Storage(
    PartnerAdmin,
    Admission,
    Reachable,
    BatchMarkers,
    BatchWrites,
    MasterReads,
    TradeInputReads,
    TradeRecordReads,
    DayRecordReads,
    Reconciliations,
    Overview,
    ExportReads,
    Protocol,
):
    """Every role: what a storage adapter implements and the composition root opens."""


class ExportDestination(Protocol):
    """Where the Parquet export writes its files: a local folder, or a Blob Storage container (ADLS Gen2
    too), in backends/export_destinations.py. Paths are relative and "/"-separated."""

    @property
    def location(self) -> str:
        """The destination as an operator names it (a folder, a URL), for messages."""
        ...

    def write(self, path: str, data: bytes) -> None:
        """Store `data` at `path`, replacing what is there: readers see the old file or the new one whole."""
        ...

    def read(self, path: str) -> bytes | None:
        """The file at `path`, or None when there is none."""
        ...
