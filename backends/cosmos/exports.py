"""What the Parquet export reads on Cosmos DB (core.ports.ExportReads):

- the store-days checked in a span of time: container `daily-closes`, one query across partners served by
  the index on /checked_at (a close still RECEIVED has checked_at null, which no comparison with text
  matches), sorted here;
- a store-day's latest records with their documents: container `trade-records`, within the store-day's
  partition, read page by page as they are consumed (items.stream)."""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator

import orjson
from azure.cosmos import ContainerProxy

from backends.cosmos.items import stream
from backends.cosmos.keys import day_key
from core.clock import to_utc_text
from core.documents_page import DocumentsPage
from core.records import StoreDay

CHECKED_BETWEEN = (
    "SELECT c.partner_id, c.store_id, c.business_date FROM c WHERE c.checked_at > @after AND c.checked_at <= @through"
)
DAY_DOCUMENTS = (
    "SELECT c.trade_record_id, c.version, c.last_modified_us, c.source_type, c.item_rows, c.payment_rows, "
    "c.total_minor, c.tax_minor, c.tip_minor, c.document FROM c WHERE c.pk = @pk AND c.type = 'record'"
)
# Records gathered into one page of columns (the SDK reads its own pages from the emulator or Azure).
DOCUMENTS_PER_PAGE = 1000


class ExportReads:
    def __init__(self, trades: ContainerProxy, closes: ContainerProxy) -> None:
        self._trades = trades
        self._closes = closes

    def days_checked(
        self, after: dt.datetime | None, through: dt.datetime, limit: int | None = None
    ) -> list[tuple[str, StoreDay]]:
        # checked_at is fixed-width UTC text, so text order is time order; "" is before every time. A limit
        # stops reading pages once it is reached.
        found = stream(
            self._closes,
            CHECKED_BETWEEN,
            after="" if after is None else to_utc_text(after),
            through=to_utc_text(through),
        )
        items = list(itertools.islice(found, limit))
        items.sort(key=lambda item: (item["partner_id"], item["business_date"], item["store_id"]))
        return [
            (item["partner_id"], StoreDay(item["store_id"], dt.date.fromisoformat(item["business_date"])))
            for item in items
        ]

    def store_day_documents(self, partner_id: str, store_id: str, business_date: dt.date) -> Iterator[DocumentsPage]:
        pk = day_key(partner_id, store_id, business_date.isoformat())
        items = stream(self._trades, DAY_DOCUMENTS, pk, pk=pk)
        while page := list(itertools.islice(items, DOCUMENTS_PER_PAGE)):
            yield DocumentsPage(
                [item["trade_record_id"] for item in page],
                [int(item["version"]) for item in page],
                [int(item["last_modified_us"]) for item in page],
                [item["source_type"] for item in page],
                [item["item_rows"] for item in page],
                [item["payment_rows"] for item in page],
                [int(item["total_minor"]) for item in page],
                [int(item["tax_minor"]) for item in page],
                [int(item["tip_minor"]) for item in page],
                [orjson.dumps(item["document"]) for item in page],
            )
