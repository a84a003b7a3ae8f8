"""HQ's one-off migrations of the Cosmos DB adapter's items (`hq cosmos ...`), as CosmosStorage offers them."""

from __future__ import annotations

from collections.abc import Callable

from backends.cosmos.close_moves import Relayout, relayout_closes
from backends.cosmos.connection import Containers
from backends.cosmos.expiry import DayExpiry
from backends.cosmos.index_migration import Migrated, migrate_record_index
from backends.cosmos.outages import outage_as_unavailable
from backends.cosmos.ttl_backfill import Backfilled, backfill_ttl


class OneOffMigrations:
    _containers: Containers
    _expiry: DayExpiry

    @outage_as_unavailable
    def migrate_record_index(self, progress: Callable[[Migrated], None]) -> Migrated:
        """Copy the version entries of the layout before the record index into it (index_migration.py)."""
        return migrate_record_index(self._containers.trade_records, progress)

    def relayout_closes(self, progress: Callable[[Relayout], None]) -> Relayout:
        """Move the closes left in partners' partitions to their stores' (close_moves.py)."""
        return relayout_closes(self._containers.closes, progress)

    def backfill_ttl(self, progress: Callable[[Backfilled], None]) -> Backfilled:
        """Give the items written before retention was on their ttl (ttl_backfill.py)."""
        return backfill_ttl(self._containers.trade_records, self._containers.batches, self._expiry, progress)
