"""The items a trade record leaves in its store-day's partition of `trade-records`: the record (its narrow
fields for reconciliation, the document as received) and, where a version moved it from, a tombstone."""

from __future__ import annotations

import orjson

from backends.cosmos.expiry import with_ttl
from backends.cosmos.items import json_safe_int
from backends.cosmos.keys import day_key, record_id
from core.records import TradeRecordRow
from core.stored_json import JsonObject
from core.versions import Version

# A tombstone only has to outlive a write already in flight when its record moved (seconds to
# minutes); a day is far beyond any request or retry.
TOMBSTONE_TTL_SECONDS = 86_400


def record_item(
    partner_id: str,
    row: TradeRecordRow,
    mine: Version,
    ttl: int | None = None,
    keys: tuple[str, str] | None = None,
) -> JsonObject:
    """`keys`: the row's record_id and store-day partition key, when the caller has them already (decision
    0127)."""
    if keys is None:
        keys = (record_id(row.trade_record_id), day_key(partner_id, row.store_id, row.business_date.isoformat()))
    item_id, pk = keys
    # The narrow fields reconciliation reads are top-level properties (a projection reads them); the record
    # as received goes under "document", which no index covers. Its payment_ids are in its index entry, where
    # the partner's look-up finds them.
    item = {
        "id": item_id,
        "pk": pk,
        "type": "record",
        "trade_record_id": row.trade_record_id,
        "version": row.version,
        "last_modified_us": json_safe_int(mine.modified_us),
        "source_type": row.source_transaction_type,
        "item_rows": row.item_rows,
        "payment_rows": row.payment_rows,
        "total_minor": json_safe_int(row.total_minor),
        "tax_minor": json_safe_int(row.tax_minor),
        "tip_minor": json_safe_int(row.tip_minor),
        "payments": {kind: json_safe_int(amount) for kind, amount in row.payments_minor.items()},
        "product_lines": row.product_lines,
        # Already JSON: written as it is by the SDK's orjson (sdk_json.py), never parsed and written again.
        "document": orjson.Fragment(row.document_json) if row.document_json else None,
    }
    return with_ttl(item, ttl)  # beside the document, which stays a fragment (expiry.py)


def stored_bytes(item: JsonObject) -> int:
    """The bytes of an item as sent (a batch request may carry 2 MB); a record's document is a fragment of
    JSON already, copied as it is."""
    return len(orjson.dumps(item))


def tombstone(partner_id: str, item_id: str, store_id: str, business_date: str, mine: Version) -> JsonObject:
    """What a record leaves where it was when a version moves it, so that a slower writer of an older version
    cannot bring it back there; `item_id`: the record's (keys.record_id)."""
    return {
        "id": item_id,
        "pk": day_key(partner_id, store_id, business_date),
        "type": "tombstone",
        "version": mine.number,
        "last_modified_us": json_safe_int(mine.modified_us),
        "ttl": TOMBSTONE_TTL_SECONDS,
    }
