"""Opens the adapters the settings name (storage and the reconciliation queue), as one Backend.

The app opens it once per process through its composition root (triggers/composition.py); `hq` opens
its own for the command it runs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from backends.queues import open_reconcile_queue
from core.ports import Retirement, Storage
from core.queue_ports import DelayedQueue
from core.settings import Settings


@dataclass(frozen=True)
class Backend:
    settings: Settings
    storage: Storage
    queue: DelayedQueue
    # What deletes retired store-days in bounded steps: the storage on SQLite; None on Cosmos DB, whose items
    # expire by their ttl (decision 0086).
    retirement: Retirement | None = None


def open_storage(settings: Settings) -> Storage:
    if settings.backend == "sqlite":
        from backends.sqlite.storage import SqliteStorage

        return SqliteStorage(settings.data_dir, settings.trade_record_retention_days)
    if settings.backend == "azure":
        from backends.cosmos.storage import CosmosStorage

        return CosmosStorage.from_settings(settings)
    raise ValueError(f"POS_BACKEND={settings.backend!r} is not supported (use 'sqlite' or 'azure')")


def open_backend(settings: Settings) -> Backend:
    # The Azure SDKs log every HTTP request at INFO; our own log lines say what matters.
    logging.getLogger("azure").setLevel(logging.WARNING)
    storage = open_storage(settings)
    return Backend(settings, storage, open_reconcile_queue(settings), _retirement(storage))


def _retirement(storage: Storage) -> Retirement | None:
    from backends.sqlite.storage import SqliteStorage

    return storage if isinstance(storage, SqliteStorage) else None
