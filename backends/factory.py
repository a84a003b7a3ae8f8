"""Opens the backend the settings name, once per process (connections are reused, no state that
matters for correctness lives here: every instance sees the same storage)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from core.ports import DelayedQueue, Storage
from core.settings import Settings

RECONCILE_QUEUE = "reconcile-requests"


@dataclass(frozen=True)
class Backend:
    settings: Settings
    storage: Storage
    queue: DelayedQueue


def open_backend(settings: Settings) -> Backend:
    if settings.backend == "sqlite":
        from backends.sqlite_queue import SqliteQueue
        from backends.sqlite_storage import SqliteStorage

        return Backend(settings, SqliteStorage(settings.data_dir), SqliteQueue(settings.data_dir, RECONCILE_QUEUE))
    raise ValueError(f"POS_BACKEND={settings.backend!r} is not supported (use 'sqlite')")


@functools.cache
def current_backend() -> Backend:
    return open_backend(Settings.from_env())
