"""What a resend is answered from: the batch_id and the store codes of a write body.

A known batch_id is answered from its marker before the body is validated (decision 0028). These
models read only the batch_id and the store codes, which a resend still has checked; everything else of
the body is skipped by the parser, so the look-up costs a fraction of a validation.
"""

from __future__ import annotations

from ingest.wire.requests import OptionalStoreId, WriteBatch
from ingest.wire.scalars import StoreId, WireModel


class ResendKey(WriteBatch):
    def store_ids(self) -> set[str]:
        return set()


class StoreDayKey(ResendKey):
    """POST /trade-records and POST /daily-close."""

    store_id: StoreId

    def store_ids(self) -> set[str]:
        return {self.store_id}


class _StoreCode(WireModel):
    store_id: OptionalStoreId = None


class StoresKey(ResendKey):
    stores: list[_StoreCode]

    def store_ids(self) -> set[str]:
        return {store.store_id for store in self.stores if store.store_id is not None}


class ProductsKey(ResendKey):
    products: list[_StoreCode]

    def store_ids(self) -> set[str]:
        return {product.store_id for product in self.products if product.store_id is not None}
