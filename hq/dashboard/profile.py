"""The partner page's read model: keys (ids and dates, never a key or its hash) and the OAuth clients whose
bearer tokens speak for the partner, registered stores with
their master data, the transaction type mapping, the payment-type directions, and the warnings the
partner's trade record batches carried, by code per business date (from batch markers)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from core.clients import ClientInfo
from core.ports import MasterReads, Overview, PartnerAdmin
from core.records import ApiKeyInfo, Mapping, Partner, StoreMaster
from hq.dashboard.overview import DateRange, NotFound, default_range
from reconcile import operations


class ProfileStorage(PartnerAdmin, MasterReads, Overview, Protocol):
    """What the partner page reads."""


@dataclass(frozen=True)
class StoreRow:
    store_id: str
    registered: bool
    master: StoreMaster | None  # None: registered, but PUT /stores has not sent its master data yet


@dataclass(frozen=True)
class MappingRow:
    """An entry of the transaction type mapping, as the page shows it ("" for a source_name not sent)."""

    source_code: str
    source_name: str
    standard_code: str


@dataclass(frozen=True)
class Profile:
    partner: Partner
    keys: list[ApiKeyInfo]
    clients: list[ClientInfo]
    stores: list[StoreRow]
    mapping: Mapping
    directions: list[operations.Direction]
    dates: DateRange
    warnings_per_date: list[tuple[dt.date, dict[str, int]]]  # every date of the range, codes sorted

    @property
    def mapping_rows(self) -> list[MappingRow]:
        return [
            MappingRow(entry.get("source_code", ""), entry.get("source_name") or "", entry.get("standard_code", ""))
            for entry in self.mapping.entries
        ]

    @property
    def warning_codes(self) -> list[str]:
        return sorted({code for _, counts in self.warnings_per_date for code in counts})


def profile(storage: ProfileStorage, partner_id: str, today: dt.date) -> Profile:
    partner = storage.get_partner(partner_id)
    if partner is None:
        raise NotFound(f"unknown partner {partner_id}")
    registered = set(storage.registered_stores(partner_id))
    masters = {store.store_id: store for store in storage.stores(partner_id)}
    stores = [
        StoreRow(store_id, store_id in registered, masters.get(store_id))
        for store_id in sorted(registered | set(masters))
    ]
    dates = default_range(today)
    warnings: dict[dt.date, Counter[str]] = {date: Counter() for date in dates.dates()}
    for day in storage.received_days(partner_id, dates.first, dates.last):
        warnings[day.business_date].update(day.warnings)
    return Profile(
        partner,
        storage.list_keys(partner_id),
        storage.list_clients(partner_id),
        stores,
        storage.get_mapping(partner_id),
        operations.directions(storage, partner),
        dates,
        [(date, dict(sorted(counts.items()))) for date, counts in warnings.items()],
    )
