"""The composition root: the one place the app opens its backend, from the settings, once per process.

Every trigger reaches storage and the queue through current_backend(). Connections are reused; no
state that matters for correctness lives here (every instance sees the same storage).
"""

from __future__ import annotations

import functools

from backends.factory import Backend, open_backend
from core.settings import Settings


@functools.cache
def current_backend() -> Backend:
    return open_backend(Settings.from_env())
