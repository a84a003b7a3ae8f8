"""Opens the queue the settings name: the embedded SQLite queue or Azure Storage Queue.

Both classes have the same producer side (core.ports.DelayedQueue) and consumer side
(core.ports.QueueConsumer), so the local host and `hq` work on either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.settings import Settings

if TYPE_CHECKING:
    from backends.azure_queue import AzureQueue
    from backends.sqlite.delayed_queue import SqliteQueue

RECONCILE_QUEUE = "reconcile-requests"


def open_queue(settings: Settings, queue_name: str) -> SqliteQueue | AzureQueue:
    if settings.backend == "sqlite":
        from backends.sqlite.delayed_queue import SqliteQueue

        return SqliteQueue(settings.data_dir, queue_name)
    if settings.backend == "azure":
        from backends.azure_queue import AzureQueue

        return AzureQueue.from_settings(settings, queue_name)
    raise ValueError(f"POS_BACKEND={settings.backend!r} is not supported (use 'sqlite' or 'azure')")


def open_reconcile_queue(settings: Settings) -> SqliteQueue | AzureQueue:
    """The queue of reconciliation requests, consumed by the queue-triggered `reconcile_store_day`."""
    return open_queue(settings, RECONCILE_QUEUE)
