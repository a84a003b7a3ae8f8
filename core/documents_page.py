"""What the Parquet export reads of a store-day's stored records (core.ports.ExportReads.store_day_documents)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class DocumentsPage:
    """Some of a store-day's latest records as the Parquet export reads them, field by field: the i-th value
    of each list belongs to the i-th record. Columns rather than a TradeRecordRow each: building 10,000 rows
    took as long as writing the day's files (decision 0087)."""

    trade_record_ids: Sequence[str]
    versions: Sequence[int]
    last_modified_us: Sequence[int]  # microseconds since the Unix epoch, UTC
    source_types: Sequence[str]
    item_rows: Sequence[int]
    payment_rows: Sequence[int]
    total_minor: Sequence[int]
    tax_minor: Sequence[int]
    tip_minor: Sequence[int]
    documents: Sequence[bytes]  # each record as stored: its JSON document, UTF-8
