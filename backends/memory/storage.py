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

from typing import TYPE_CHECKING

from backends.memory.administration import MemoryAdministration
from backends.memory.batch_writes import MemoryBatchWrites
from backends.memory.day_records import MemoryDayRecords
from backends.memory.exports import MemoryExportReads
from backends.memory.overview import MemoryOverview
from backends.memory.reads import MemoryReads
from backends.memory.results import MemoryResults
from backends.memory.retirement import MemoryRetirement
from backends.reads_one_by_one import ReadsOneByOne

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
    ReadsOneByOne,
):
    """Every part over one set of tables (MemoryState.__init__)."""


if TYPE_CHECKING:  # mypy checks the memory storage against the port, as open_storage checks the others

    def _as_storage(storage: MemoryStorage) -> Storage:
        return storage

    def _as_retirement(storage: MemoryStorage) -> Retirement:
        return storage
