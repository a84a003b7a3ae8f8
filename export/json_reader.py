"""A page of stored documents read into Arrow columns (decision 0124): by arrow-rs's JSON decoder (arro3-io),
which takes about 100 ms of CPU for a 10,000-record day where Arrow's own reader takes 160 ms, and holds no GIL.

arrow-rs would round a decimal with a place too many and read a time's extra digits where Arrow refuses them, so
decimals and times are read as their text and cast by Arrow's casts, which refuse what Arrow's reader refuses.
Whatever the decoder or a cast refuses, and a page whose documents span several lines, is read by Arrow's own
reader as before (decision 0087), which either reads it or fails the page as it always did."""

from __future__ import annotations

import io
from collections.abc import Sequence

import pyarrow as pa
import pyarrow.json as pj
from arro3.io import read_json as decode_json

# Arrow's reader: a page bigger than this is parsed on the threads of Arrow's pool (4 MB measured fastest for a
# day of 24 MB read as one page).
BLOCK_BYTES = 4 << 20
# Pages of fewer documents are read by Arrow's reader: the decoder and its casts cost more a call (1.2 to 1.6 ms
# against 0.8 to 1.2 ms for 20 records), which a month of small days would pay each day.
DECODED_FROM = 500


def read_page(documents: Sequence[bytes], schema: pa.Schema) -> pa.Table:
    """The documents' `schema` fields, one row per document, in their order; other keys are skipped."""
    if not documents:
        return schema.empty_table()
    data = b"\n".join([*documents, b""])  # newline-delimited, as the readers read JSON
    # The service writes documents on one line; one written otherwise is read by Arrow's reader, more slowly.
    several_lines = data.count(b"\n") > len(documents)
    if not several_lines and len(documents) >= DECODED_FROM:
        try:
            return _decoded(data, len(documents), schema)
        except (pa.ArrowInvalid, ValueError):
            pass
    return _read_by_arrow(documents, data, schema, several_lines)


def _decoded(data: bytes, rows: int, schema: pa.Schema) -> pa.Table:
    as_text = pa.schema([field.with_type(_as_text(field.type)) for field in schema])
    batches = decode_json(io.BytesIO(data), as_text, batch_size=rows)
    table = pa.RecordBatchReader.from_stream(batches).read_all()
    if table.num_rows != rows:  # a line holding two documents, or none
        raise ValueError(f"{table.num_rows} rows for {rows} documents")
    return table.cast(schema)


def _as_text(data_type: pa.DataType) -> pa.DataType:
    """The type with each decimal and time in it read as its text."""
    if pa.types.is_decimal(data_type) or pa.types.is_timestamp(data_type):
        return pa.string()
    if isinstance(data_type, pa.ListType):
        return pa.list_(_as_text(data_type.value_type))
    if isinstance(data_type, pa.StructType):
        return pa.struct([field.with_type(_as_text(field.type)) for field in data_type])
    return data_type


def _read_by_arrow(documents: Sequence[bytes], data: bytes, schema: pa.Schema, several_lines: bool) -> pa.Table:
    options = pj.ParseOptions(
        explicit_schema=schema, unexpected_field_behavior="ignore", newlines_in_values=several_lines
    )
    # A block holds at least one whole document; a page of one block is read on this thread (the pool's
    # hand-over costs a small page more than it saves).
    block = max(BLOCK_BYTES, max(map(len, documents)) + 1)
    reading = pj.ReadOptions(block_size=block, use_threads=len(data) > block)
    return pj.read_json(pa.BufferReader(data), read_options=reading, parse_options=options)
