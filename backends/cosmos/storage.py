"""CosmosStorage: the Storage port on Cosmos DB, a thin facade over one repository per container and
concern. Every method turns an outage into BackendUnavailable (outages.py); every batch write opens
with its marker (markers.py) and ends by committing it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Iterator
from pathlib import Path

from azure.core.credentials import TokenCredential

from backends.cosmos.admission import Admission
from backends.cosmos.closes import Closes
from backends.cosmos.connection import CONTAINERS_FILE, WriterPool, connect, load_container_definitions
from backends.cosmos.day_records import DayRecords
from backends.cosmos.expiry import DayExpiry
from backends.cosmos.exports import ExportReads
from backends.cosmos.items import read_or_none
from backends.cosmos.markers import DEFAULT_MARKER_TTL_DAYS, Markers
from backends.cosmos.masters import Masters
from backends.cosmos.migrations import OneOffMigrations
from backends.cosmos.outages import outage_as_unavailable, outages_while_read
from backends.cosmos.overview import Overview
from backends.cosmos.partners import Partners
from backends.cosmos.store_days import StoreDays
from backends.cosmos.trade_inputs import TradeInputsRead
from backends.cosmos.trade_records import TradeRecords
from core.clients import ANY_ISSUER, ClientInfo, ClientOwner
from core.day_records import DayRecordsPage
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
from core.settings import DEFAULT_INDEX_PARTITION_MAX_ENTRIES, Settings
from core.stored_json import JsonObject


class CosmosStorage(TradeInputsRead, OneOffMigrations):
    """The Storage port on Cosmos DB. One instance per process; it is thread-safe."""

    def __init__(
        self,
        endpoint: str,
        database: str = "pos",
        *,
        key: str | None = None,
        credential: TokenCredential | None = None,
        create_containers: bool = False,
        marker_ttl_days: int = DEFAULT_MARKER_TTL_DAYS,
        retention_days: int = 0,
        index_partition_max_entries: int = DEFAULT_INDEX_PARTITION_MAX_ENTRIES,
        verify_tls: bool | None = None,
        containers_file: Path = CONTAINERS_FILE,
    ) -> None:
        if not endpoint:
            raise ValueError("COSMOS_ENDPOINT is not set")
        if marker_ttl_days < 0:
            raise ValueError("marker_ttl_days must be 0 (keep forever) or more")
        self.client, self._containers = connect(
            endpoint,
            database,
            key=key,
            credential=credential,
            verify_tls=verify_tls,
            definitions=load_container_definitions(containers_file),
            create_containers=create_containers,
        )
        containers = self._containers
        # Items of a store-day carry a ttl by it (core/retention.py; decision 0086).
        self.retention_days = retention_days
        self._writers = WriterPool()
        expiry = self._expiry = DayExpiry(retention_days)
        self._markers = Markers(containers.batches, marker_ttl_days, expiry)
        self._partners = Partners(containers.partners, self._writers)
        self._admission = Admission(containers.partners, self._partners)
        self._masters = Masters(containers.partners, self._writers, self._markers)
        self._trade_records = TradeRecords(
            containers.trade_records, self._writers, self._markers, expiry, index_partition_max_entries
        )
        self._store_days = StoreDays(containers.trade_records, self._masters.products_in_master)
        self._closes = Closes(containers.closes, self._markers)
        self._overview = Overview(containers.trade_records, containers.closes, containers.partners, self._markers)
        self._exports = ExportReads(containers.trade_records, containers.closes)
        self._day_records = DayRecords(containers.trade_records, self._trade_records.index)

    @classmethod
    def from_settings(cls, settings: Settings) -> CosmosStorage:
        return cls(
            settings.cosmos_endpoint,
            settings.cosmos_database,
            key=settings.cosmos_key or None,
            create_containers=settings.cosmos_create_containers,
            marker_ttl_days=settings.batch_marker_ttl_days,
            retention_days=settings.trade_record_retention_days,
            index_partition_max_entries=settings.cosmos_index_partition_max_entries,
        )

    def close(self) -> None:
        self._writers.shutdown()
        self.client.close()

    # -- HQ administration ------------------------------------------------------------------------

    @outage_as_unavailable
    def add_partner(self, partner_id: str, name: str, now: dt.datetime) -> Partner:
        return self._partners.add_partner(partner_id, name, now)

    @outage_as_unavailable
    def set_partner_active(self, partner_id: str, active: bool) -> Partner:
        return self._partners.set_partner_active(partner_id, active)

    @outage_as_unavailable
    def set_partner_rate_limit(self, partner_id: str, per_minute: int | None) -> Partner:
        return self._partners.set_partner_rate_limit(partner_id, per_minute)

    @outage_as_unavailable
    def get_partner(self, partner_id: str) -> Partner | None:
        return self._partners.get_partner(partner_id)

    @outage_as_unavailable
    def list_partners(self) -> list[Partner]:
        return self._partners.list_partners()

    @outage_as_unavailable
    def add_key(self, partner_id: str, key_id: str, key_hash: str, now: dt.datetime) -> ApiKeyInfo:
        return self._admission.add_key(partner_id, key_id, key_hash, now)

    @outage_as_unavailable
    def revoke_key(self, partner_id: str, key_id: str, now: dt.datetime) -> ApiKeyInfo:
        return self._admission.revoke_key(partner_id, key_id, now)

    @outage_as_unavailable
    def list_keys(self, partner_id: str) -> list[ApiKeyInfo]:
        return self._admission.list_keys(partner_id)

    @outage_as_unavailable
    def add_client(self, partner_id: str, client_id: str, now: dt.datetime, issuer: str = ANY_ISSUER) -> ClientInfo:
        return self._partners.add_client(partner_id, client_id, now, issuer)

    @outage_as_unavailable
    def remove_client(self, partner_id: str, client_id: str, issuer: str = ANY_ISSUER) -> None:
        self._partners.remove_client(partner_id, client_id, issuer)

    @outage_as_unavailable
    def list_clients(self, partner_id: str) -> list[ClientInfo]:
        return self._partners.list_clients(partner_id)

    @outage_as_unavailable
    def register_stores(self, partner_id: str, store_ids: list[str], now: dt.datetime) -> None:
        self._partners.register_stores(partner_id, store_ids, now)

    @outage_as_unavailable
    def unregister_stores(self, partner_id: str, store_ids: list[str]) -> None:
        self._partners.unregister_stores(partner_id, store_ids)

    @outage_as_unavailable
    def registered_stores(self, partner_id: str) -> list[str]:
        return self._partners.registered_stores(partner_id)

    @outage_as_unavailable
    def set_payment_direction(self, partner_id: str, payment_type: str, direction: int) -> None:
        self._partners.set_payment_direction(partner_id, payment_type, direction)

    @outage_as_unavailable
    def payment_directions(self, partner_id: str) -> dict[str, int]:
        return self._partners.payment_directions(partner_id)

    @outage_as_unavailable
    def delete_payment_direction(self, partner_id: str, payment_type: str) -> bool:
        return self._partners.delete_payment_direction(partner_id, payment_type)

    # -- request admission ------------------------------------------------------------------------

    @outage_as_unavailable
    def find_key(self, key_hash: str) -> KeyOwner | None:
        return self._admission.find_key(key_hash)

    @outage_as_unavailable
    def find_client(self, client_id: str, issuer: str = ANY_ISSUER) -> ClientOwner | None:
        return self._partners.find_client(client_id, issuer)

    @outage_as_unavailable
    def record_key_use(self, key_hash: str, hour: dt.datetime) -> None:
        self._admission.record_key_use(key_hash, hour)

    @outage_as_unavailable
    def unregistered(self, partner_id: str, store_ids: set[str]) -> set[str]:
        return set(store_ids) - self._partners.registered_among(partner_id, store_ids)

    @outage_as_unavailable
    def count_request(self, partner_id: str, window_start: int) -> int:
        return self._admission.count_request(partner_id, window_start)

    @outage_as_unavailable
    def ping(self) -> None:
        # A data-plane point read (~1 RU), not a metadata read, which a frequent health probe could exhaust.
        read_or_none(self._containers.partners, "ping", "ping")

    # -- batches: each opens with its marker (markers.Markers.unless_received) ---------------------

    @outage_as_unavailable
    def find_batch(self, partner_id: str, batch_id: str) -> BatchMarker | None:
        return self._markers.find(partner_id, batch_id)

    @outage_as_unavailable
    def save_stores(self, marker: BatchMarker, stores: list[StoreMaster]) -> BatchMarker | None:
        return self._markers.unless_received(marker, lambda: self._masters.save_stores(marker, stores))

    @outage_as_unavailable
    def save_products(
        self, marker: BatchMarker, products: list[ProductMaster], groups: list[ModifierGroupMaster]
    ) -> BatchMarker | None:
        return self._markers.unless_received(marker, lambda: self._masters.save_products(marker, products, groups))

    @outage_as_unavailable
    def replace_mapping(self, marker: BatchMarker, entries: list[JsonObject]) -> BatchMarker | None:
        return self._markers.unless_received(marker, lambda: self._masters.replace_mapping(marker, entries))

    @outage_as_unavailable
    def save_trade_records(
        self, marker: BatchMarker, rows: list[TradeRecordRow], *, looked_up: bool = False
    ) -> SavedTradeRecords:
        if looked_up:  # by the caller, in this request: the marker's create-if-absent settles a twin (0121)
            return self._trade_records.save(marker, rows)
        return self._markers.unless_received(marker, lambda: self._trade_records.save(marker, rows), SavedTradeRecords)

    @outage_as_unavailable
    def save_daily_close(self, marker: BatchMarker, day: ClosedDay) -> BatchMarker | None:
        return self._markers.unless_received(marker, lambda: self._closes.save(marker, day))

    @outage_as_unavailable
    def close_received(self, partner_id: str, store_id: str, business_date: dt.date, batch_id: str) -> bool:
        return self._closes.close_received(partner_id, store_id, business_date, batch_id)

    # -- reads ------------------------------------------------------------------------------------

    @outage_as_unavailable
    def get_store(self, partner_id: str, store_id: str) -> StoreMaster | None:
        return self._masters.get_store(partner_id, store_id)

    @outage_as_unavailable
    def get_product(self, partner_id: str, product_id: str, store_id: str | None) -> ProductMaster | None:
        return self._masters.get_product(partner_id, product_id, store_id)

    @outage_as_unavailable
    def get_mapping(self, partner_id: str) -> Mapping:
        return self._masters.get_mapping(partner_id)

    @outage_as_unavailable
    def get_closed_day(self, partner_id: str, store_id: str, business_date: dt.date) -> ClosedDay | None:
        return self._closes.get(partner_id, store_id, business_date)

    @outage_as_unavailable
    def store_day_totals(self, partner_id: str, store_id: str, business_date: dt.date) -> StoreDayTotals:
        return self._store_days.totals(partner_id, store_id, business_date)

    @outage_as_unavailable
    def store_day_rows(self, partner_id: str, store_id: str, business_date: dt.date) -> list[TradeRecordRow]:
        return self._store_days.rows(partner_id, store_id, business_date)

    @outage_as_unavailable
    def day_records(
        self,
        partner_id: str,
        store_id: str,
        business_date: dt.date,
        *,
        limit: int,
        cursor: str | None = None,
        source_type: str | None = None,
    ) -> DayRecordsPage:
        return self._day_records.day_records(
            partner_id, store_id, business_date, limit=limit, cursor=cursor, source_type=source_type
        )

    @outage_as_unavailable
    def batch_seqs(self, partner_id: str, store_id: str, business_date: dt.date) -> list[int]:
        return self._store_days.batch_seqs(partner_id, store_id, business_date)

    @outage_as_unavailable
    def batches_with_seq(
        self, partner_id: str, store_id: str, business_date: dt.date, batch_seq: int, limit: int
    ) -> list[str]:
        return self._store_days.batches_with_seq(partner_id, store_id, business_date, batch_seq, limit)

    @outage_as_unavailable
    def trade_records_by_payment_id(self, partner_id: str, payment_ids: Collection[str]) -> dict[str, set[str]]:
        return self._trade_records.index.payment_users(partner_id, payment_ids)

    @outage_as_unavailable
    def trade_record_versions(self, partner_id: str, trade_record_ids: Collection[str]) -> dict[str, StoredVersion]:
        return self._trade_records.versions(partner_id, trade_record_ids)

    @outage_as_unavailable
    def unknown_products(self, partner_id: str, store_id: str, business_date: dt.date) -> list[UnknownProduct]:
        return self._store_days.unknown_products(partner_id, store_id, business_date)

    @outage_as_unavailable
    def closed_days(self, partner_id: str, status: str | None = None) -> list[ClosedDay]:
        return self._closes.of_partner(partner_id, status)

    @outage_as_unavailable
    def days_due(self, before: dt.datetime) -> list[tuple[str, ClosedDay]]:
        return self._closes.due(before)

    # -- reconciliation results -------------------------------------------------------------------

    @outage_as_unavailable
    def save_result(self, partner_id: str, day: ClosedDay, replacing: ClosedDay | None = None) -> bool:
        return self._closes.save_result(partner_id, day, replacing)

    @outage_as_unavailable
    def reopen_day(
        self,
        partner_id: str,
        day: StoreDay,
        due_at: dt.datetime,
        moved_out: list[RecordMove],
        checked_before: dt.datetime | None = None,
    ) -> ClosedDay | None:
        return self._closes.reopen(partner_id, day, due_at, moved_out, checked_before)

    @outage_as_unavailable
    def reopen_days(
        self,
        partner_id: str,
        days: list[tuple[StoreDay, list[RecordMove]]],
        due_at: dt.datetime,
        checked_before: dt.datetime | None = None,
    ) -> list[ClosedDay | None]:
        return self._closes.reopen_all(partner_id, days, due_at, checked_before)

    @outage_as_unavailable
    def postpone(self, partner_id: str, store_id: str, business_date: dt.date, due_at: dt.datetime) -> None:
        self._closes.postpone(partner_id, store_id, business_date, due_at)

    # -- HQ's dashboard (read-only, but the sweep's time) ----------------------------------------------

    @outage_as_unavailable
    def received_days(self, partner_id: str, first: dt.date, last: dt.date) -> list[ReceivedDay]:
        return self._overview.received_days(partner_id, first, last)

    @outage_as_unavailable
    def day_statuses(self, partner_id: str, first: dt.date, last: dt.date) -> list[DayStatus]:
        return self._overview.day_statuses(partner_id, first, last)

    @outage_as_unavailable
    def store_day_batches(self, partner_id: str, store_id: str, business_date: dt.date) -> list[BatchMarker]:
        return self._overview.store_day_batches(partner_id, store_id, business_date)

    @outage_as_unavailable
    def stores(self, partner_id: str) -> list[StoreMaster]:
        return self._overview.stores(partner_id)

    @outage_as_unavailable
    def record_sweep(self, at: dt.datetime) -> None:
        self._overview.record_sweep(at)

    @outage_as_unavailable
    def last_sweep(self) -> dt.datetime | None:
        return self._overview.last_sweep()

    # -- the Parquet export's reads -----------------------------------------------------------------

    @outage_as_unavailable
    def days_checked(
        self, after: dt.datetime | None, through: dt.datetime, limit: int | None = None
    ) -> list[tuple[str, StoreDay]]:
        return self._exports.days_checked(after, through, limit)

    @outages_while_read
    def store_day_documents(self, partner_id: str, store_id: str, business_date: dt.date) -> Iterator[DocumentsPage]:
        return self._exports.store_day_documents(partner_id, store_id, business_date)
