"""A store-day's trade records cut into batches, and the batch_ids that make resending safe.

Limits (the service's docs/partner-guide.md, "Rules of the wire"): at most 500 records and 5 MB of encoded JSON per request (the service refuses
over 5 MiB). Each record is encoded once, compactly, in UTF-8; a batch's body is assembled from those bytes, so
the body sent, and sent again on a retry, is always the same.

A batch_id is a UUIDv5 over the partner's namespace, the kind of request, the store, the business date, the
batch_seq and the SHA-256 of the batch's records: the same day pushed again gives the same batch_ids (the
service answers ALREADY_RECEIVED), while changed records give new ones.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

MAX_RECORDS_PER_BATCH = 500
MAX_BATCH_BYTES = 5_000_000
# The default namespace of batch_ids; a partner may choose its own (PosClient(namespace=...)).
DEFAULT_NAMESPACE = uuid.UUID("6f1c2d84-5a0e-5b8e-9f3c-1d7a2e4b9c60")


def _plain(value: Any) -> Any:
    """Decimal amounts as decimal strings (never float), dates and times in ISO 8601."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def encode(value: Any) -> bytes:
    """Compact UTF-8 JSON; NaN and Infinity refused, as the service refuses them."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_plain).encode()


def derive_batch_id(namespace: uuid.UUID, kind: str, *parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in (kind, *parts):
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big") + data)  # length-prefixed: no two part lists collide
    return str(uuid.uuid5(namespace, digest.hexdigest()))


@dataclass(frozen=True)
class Batch:
    """One POST /trade-records request, ready to send (and resend) as `body`."""

    batch_seq: int
    batch_id: str
    record_count: int
    body: bytes


def _envelope(batch_id: str, store_id: str, business_date: str, batch_seq: int) -> tuple[bytes, bytes]:
    head = encode({"batch_id": batch_id, "store_id": store_id, "business_date": business_date, "batch_seq": batch_seq})
    return head[:-1] + b',"trade_records":[', b"]}"


def plan_batches(
    namespace: uuid.UUID,
    store_id: str,
    business_date: str,
    records: Iterable[Mapping[str, Any]],
    max_records: int = MAX_RECORDS_PER_BATCH,
    max_bytes: int = MAX_BATCH_BYTES,
) -> list[Batch]:
    """The records, in their order, in as few batches as the limits allow, numbered from batch_seq 1."""
    encoded = [encode(record) for record in records]
    groups: list[list[bytes]] = []
    size = 0
    for index, record in enumerate(encoded):
        head, tail = _envelope(str(DEFAULT_NAMESPACE), store_id, business_date, len(groups) + 1)
        alone = len(head) + len(record) + len(tail)
        if alone > max_bytes:
            raise ValueError(
                f"trade record {index} alone is {alone} bytes of JSON, over the {max_bytes} a batch may be"
            )
        if groups and len(groups[-1]) < max_records and size + 1 + len(record) <= max_bytes:
            groups[-1].append(record)
            size += 1 + len(record)
        else:
            groups.append([record])
            size = alone
    batches = []
    for seq, group in enumerate(groups, start=1):
        content = b",".join(group)
        batch_id = derive_batch_id(
            namespace, "trade-records", store_id, business_date, str(seq), hashlib.sha256(content).digest()
        )
        head, tail = _envelope(batch_id, store_id, business_date, seq)
        batches.append(Batch(seq, batch_id, len(group), head + content + tail))
    return batches


def close_body(
    namespace: uuid.UUID, store_id: str, business_date: str, batch_count: int, close: Mapping[str, Any]
) -> tuple[str, bytes]:
    """The daily close's (batch_id, body): the POS's control totals with this day's store, date and batch_count.

    Its batch_id covers the totals and the batch_count: the same close is ALREADY_RECEIVED, a corrected one new.
    """
    for name, value in (("store_id", store_id), ("business_date", business_date)):
        if name in close and str(close[name]) != value:
            raise ValueError(f"the daily close's {name} is {close[name]!r}, not {value!r}")
    fields = {name: value for name, value in close.items() if name != "batch_id"}
    fields.update(store_id=store_id, business_date=business_date, batch_count=batch_count)
    batch_id = derive_batch_id(namespace, "daily-close", store_id, business_date, encode(dict(sorted(fields.items()))))
    return batch_id, encode({"batch_id": batch_id, **fields})


def write_body(namespace: uuid.UUID, kind: str, batch_id: str | None, members: Mapping[str, Sequence[Any]]) -> bytes:
    """The body of a master data write (stores, products, mappings); without a batch_id, one derived from the
    content, so the same data sent again is ALREADY_RECEIVED."""
    content = encode(dict(members))
    chosen = batch_id or derive_batch_id(namespace, kind, content)
    return encode({"batch_id": chosen, **members})
