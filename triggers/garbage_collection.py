"""The worker process's garbage collector, set for the app's requests (decision 0063).

CPython's cyclic collector runs when the container objects allocated and not yet freed since its last run
pass a threshold (700 by default). A 500-record batch makes about 30,000 of them (the parsed body, the
records, their parts) that live until its answer: about 45 collections an accept, each walking the
batch's objects again, 10-12 % of the accept's CPU time (docs/performance.md). The objects are freed by
reference counting when the answer is sent, so with a threshold above what a batch makes the collector
seldom runs during one; what it is for, objects in reference cycles (few here: an exception and its
traceback), waits a little longer, at most that many objects.
"""

from __future__ import annotations

import gc

# Above the ~30,000 objects of a 500-record batch, with room for batches of larger records.
YOUNG_OBJECTS_THRESHOLD = 100_000


def set_for_requests() -> None:
    """Raise the youngest generation's threshold, and freeze what is loaded so far: the app and its
    libraries live as long as the process, and frozen they are not walked by every full collection."""
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_OBJECTS_THRESHOLD, older, oldest)
    gc.freeze()
