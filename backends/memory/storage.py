"""The Storage port in memory: dicts behind one lock, for use-case tests that need no database.

`MemoryStorage` only assembles the adapter from one class per concern, each in its module, over the
tables of state.MemoryState.

It passes the same contract suite as the SQLite and Cosmos DB adapters (tests/contract/test_storage_contract.py),
so a use case tested on it behaves as on them. Every call runs under the lock, so a write and its marker
are one atomic step, as in a SQLite transaction; what is stored is copied in and out, so a caller never
changes it through an object it passed or got. It has no fault points (core/faults.py): nothing can fail
between its steps, which is what they simulate. Not for the service itself: nothing survives the process
and nothing is shared between instances.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from backends.memory.administration import MemoryAdministration
from backends.memory.batch_writes import MemoryBatchWrites
from backends.memory.day_records import MemoryDayRecords
from backends.memory.exports import MemoryExportReads
from backends.memory.overview import MemoryOverview
from backends.memory.reads import MemoryReads
from backends.memory.results import MemoryResults
from backends.memory.retirement import MemoryRetirement
from core.records import StoreDay
from core.trade_inputs import StoredForChecks, TradeInputs, read_separately, stored_separately

if TYPE_CHECKING:
    from core.ports import Retirement, Storage


class MemoryStorage(
    MemoryAdministration,
    MemoryBatchWrites,
    MemoryReads,
    MemoryResults,
    MemoryOverview,
    MemoryExportReads,
    MemoryRetirement,
    MemoryDayRecords,
):
    """Every part over one set of tables (MemoryState.__init__)."""

    def trade_inputs(self, partner_id: str, store_id: str) -> TradeInputs:
        return read_separately(self, partner_id, store_id)

    def stored_for_checks(
        self, partner_id: str, day: StoreDay, batch_seq: int, payment_ids: Collection[str], limit: int
    ) -> StoredForChecks:
        return stored_separately(self, partner_id, day, batch_seq, payment_ids, limit)


if TYPE_CHECKING:  # mypy checks the memory storage against the port, as open_storage checks the others

    def _as_storage(storage: MemoryStorage) -> Storage:
        return storage

    def _as_retirement(storage: MemoryStorage) -> Retirement:
        return storage
