"""A trade record as stored: its JSON document, written once per record by the accept."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import msgspec

from ingest.wire.requests import TradeRecord

if TYPE_CHECKING:
    from hashlib import _Hash as Hash

# A batch holds msgspec Structs whichever reader read it (ingest/wire/record_structs.py, decision 0020), which
# msgspec writes as pydantic does (UTC as "Z", fractions in six digits, offsets, text as UTF-8):
# tests/e2e/test_trade_records.py and tests/unit/test_record_structs.py compare them.
_STRUCT_ENCODER = msgspec.json.Encoder()
# `encode` grows a new buffer for every document; `encode_into` reuses one, kept per thread (the local host and
# the Functions worker run requests on several threads): 500 documents 1.9 -> 1.5 ms. A buffer keeps the size
# of the largest record its thread wrote, at most a request body.
_BUFFERS = threading.local()


def document_json(record: TradeRecord, meaning: Hash | None = None) -> str:
    """The record as stored, in a fifth of the time pydantic takes. meaning: a hash of what the batch says
    (ingest/trade_batches.py `meaning_of_records`) that gets a newline and the document's bytes, which it
    hashes before they become text (a third of the time of encoding the batch's text again)."""
    buffer = getattr(_BUFFERS, "buffer", None)
    if buffer is None:
        buffer = _BUFFERS.buffer = bytearray()
    _STRUCT_ENCODER.encode_into(record, buffer)
    if meaning is not None:
        meaning.update(b"\n")
        meaning.update(buffer)
    return buffer.decode()
