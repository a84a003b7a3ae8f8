"""The embedded Storage adapter: SQLite (WAL) under POS_DATA_DIR.

`SqliteStorage` only assembles the adapter from one class per concern, each in its module: the
administration tables, request admission, batch writes, reads, reconciliation results, HQ's dashboard
reads (overview.py) and the export's reads (exports.py), over the database that schema.open_database opens
(and migrates).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from backends.sqlite.administration import SqliteAdministration
from backends.sqlite.admission import SqliteAdmission
from backends.sqlite.batch_writes import SqliteBatchWrites
from backends.sqlite.day_records import SqliteDayRecords
from backends.sqlite.exports import SqliteExportReads
from backends.sqlite.overview import SqliteOverview
from backends.sqlite.reads import SqliteReads
from backends.sqlite.results import SqliteResults
from backends.sqlite.retirement import SqliteRetirement
from backends.sqlite.schema import open_database
from core.records import StoreDay
from core.trade_inputs import StoredForChecks, TradeInputs, read_separately, stored_separately


class SqliteStorage(
    SqliteAdministration,
    SqliteAdmission,
    SqliteBatchWrites,
    SqliteReads,
    SqliteResults,
    SqliteOverview,
    SqliteExportReads,
    SqliteRetirement,
    SqliteDayRecords,
):
    def __init__(self, data_dir: Path, retention_days: int = 0) -> None:
        self.db = open_database(data_dir)
        self.retention_days = retention_days  # core/retention.py: the store-days this store keeps

    def trade_inputs(self, partner_id: str, store_id: str) -> TradeInputs:
        return read_separately(self, partner_id, store_id)  # four indexed reads of one file: nothing to save

    def stored_for_checks(
        self, partner_id: str, day: StoreDay, batch_seq: int, payment_ids: Collection[str], limit: int
    ) -> StoredForChecks:
        return stored_separately(self, partner_id, day, batch_seq, payment_ids, limit)
