"""A partner's master data in container `partners` (its logical partition): store masters, products,
modifier groups and the transaction type mapping. A store or product is replaced only by an equal or
newer version (core/versions.master_replaces); the mapping keeps the receipts of the batches that wrote it."""

from __future__ import annotations

from azure.cosmos import ContainerProxy

from backends.cosmos.conditional import write_if_replaces
from backends.cosmos.connection import WriterPool
from backends.cosmos.items import chunks, json_safe_int, query, read_or_none, stream
from backends.cosmos.keys import compound_key, partner_key
from backends.cosmos.markers import Markers
from backends.cosmos.partners import DIRECTIONS_ID, registration_id
from core import faults
from core.clock import from_epoch_micros, from_utc_text, to_utc_text
from core.records import BatchMarker, Mapping, ModifierGroupMaster, ProductMaster, StoreMaster
from core.stored_json import JsonObject
from core.trade_inputs import TradeInputs
from core.versions import Version, master_replaces


def store_of(item: JsonObject) -> StoreMaster:
    return StoreMaster(
        item["store_id"],
        item["currency"],
        item["country_code"],
        item["time_zone"],
        item["workday_start"],
        bool(item["prices_include_tax"]),
        from_epoch_micros(int(item["last_modified_us"])),
        item["document"],
    )


def _store_id(store_id: str) -> str:
    return compound_key("store", store_id)


def _product_id(product_id: str, store_id: str | None) -> str:
    return compound_key("product", product_id, store_id or "")


class Masters:
    def __init__(self, container: ContainerProxy, writers: WriterPool, markers: Markers) -> None:
        self._partners = container
        self._writers = writers
        self._markers = markers

    def save_stores(self, marker: BatchMarker, stores: list[StoreMaster]) -> BatchMarker | None:
        pk = partner_key(marker.partner_id)

        def save(store: StoreMaster) -> None:
            version = Version.of(0, store.last_modified_at)  # a store has no version of its own
            item = {
                "id": _store_id(store.store_id),
                "pk": pk,
                "type": "store",
                "store_id": store.store_id,
                "currency": store.currency,
                "country_code": store.country_code,
                "time_zone": store.time_zone,
                "workday_start": store.workday_start,
                "prices_include_tax": store.prices_include_tax,
                "last_modified_us": json_safe_int(version.modified_us),
                "document": store.document,
            }
            write_if_replaces(self._partners, item, version, master_replaces)
            faults.point("cosmos.master_written")

        self._writers.each(save, stores)
        return self._markers.commit(marker)

    def save_products(
        self, marker: BatchMarker, products: list[ProductMaster], groups: list[ModifierGroupMaster]
    ) -> BatchMarker | None:
        pk = partner_key(marker.partner_id)

        def save_product(product: ProductMaster) -> None:
            version = Version.of(product.version, product.last_modified_at)
            item = {
                "id": _product_id(product.product_id, product.store_id),
                "pk": pk,
                "type": "product",
                "product_id": product.product_id,
                "store_key": product.store_id or "",
                "version": product.version,
                "last_modified_us": json_safe_int(version.modified_us),
                "document": product.document,
            }
            write_if_replaces(self._partners, item, version, master_replaces)
            faults.point("cosmos.master_written")

        def save_group(group: ModifierGroupMaster) -> None:
            self._partners.upsert_item(
                {
                    "id": compound_key("group", group.group_id),
                    "pk": pk,
                    "type": "modifier-group",
                    "group_id": group.group_id,
                    "document": group.document,
                }
            )
            faults.point("cosmos.master_written")

        self._writers.each(save_product, products)
        self._writers.each(save_group, groups)
        return self._markers.commit(marker)

    def replace_mapping(self, marker: BatchMarker, entries: list[JsonObject]) -> BatchMarker | None:
        # Uploaded before (its receipt is there, its marker gone): the mapping stays as it is.
        pk = partner_key(marker.partner_id)
        return self._markers.write_with_receipt(
            self._partners,
            "mapping",
            pk,
            marker,
            lambda current: {
                "id": "mapping",
                "pk": pk,
                "type": "mapping",
                "batch_id": marker.batch_id,
                "updated_at": to_utc_text(marker.received_at),
                "entries": entries,
            },
        )

    def get_store(self, partner_id: str, store_id: str) -> StoreMaster | None:
        item = read_or_none(self._partners, _store_id(store_id), partner_key(partner_id))
        return None if item is None else store_of(item)

    def get_product(self, partner_id: str, product_id: str, store_id: str | None) -> ProductMaster | None:
        item = read_or_none(self._partners, _product_id(product_id, store_id), partner_key(partner_id))
        if item is None:
            return None
        return ProductMaster(
            item["product_id"],
            item["store_key"] or None,
            int(item["version"]),
            from_epoch_micros(int(item["last_modified_us"])),
            item["document"],
        )

    def get_mapping(self, partner_id: str) -> Mapping:
        return _mapping_of(read_or_none(self._partners, "mapping", partner_key(partner_id)))

    def trade_inputs(self, partner_id: str, store_id: str) -> TradeInputs:
        """The store's registration and master data, the mapping and the payment directions: one query by id in
        the partner's partition, where they all live, for four point reads (decision 0121)."""
        pk = partner_key(partner_id)
        wanted = {"registration": registration_id(store_id), "store": _store_id(store_id), "mapping": "mapping"}
        found = {
            item["id"]: item
            for item in query(
                self._partners,
                "SELECT * FROM c WHERE c.pk = @pk AND ARRAY_CONTAINS(@ids, c.id)",
                pk,
                pk=pk,
                ids=[*wanted.values(), DIRECTIONS_ID],
            )
        }
        store = found.get(wanted["store"])
        directions = found.get(DIRECTIONS_ID)
        return TradeInputs(
            store_id,
            wanted["registration"] in found,
            None if store is None else store_of(store),
            _mapping_of(found.get("mapping")),
            {} if directions is None else dict(directions["directions"]),
        )

    def products_in_master(self, partner_id: str, store_id: str, product_ids: list[str]) -> set[str]:
        """Those of `product_ids` the product master holds for `store_id` or for all stores."""
        pk = partner_key(partner_id)
        known: set[str] = set()
        for ids in chunks(product_ids):
            items = stream(
                self._partners,
                "SELECT c.product_id, c.store_key FROM c WHERE c.pk = @pk "
                "AND c.type = 'product' AND ARRAY_CONTAINS(@ids, c.product_id)",
                pk,
                pk=pk,
                ids=ids,
            )
            known.update(item["product_id"] for item in items if item["store_key"] in ("", store_id))
        return known


def _mapping_of(item: JsonObject | None) -> Mapping:
    if item is None:
        return Mapping(None, None, [])
    return Mapping(item["batch_id"], from_utc_text(item["updated_at"]), item["entries"])
