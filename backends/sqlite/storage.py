"""The embedded Storage adapter: SQLite (WAL) under POS_DATA_DIR.

`SqliteStorage` only assembles the adapter from one class per concern, each in its module: the
administration tables, request admission, batch writes, reads, reconciliation results, HQ's dashboard
reads (overview.py) and the export's reads (exports.py), over the database that schema.open_database opens
(and migrates).
"""

from __future__ import annotations

from pathlib import Path

from backends.reads_one_by_one import ReadsOneByOne
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
    ReadsOneByOne,
):
    def __init__(self, data_dir: Path, retention_days: int = 0) -> None:
        self.db = open_database(data_dir)
        self.retention_days = retention_days  # core/retention.py: the store-days this store keeps
