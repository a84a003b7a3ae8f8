"""The Azure accept in-process, for counting its instructions per kind of batch (decision 0127): the use case on a
CosmosStorage against a running Cosmos DB emulator, the embedded path (SqliteStorage) beside it, the same bodies
as bench/azure_accept.py (new records, later versions in their day, moves to the next day).

Run under valgrind's cachegrind, which counts every instruction this process runs whatever the machine's load
(the emulator, another process, is not counted); `--stage` says how far to go, so that the instructions of a
kind are the difference between two stages:

    python -m devhost.cosmos_emulator ...   # or any emulator: --endpoint
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \\
        .venv/bin/python -m bench.azure_accept_inprocess --endpoint URL --stage later
    # stages: set-up (and a warm-up batch of each kind), new, later, moves; each runs the ones before it

`--profile FILE` writes cProfile's statistics of the last stage's batches, the writers run inline in the one
thread cProfile follows. Each kind's CPU time a record (this process, all its threads: time.process_time) is
printed too, a quick figure to compare two trees by, alternating (decision 0130): it moves with the machine's
load, the instructions do not."""

from __future__ import annotations

import argparse
import cProfile
import gc
import tempfile
import time
import uuid
from pathlib import Path

from bench import catalogue, generate, harness
from bench.azure_accept import later_versions

STAGES = ("set-up", "new", "later", "moves")
CURRENCY = "USD"


def _storage(backend: str, endpoint: str, work: Path):
    if backend == "sqlite":
        from backends.sqlite.storage import SqliteStorage

        return SqliteStorage(work)
    from backends.cosmos.storage import CosmosStorage
    from devhost.cosmos_emulator import EMULATOR_KEY

    return CosmosStorage(endpoint, f"inproc-{uuid.uuid4().hex[:8]}", key=EMULATOR_KEY, create_containers=True)


def _accepted(outcome, records: int) -> None:
    if outcome.status != "ACCEPTED" or outcome.record_count != records:
        raise RuntimeError(f"not accepted as sent: {outcome.as_dict()}")


def run(
    backend: str, endpoint: str, stage: str, batches: int, records: int, profile: Path | None, inline: bool = False
) -> dict[str, float]:
    """Run the stages up to `stage`; each kind's CPU milliseconds a record, by kind."""
    from backends.cosmos.connection import WriterPool

    pooled, thresholds = WriterPool.each, gc.get_threshold()
    if profile or inline:  # the writers inline: cProfile sees every layer in the one thread it follows, and
        # the instructions counted do not depend on how the threads took turns
        WriterPool.each = lambda self, work, items: [work(item) for item in items]  # type: ignore[method-assign]
    try:
        return _stages(backend, endpoint, stage, batches, records, profile)
    finally:  # as they were, for whatever runs next in this process (a test's)
        WriterPool.each = pooled  # type: ignore[method-assign]
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _stages(
    backend: str, endpoint: str, stage: str, batches: int, records: int, profile: Path | None
) -> dict[str, float]:
    from triggers.garbage_collection import set_for_requests

    store_id = catalogue.profile_for(CURRENCY).store_id
    bodies = generate.batch_bodies(batches + 1, records, store_id=store_id, tag="I")
    with tempfile.TemporaryDirectory() as work:
        service = harness.set_up(_storage(backend, endpoint, Path(work)), CURRENCY, store_id)
        set_for_requests()  # as the worker runs (triggers/garbage_collection.py)
        # Every body built before anything is measured, whatever the stage: the same work in every run.
        sent = {
            "new": bodies,
            "later": [later_versions(body, version=2, days=0, seq=100 + index) for index, body in enumerate(bodies)],
            "moves": [later_versions(body, version=3, days=1, seq=200 + index) for index, body in enumerate(bodies)],
        }
        for kind in sent.values():  # warm-up: connections, caches, every path's first call
            _accepted(service.post_trade_records(kind[0]), records)
        cpu: dict[str, float] = {}
        for kind in STAGES[1 : STAGES.index(stage)]:
            began = time.process_time()
            for body in sent[kind][1:]:
                _accepted(service.post_trade_records(body), records)
            cpu[kind] = (time.process_time() - began) * 1000 / (batches * records)
        # CPU time of this process (the emulator's is its own), not the time waited for its answers.
        profiler = cProfile.Profile(time.process_time) if profile and stage in sent else None
        if profiler:
            profiler.enable()
        began = time.process_time()
        for body in sent.get(stage, [b""])[1:]:
            _accepted(service.post_trade_records(body), records)
        if stage in sent:
            cpu[stage] = (time.process_time() - began) * 1000 / (batches * records)
        if profiler and profile:
            profiler.disable()
            profiler.dump_stats(profile)
        close = getattr(service.storage, "close", None)
        if close is not None:
            close()
        return cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("azure", "sqlite"), default="azure")
    parser.add_argument("--endpoint", default="", help="a running Cosmos DB emulator's (for --backend azure)")
    parser.add_argument("--stage", choices=STAGES, default="moves")
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--profile", type=Path)
    parser.add_argument("--inline", action="store_true", help="the writers in this thread, one after the other")
    args = parser.parse_args(argv)
    cpu = run(args.backend, args.endpoint, args.stage, args.batches, args.records, args.profile, args.inline)
    for kind, ms in cpu.items():
        print(f"{args.backend} {kind}: {ms:.4f} ms of CPU a record ({args.batches} batches of {args.records})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
