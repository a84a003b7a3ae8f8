"""Reading a store-day (container `trade-records`, one logical partition per store-day): its sums and
batch_seqs from its sums item (day_sums.py: one point read, whatever the day holds; decision 0108), its records
by narrow projections of the top-level fields. Request units: decisions 0044 and 0059."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from azure.cosmos import ContainerProxy

from backends.cosmos.day_sums import batches_with, day_batch_seqs, day_totals, read_day, record_sums
from backends.cosmos.items import query, stream
from backends.cosmos.keys import day_key
from core.clock import from_epoch_micros
from core.records import StoreDayTotals, TradeRecordRow, UnknownProduct
from core.stored_json import JsonObject

# Those of some product ids the product master holds for a store or for all stores (masters.py).
ProductsInMaster = Callable[[str, str, list[str]], set[str]]


def _lines_of(item: JsonObject) -> dict[str, int]:
    """A record item's lines per product_id: stored with it, or, for a record written before they were,
    counted from its document's items."""
    lines = item.get("lines")
    if isinstance(lines, dict):
        return lines
    counted: dict[str, int] = {}
    for line in lines or []:
        counted[line["product_id"]] = counted.get(line["product_id"], 0) + 1
    return counted


class StoreDays:
    def __init__(self, container: ContainerProxy, products_in_master: ProductsInMaster) -> None:
        self._trades = container
        self._products_in_master = products_in_master

    def totals(self, partner_id: str, store_id: str, business_date: dt.date) -> StoreDayTotals:
        return day_totals(read_day(self._trades, day_key(partner_id, store_id, business_date.isoformat())))

    def rows(self, partner_id: str, store_id: str, business_date: dt.date) -> list[TradeRecordRow]:
        pk = day_key(partner_id, store_id, business_date.isoformat())
        items = query(
            self._trades,
            "SELECT c.trade_record_id, c.version, c.last_modified_us, c.source_type, c.item_rows, "
            "c.payment_rows, c.total_minor, c.tax_minor, c.tip_minor, c.payments FROM c "
            "WHERE c.pk = @pk AND c.type = 'record'",
            pk,
            pk=pk,
        )
        return [
            TradeRecordRow(
                item["trade_record_id"],
                int(item["version"]),
                from_epoch_micros(int(item["last_modified_us"])),
                store_id,
                business_date,
                *record_sums(item),
            )
            for item in items
        ]

    def batch_seqs(self, partner_id: str, store_id: str, business_date: dt.date) -> list[int]:
        return day_batch_seqs(read_day(self._trades, day_key(partner_id, store_id, business_date.isoformat())))

    def batches_with_seq(
        self, partner_id: str, store_id: str, business_date: dt.date, batch_seq: int, limit: int
    ) -> list[str]:
        # From the sums item's batch_seqs by batch_id (decision 0108): one point read, which this batch's writes
        # into the day then start from (day_sums.py keeps it a few seconds), where a query on /batch_seq was a
        # request more for a new day or one not written lately (decision 0116).
        day = read_day(self._trades, day_key(partner_id, store_id, business_date.isoformat()))
        return batches_with(day, batch_seq, limit)

    def unknown_products(self, partner_id: str, store_id: str, business_date: dt.date) -> list[UnknownProduct]:
        pk = day_key(partner_id, store_id, business_date.isoformat())
        lines: dict[str, list[int]] = {}  # product_id -> [item lines, records]
        for item in stream(
            self._trades,
            "SELECT (IS_DEFINED(c.product_lines) ? c.product_lines : c.document.items) "
            "AS lines FROM c WHERE c.pk = @pk AND c.type = 'record'",
            pk,
            pk=pk,
        ):
            for product_id, count in _lines_of(item).items():
                seen = lines.setdefault(product_id, [0, 0])
                seen[0] += count
                seen[1] += 1
        known = self._products_in_master(partner_id, store_id, sorted(lines))
        return [
            UnknownProduct(product_id, *lines[product_id]) for product_id in sorted(lines) if product_id not in known
        ]
