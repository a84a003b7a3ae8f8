"""The export's threads: each store-day page is parsed on one of them while the caller reads the next page,
and a store-day's files are written on them side by side (decision 0117). Arrow's JSON reader and Parquet
writer hold no GIL, so the work runs on the host's cores; two threads: the Functions host's smallest instance
has two."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

EXPORT_THREADS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="export")
