"""A store-day's stored records as the export reads them (decision 0087): the
pages gathered into Arrow columns in trade_record_id order, the documents parsed by Arrow's JSON reader into
the columns the datasets take from them, and the two fields the datasets keep as JSON text (a record's
tax_lines, each item line's modifiers) written back from their parsed values by Arrow's kernels (decision 0123).

Each page is parsed and its texts written on one of the export's threads as soon as it is read, while this thread
reads the next (decision 0117): Arrow's JSON reader holds no GIL, so the parse of a page runs beside the reads."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from core.documents_page import DocumentsPage
from export.json_text import MODIFIER, TAX_LINE, lists_as_json
from export.pool import soon
from export.schemas import ITEM_LINES, PAYMENTS, TRADE_RECORDS

# DocumentsPage's narrow fields as Arrow columns.
NARROW = pa.schema(
    [
        ("trade_record_ids", pa.string()),
        ("versions", pa.int64()),
        ("last_modified_us", pa.int64()),
        ("source_types", pa.string()),
        ("item_rows", pa.int64()),
        ("payment_rows", pa.int64()),
        ("total_minor", pa.int64()),
        ("tax_minor", pa.int64()),
        ("tip_minor", pa.int64()),
    ]
)
NARROW_NONE = pa.RecordBatch.from_pylist([], schema=NARROW)

# The datasets' columns not read from the parsed documents: the narrow fields', the store's, the resolution's,
# the record's (for its lines), and the JSON text cut from the documents.
NOT_PARSED = {
    "trade_records": {
        "store_id",
        "trade_record_id",
        "version",
        "last_modified_at",
        "source_transaction_type",
        "standard_transaction_type",
        "is_revenue",
        "currency_exponent",
        "net_sales_amount",
        "item_row_count",
        "payment_row_count",
        "tax_lines",
    },
    "item_lines": {"store_id", "trade_record_id", "currency", "modifiers"},
    "payments": {"store_id", "trade_record_id", "currency", "direction"},
}


def _as_read(schema: pa.Schema, skipped: set[str]) -> list[pa.Field]:
    """The schema's fields read from the documents, as the datasets type them: Arrow's JSON reader reads
    a decimal's text exactly (a place too many fails rather than being rounded) and converts a time's
    offset to UTC."""
    return [field for field in schema if field.name not in skipped]


# What Arrow's JSON reader reads of a document; the other fields it skips.
DOCUMENT = pa.schema(
    [
        *_as_read(TRADE_RECORDS, NOT_PARSED["trade_records"]),
        ("items", pa.list_(pa.struct(_as_read(ITEM_LINES, NOT_PARSED["item_lines"])))),
        ("payments", pa.list_(pa.struct(_as_read(PAYMENTS, NOT_PARSED["payments"])))),
    ]
)


def _with_modifiers(items: pa.DataType) -> pa.DataType:
    """The item lines' struct with each line's modifiers, where the stored document has them: before
    is_voided (the wire's order, decision 0124)."""
    fields = list(items.value_type)
    at = [field.name for field in fields].index("is_voided")
    return pa.list_(pa.struct([*fields[:at], ("modifiers", pa.list_(MODIFIER)), *fields[at:]]))


# The same with the parts kept as JSON text parsed too, as the wire's structs (decision 0123). Every field in the
# order the stored document has its key (the wire's order): Arrow's JSON reader looks a key up fastest where it
# comes after the field before it (14 ms less CPU for a 10,000-record day than items after payments and
# modifiers after is_voided, decision 0124); another order is read the same, more slowly.
WITH_TEXTS = pa.schema(
    [
        *[(field.name, _with_modifiers(field.type)) if field.name == "items" else field for field in DOCUMENT],
        ("tax_lines", pa.list_(TAX_LINE)),
    ]
)
# The JSON reader's blocks: a page bigger than this is parsed on the threads of Arrow's pool (4 MB measured
# fastest for a day of 24 MB read as one page).
BLOCK_BYTES = 4 << 20


@dataclass
class Documents:
    """A store-day's records, in trade_record_id order: their narrow fields (NARROW), what the datasets read
    of their documents (DOCUMENT), each record's tax_lines and each item line's modifiers as JSON text."""

    records: int
    narrow: pa.RecordBatch
    parsed: pa.Table
    tax_lines: pa.Array
    modifiers: pa.Array


def read_documents(pages: Iterable[DocumentsPage]) -> Documents:
    """The pages of a store-day's records (in any order) as one Documents."""
    narrow: list[pa.RecordBatch] = []
    reading: list[Future[_Page]] = []
    for page in pages:
        reading.append(soon(_read_page, page.documents, len(page.documents)))
        narrow.append(_narrow(page))
    read = [future.result() for future in reading]
    batch = pa.concat_batches(narrow or [NARROW_NONE])
    order = pc.sort_indices(batch.column("trade_record_ids"))
    if not read:
        return Documents(0, batch, DOCUMENT.empty_table(), pa.array([], pa.string()), pa.array([], pa.string()))
    modifiers = pa.concat_arrays([page.modifiers for page in read]).take(order)
    return Documents(
        batch.num_rows,
        batch.take(order),
        pa.concat_tables([page.parsed for page in read]).take(order),
        pa.concat_arrays([page.tax_lines for page in read]).take(order),
        modifiers.flatten(),
    )


@dataclass
class _Page:
    """A page's documents parsed, each one's tax_lines and each one's lines' modifiers."""

    parsed: pa.Table
    tax_lines: pa.Array
    modifiers: pa.ListArray


def _read_page(documents: Sequence[bytes]) -> _Page:
    """A page's documents parsed, their texts written by Arrow's kernels (decision 0123); a page with a
    tax line or modifier of another shape than the wire's (a value of another type, not an object) is parsed
    without them and its texts are orjson's of the values (_parsed_texts)."""
    try:
        parsed = _parsed(documents, WITH_TEXTS, "ignore")
    except pa.ArrowInvalid:
        return _read_page_other_shape(documents)
    items = parsed.column("items").combine_chunks()
    return _Page(
        parsed.select(DOCUMENT.names).cast(DOCUMENT),
        lists_as_json(parsed.column("tax_lines").combine_chunks()),
        pa.ListArray.from_arrays(items.offsets, lists_as_json(items.values.field("modifiers"))),
    )


def _read_page_other_shape(documents: Sequence[bytes]) -> _Page:
    parsed = _parsed(documents, DOCUMENT, "ignore")
    texts = [_parsed_texts(document) for document in documents]
    return _Page(
        parsed,
        pa.array([record[0] for record in texts], pa.string()),
        pa.array([record[1:] for record in texts], pa.list_(pa.string())),
    )


def _narrow(page: DocumentsPage) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array(getattr(page, field.name), field.type) for field in NARROW], schema=NARROW
    )


def _parsed(documents: Sequence[bytes], schema: pa.Schema, unexpected: str) -> pa.Table:
    """The documents' `schema` fields, one row per document, in their order."""
    if not documents:
        return schema.empty_table()
    data = b"\n".join([*documents, b""])  # newline-delimited, as the reader reads JSON
    options = pj.ParseOptions(
        explicit_schema=schema,
        unexpected_field_behavior=unexpected,
        # The service writes documents on one line; one written otherwise is read so too, more slowly.
        newlines_in_values=data.count(b"\n") > len(documents),
    )
    # A block holds at least one whole document; a page of one block is read on this thread (the pool's
    # hand-over costs a small page more than it saves).
    block = max(BLOCK_BYTES, max(map(len, documents)) + 1)
    reading = pj.ReadOptions(block_size=block, use_threads=len(data) > block)
    return pj.read_json(pa.BufferReader(data), read_options=reading, parse_options=options)


def _parsed_texts(document: bytes) -> list[str]:
    record = orjson.loads(document)
    values = [record.get("tax_lines"), *(line.get("modifiers") for line in record.get("items") or [])]
    return [orjson.dumps(value or []).decode() for value in values]
