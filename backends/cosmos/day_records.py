"""A store-day's latest records a page at a time on Cosmos DB (core.day_records.DayRecordReads): one
single-partition query of the store-day's narrow fields and status, paged by the SDK's own continuation
token (no ORDER BY, which would need an index on the sort paths), and the batch_id of each version from
its entry in the record index: one query for the page (decision 0096)."""

from __future__ import annotations

import datetime as dt
import json

from azure.cosmos import ContainerProxy
from azure.cosmos.exceptions import CosmosHttpResponseError

from backends.cosmos.day_sums import record_sums
from backends.cosmos.items import QUERY_ATTEMPTS, SHARED_HEADERS_RACE, let_go
from backends.cosmos.keys import day_key
from backends.cosmos.record_index import RecordIndex
from core.day_records import DayRecord, DayRecordsPage
from core.stored_json import JsonObject

DAY_RECORDS = (
    "SELECT c.trade_record_id, c.version, c.source_type, c.document.status, c.item_rows, c.payment_rows, "
    "c.total_minor, c.tax_minor, c.tip_minor, c.payments FROM c WHERE c.pk = @pk AND c.type = 'record'"
)


class DayRecords:
    def __init__(self, container: ContainerProxy, index: RecordIndex) -> None:
        self._trades = container
        self._index = index

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
        pk = day_key(partner_id, store_id, business_date.isoformat())
        sql, params = DAY_RECORDS, [{"name": "@pk", "value": pk}]
        if source_type is not None:
            sql += " AND c.source_type = @type"
            params.append({"name": "@type", "value": source_type})
        items, next_token = self._page(sql, params, pk, limit, None if cursor is None else _token_of(cursor))
        entries = self._index.entries(partner_id, [item["trade_record_id"] for item in items])
        records = []
        for item in items:
            sums = record_sums(item)
            entry = entries.get(item["trade_record_id"], {})
            status = item.get("status")
            records.append(
                DayRecord(
                    item["trade_record_id"],
                    int(item["version"]),
                    sums[0],
                    status if isinstance(status, str) else None,
                    *sums[1:],
                    entry.get("batch_id") if int(entry.get("version", -1)) == int(item["version"]) else None,
                )
            )
        return DayRecordsPage(records, json.dumps({"cosmos": next_token}) if next_token else None)

    def _page(
        self, sql: str, params: list[JsonObject], pk: str, limit: int, token: str | None
    ) -> tuple[list[JsonObject], str | None]:
        """One page of the query and the token of the next (None: none). Read again when the SDK's shared
        headers race (items.SHARED_HEADERS_RACE): a page is read whole, so nothing was used yet."""
        for attempt in range(1, QUERY_ATTEMPTS + 1):
            pages = self._trades.query_items(sql, parameters=params, partition_key=pk, max_item_count=limit)
            paged = pages.by_page(token)
            try:
                items = list(next(paged, []))
                return items, (getattr(paged, "continuation_token", None) if items else None)
            except RuntimeError as error:
                if attempt < QUERY_ATTEMPTS and SHARED_HEADERS_RACE in str(error):
                    continue
                raise
            except CosmosHttpResponseError as error:
                if error.status_code == 400 and token is not None:
                    raise ValueError("not a cursor of this read") from None
                raise
            finally:
                let_go(paged)  # its page, which it would keep until a collection (decision 0126)
        raise AssertionError("unreachable")  # the last attempt returns or raises


def _token_of(cursor: str) -> str:
    """The SDK's continuation token inside a cursor this adapter gave; ValueError for any other text."""
    try:
        token = json.loads(cursor)["cosmos"]
    except (ValueError, TypeError, KeyError):
        raise ValueError("not a cursor of this read") from None
    if not isinstance(token, str):
        raise ValueError("not a cursor of this read")
    return token
