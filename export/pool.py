"""The export's threads: each page of a big store-day is parsed on one of them while the caller reads the
next page, and a big store-day's files are encoded on them side by side (decision 0117). Arrow's JSON reader
and Parquet writer hold no GIL, so that work runs on the host's cores; two threads: the Functions host's
smallest instance has two.

Small work runs on the caller's thread: a hand-over costs more than it saves there, and on a machine whose
cores are busy each waits for the scheduler (a month of 20-record days, every page and file handed over,
took 3.5x its floor at load 7.5)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

EXPORT_THREADS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="export")
# Below this many records (a page) or rows (a table), no hand-over.
SMALL = 500

T = TypeVar("T")
A = TypeVar("A")


def soon(call: Callable[[A], T], argument: A, size: int) -> Future[T]:
    """call(argument) on the export's threads, or now on this one if `size` (records or rows) is small."""
    if size >= SMALL:
        return EXPORT_THREADS.submit(call, argument)
    done: Future[T] = Future()
    done.set_result(call(argument))
    return done
