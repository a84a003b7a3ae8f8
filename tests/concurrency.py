"""Requests sent at the same moment, for the race and multi-instance tests."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor


def all_at_once(count: int, work) -> list:
    """Run work(i) on `count` threads released by one barrier; the results in order."""
    barrier = threading.Barrier(count)

    def run(index):
        barrier.wait(timeout=60)
        return work(index)

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))
