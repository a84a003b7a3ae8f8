"""What the Parquet export reads from the storage database (core.ports.ExportReads): the store-days checked
in a span of time (index closed_days_checked) and a store-day's latest records with their documents, a page
at a time."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from backends.sqlite.database import SqliteDatabase
from core.clock import to_utc_text
from core.documents_page import DocumentsPage
from core.records import StoreDay

# Records read per page: each page is its own short read, so a big day never holds a read transaction long.
DOCUMENTS_PER_PAGE = 1000

# In the order of the index trade_records_day_by_type (source_type, trade_record_id), from where the
# previous page ended: each page is a range of the index, and a record's document is read by its rowid. The
# columns in the order of DocumentsPage's fields; the document as its bytes (the export parses UTF-8, so
# decoding it to text and encoding it again would be wasted).
DAY_DOCUMENTS = (
    "SELECT trade_record_id, version, last_modified_us, source_type, item_rows, payment_rows, total_minor, "
    "tax_minor, tip_minor, CAST(document AS BLOB) FROM trade_records "
    "WHERE partner_id = ? AND store_id = ? AND business_date = ? AND (source_type, trade_record_id) > (?, ?) "
    "ORDER BY source_type, trade_record_id LIMIT ?"
)


class SqliteExportReads:
    db: SqliteDatabase

    def days_checked(
        self, after: dt.datetime | None, through: dt.datetime, limit: int | None = None
    ) -> list[tuple[str, StoreDay]]:
        # checked_at is fixed-width UTC text (NULL while RECEIVED), so text order is time order.
        with self.db.read() as db:
            rows = db.execute(
                "SELECT partner_id, store_id, business_date FROM closed_days "
                "WHERE checked_at > ? AND checked_at <= ? ORDER BY partner_id, business_date, store_id LIMIT ?",
                ("" if after is None else to_utc_text(after), to_utc_text(through), -1 if limit is None else limit),
            ).fetchall()
        return [(row[0], StoreDay(row[1], dt.date.fromisoformat(row[2]))) for row in rows]

    def store_day_documents(self, partner_id: str, store_id: str, business_date: dt.date) -> Iterator[DocumentsPage]:
        last = ("", "")  # before every (source_type, trade_record_id): both are non-empty codes
        while True:
            with self.db.read() as db:
                cursor = db.cursor()
                cursor.row_factory = None  # plain tuples: a sqlite3.Row each cost a tenth of the read (decision 0117)
                rows = cursor.execute(
                    DAY_DOCUMENTS, (partner_id, store_id, business_date.isoformat(), *last, DOCUMENTS_PER_PAGE)
                ).fetchall()
            if rows:
                yield DocumentsPage(*zip(*rows, strict=True))
            if len(rows) < DOCUMENTS_PER_PAGE:
                return
            last = (rows[-1][3], rows[-1][0])
