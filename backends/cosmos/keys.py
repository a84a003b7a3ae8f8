"""Ids and partition keys of the items the Cosmos DB adapter stores: partners' codes escaped so that any
code fits, joined into compound keys, hashed when too long. Changing any of these changes where existing
items are found: they must stay as they are."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import re
import zlib

# An id is limited to 1,023 bytes; a longer compound id is replaced by its hash.
MAX_ID_BYTES = 1023
_PLAIN = re.compile(r"[A-Za-z0-9._-]*")  # a regular expression: ~20x faster than a set test per character


def key_part(value: str) -> str:
    """A partner's code made safe for ids and partition keys, readable when it is plain.

    Codes (product_id, trade_record_id, group_id, ...) may hold any printable character, "/ \\ ? #"
    included, which Cosmos DB refuses in an id; store and partner ids hold fewer. Some characters
    Cosmos DB accepts in an id still break its point operations (a "%" sequence is decoded by the
    gateway before it checks the request's signature: 401 or 404), and "|" separates compound keys.
    So letters, digits and "-._" stay, and every other character is written as ~XX per UTF-8 byte:
    injective, hence no two codes (or key parts) ever collide. A code is escaped, never refused; a
    key grown too long by escaping is hashed by compound_key.
    """
    if _PLAIN.fullmatch(value):
        return value
    return "".join(
        char if _PLAIN.fullmatch(char) else "".join(f"~{byte:02X}" for byte in char.encode("utf-8")) for char in value
    )


def compound_key(*parts: str) -> str:
    """A compound id or partition key value, unambiguous and within Cosmos DB's length limit."""
    # Parts all plain (nearly every key): each is its own key_part, checked at once.
    plain = _PLAIN.fullmatch("".join(parts)) is not None
    joined = "|".join(parts if plain else (key_part(part) for part in parts))
    # Escaped parts are ASCII: the length in characters is the length in bytes (decision 0127).
    if len(joined) > MAX_ID_BYTES:
        return "sha256|" + hashlib.sha256(joined.encode("utf-8")).hexdigest()
    return joined


def partner_key(partner_id: str) -> str:
    """The partition of a partner's items in `partners` (and of its closes in `daily-closes` before decision
    0093: close_moves.py)."""
    return compound_key(partner_id)


def api_key_key(key_hash: str) -> str:
    """The partition of one API key (id "key"): a request's key is one point read away."""
    return compound_key("key", key_hash)


def marker_id(batch_id: str) -> str:
    return compound_key(batch_id)


def marker_key(partner_id: str, batch_id: str) -> str:
    """A batch marker's partition: one per partner and batch_id."""
    return compound_key(partner_id, batch_id)


@functools.lru_cache(maxsize=4096)  # every record of a batch names the same store-day
def day_key(partner_id: str, store_id: str, business_date: str) -> str:
    """A store-day's partition in `trade-records`: its records, batch entries and tombstones."""
    return compound_key("d", partner_id, store_id, business_date)


def partner_date(partner_id: str, business_date: str) -> str:
    """What a batch entry is found by across store-days (HQ's dashboard): the partner's escaped id, which
    holds no "|", then the ISO date, so that one partner's dates from first to last are one range of text.
    Never hashed (a partner_id is short), unlike compound_key."""
    return f"{key_part(partner_id)}|{business_date}"


def close_key(partner_id: str, store_id: str) -> str:
    """The partition of a store's closes and results in `daily-closes` (decision 0093)."""
    return compound_key("c", partner_id, store_id)


def close_id(store_id: str, business_date: dt.date) -> str:
    return compound_key(store_id, business_date.isoformat())


def version_key(partner_id: str, trade_record_id: str) -> str:
    """The partition of a trade record's version entry in the layout before the record index (id "version"):
    read only by `hq cosmos migrate-index`."""
    return compound_key("v", partner_id, trade_record_id)


# The record index (record_index.py): a partner's entries are spread over this many buckets, each a chain of
# logical partitions (index_layout.py), so that a batch writes them in at most this many transactional
# batches; a full node's bucket continues in a new partition (decisions 0092 and 0115).
INDEX_BUCKETS = 16


def index_bucket(trade_record_id: str) -> int:
    """The bucket of a trade record's entry: CRC-32 of its id, stable across processes and versions."""
    return zlib.crc32(trade_record_id.encode("utf-8")) % INDEX_BUCKETS


@functools.lru_cache(maxsize=4096)  # a batch's records share a partner's base nodes
def index_key(partner_id: str, bucket: int) -> str:
    """The first node (generation 0) of a bucket of a partner's record index in `trade-records` (decision
    0056's keys)."""
    return compound_key("i", partner_id, str(bucket))


def index_entry_id(trade_record_id: str) -> str:
    return compound_key("v", trade_record_id)


def record_id(trade_record_id: str) -> str:
    return compound_key("r", trade_record_id)
