"""PUT /stores: upsert the partner's store master data (spec 4.5). The shape of every write
(ingest/write_flow.py); its checks need nothing stored."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from core.errors import FieldProblem
from core.ports import Admission, BatchMarkers, BatchWrites
from core.records import Partner, StoreMaster
from ingest.batches import BatchOutcome, NewBatch, unknown_member_warnings
from ingest.body_digests import meaning_of_body
from ingest.parsing import Refused, duplicates, raise_if_any
from ingest.wire.requests import StoresBatch
from ingest.wire.resend_keys import StoresKey
from ingest.write_flow import Checked, Opened, Write, accept_opened, open_batch


class PutStoresStorage(Admission, BatchMarkers, BatchWrites, Protocol):
    """What PUT /stores uses of storage."""


def _duplicate_stores(store_ids: list[Any]) -> list[FieldProblem]:
    return duplicates(store_ids, "stores", "store_id")


def _readable_problems(refused: Refused) -> list[FieldProblem]:
    """The repeated store_ids of a refused batch, among those that can be read."""
    return _duplicate_stores(refused.readable_values("stores", "store_id"))


STORES = Write(
    "stores",
    StoresBatch,
    StoresKey,
    meaning_of_body(StoresBatch),
    _readable_problems,
    lambda batch: [store.store_id for store in batch.stores],
)


@dataclass(slots=True)
class CheckedStores(Checked):
    masters: list[StoreMaster] = field(default_factory=list)  # what is saved


def put_stores(
    storage: PutStoresStorage, partner: Partner, body: bytes, *, validate_only: bool = False
) -> BatchOutcome:
    opened = open_batch(storage, partner.partner_id, STORES, body)
    if isinstance(opened, BatchOutcome):  # a resend
        return opened
    checked = check(opened)  # nothing stored to read first
    raise_if_any(checked.problems)
    return save(storage, partner.partner_id, opened, checked, validate_only)


def check(opened: Opened[StoresBatch]) -> CheckedStores:
    """A store_id at most once; the master data of each store."""
    batch = opened.batch
    problems = _duplicate_stores([store.store_id for store in batch.stores])
    if problems:
        return CheckedStores(problems)
    masters = [
        StoreMaster(
            s.store_id,
            s.currency,
            s.country_code,
            s.time_zone,
            s.workday_start,
            s.prices_include_tax,
            s.last_modified_at,
            s.model_dump(mode="json"),
        )
        for s in batch.stores
    ]
    return CheckedStores(warnings=unknown_member_warnings(opened.unknown), masters=masters)


def save(
    storage: PutStoresStorage, partner_id: str, opened: Opened[StoresBatch], checked: CheckedStores, validate_only: bool
) -> BatchOutcome:
    accepted = accept_opened(
        storage,
        partner_id,
        STORES,
        opened,
        len(checked.masters),
        checked.warnings,
        validate_only,
    )
    if isinstance(accepted, NewBatch):
        return accepted.saved(storage.save_stores(accepted.marker, checked.masters))
    return accepted
