"""Benchmark 1: accept a trade-records batch in-process, and its resend, against the floor (bench/floors.py:
orjson.loads plus one SQLite transaction of the same records); and where an accept's time goes, stage
by stage: the use case's own stages (ingest/write_flow.py), timed as it calls them on batches of their own.
Runs of the service and of its floor alternate, so that a noisy neighbour slows both."""

from __future__ import annotations

import contextlib
import importlib
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any
from unittest import mock

import orjson

from backends.sqlite.storage import SqliteStorage
from bench import floors, generate, harness
from bench.measure import Config, fresh, ms, ratio, summary, timed
from ingest.batches import BatchOutcome


def run(cfg: Config, tmp: Path) -> dict[str, Any]:
    service = harness.open_service(tmp / "accept")
    floor_db = floors.connect(tmp / "accept" / "floor.sqlite3")
    warmup = 2
    bodies = generate.batch_bodies(cfg.repeat + warmup, cfg.records, seed=cfg.seed, tag="A")
    service_ms, floor_ms, resend_ms, resend_floor_ms = [], [], [], []
    parse_ms, write_ms = [], []
    warnings = 0
    settled = partial(_settled, service)
    for index, body in enumerate(bodies):
        settled()
        if index % 2:  # alternate which goes first
            floor_s, _ = timed(partial(floors.accept, floor_db, body))
            settled()
            service_s, answer = timed(partial(service.post_trade_records, body))
        else:
            service_s, answer = timed(partial(service.post_trade_records, body))
            settled()
            floor_s, _ = timed(partial(floors.accept, floor_db, body))
        outcome = _outcome(answer)
        if outcome.http_status != 202 or outcome.record_count != cfg.records:
            raise RuntimeError(f"the service did not accept the batch: {outcome.as_dict()}")
        warnings += len(outcome.warnings)
        settled()
        again_s, answer = timed(partial(service.post_trade_records, body))
        again = _outcome(answer)
        if not again.replayed or again.warnings != outcome.warnings:  # the first answer's warnings (decision 0030)
            raise RuntimeError(f"a resend was not answered ALREADY_RECEIVED: {again.as_dict()}")
        settled()
        again_floor_s, known = timed(partial(floors.resend, floor_db, body))
        if not known:
            raise RuntimeError("the floor's resend did not find its marker")
        if index < warmup:
            continue
        service_ms.append(ms(service_s))
        floor_ms.append(ms(floor_s))
        resend_ms.append(ms(again_s))
        resend_floor_ms.append(ms(again_floor_s))
    # What the floor is made of: the parse alone and the write alone, on the last body.
    for _ in range(max(3, cfg.repeat // 3)):
        body = bodies[-1]
        seconds, document = timed(partial(orjson.loads, body))
        parse_ms.append(ms(seconds))
    scratch = floors.connect(tmp / "accept" / "floor-write.sqlite3")

    def write(rows: list[tuple[str, str, str]]) -> None:
        scratch.execute("BEGIN IMMEDIATE")
        scratch.executemany("INSERT INTO records VALUES (?, ?, ?)", rows)
        scratch.execute("COMMIT")

    for body in bodies[-max(3, cfg.repeat // 3) :]:
        document = orjson.loads(body)
        rows = [
            ("bench", record["trade_record_id"], orjson.dumps(record).decode()) for record in document["trade_records"]
        ]
        write_ms.append(ms(timed(partial(write, rows))[0]))
    stages = _accept_stages(service, cfg, max(3, cfg.repeat // 3))
    service_summary, floor_summary = summary(service_ms), summary(floor_ms)
    resend_summary, resend_floor_summary = summary(resend_ms), summary(resend_floor_ms)
    return {
        "records": cfg.records,
        "body_bytes": len(bodies[-1]),
        "warnings": warnings,
        "service": service_summary,
        "floor": floor_summary,
        "ratio": ratio(service_summary["median_ms"], floor_summary["median_ms"]),
        "floor_parts": {"orjson_loads": summary(parse_ms), "sqlite_insert_json_text": summary(write_ms)},
        "stages": stages,
        "resend": {
            "service": resend_summary,
            "floor": resend_floor_summary,
            "fraction_of_first_send": ratio(resend_summary["median_ms"], service_summary["median_ms"]),
            "ratio": ratio(resend_summary["median_ms"], resend_floor_summary["median_ms"]),
        },
    }


def _outcome(answer: object) -> BatchOutcome:
    if not isinstance(answer, BatchOutcome):
        raise TypeError(f"the use case answered {answer!r}")
    return answer


def _settled(service: harness.Service) -> None:
    """Before a timed call: garbage collected, and the service's checkpoint done. The service checkpoints
    SQLite's log in a thread of its own after each write (backends/sqlite/database.py): waited for here, it
    does not run inside the next timed call, the floor's or its own. The floor checkpoints inside its
    commits, as a minimal server does (decision 0061)."""
    fresh()
    storage = service.storage
    assert isinstance(storage, SqliteStorage)  # the benchmark's service (harness.open_service)
    with storage.db.read() as connection:  # FULL waits for a checkpoint under way, then finishes it
        connection.execute("PRAGMA wal_checkpoint(FULL)")


# Where the storage of the service is the owner of a stage.
STORAGE = "storage"
# (label, owner, attribute): the stages of post_trade_records, each timed as the use case calls it (the
# attribute of the module or of the service's storage, wrapped for the runs): its prologue, reads, checks and
# save (ingest/write_flow.py), and some of what each does ("prologue: ...", "checks: ..."). A stage the use
# case no longer calls is timed at 0 ms and the test of the benchmark fails; a label starting with "store"
# is compared with the floor's insert (bench/report.py), the others with its parse.
STAGES: list[tuple[str, str, str]] = [
    (
        "prologue (resend look-up, the one parse, the store's master data, mapping and directions)",
        "ingest.trade_records",
        "open_trade_records",
    ),
    ("prologue: the one decode (msgspec, ingest/one_parse.py)", "ingest.trade_records", "read_batch"),
    ("prologue: bulk checks (places of the store's currency, timestamps)", "ingest.one_parse", "bulk_checks"),
    ("prologue: I-JSON: repeated names, by counting colons", "ingest.one_parse", "no_repeated_names"),
    ("reads (payment ids in use, the day's batch_seqs, held days)", "ingest.trade_records", "read_needs"),
    ("checks, without storage (problems, warnings, rows)", "ingest.trade_records", "check"),
    (
        "checks: the records' problems (structure, currency, amounts, data protection)",
        "ingest.trade_records",
        "record_problems",
    ),
    ("checks: recording rules and data protection warnings", "ingest.trade_records", "per_record_warnings"),
    ("checks: rows and stored documents, and what the batch says", "ingest.trade_records", "stored_rows"),
    ("save (records and marker, days reopened)", "ingest.trade_records", "save"),
    ("store (save_trade_records, in save) into the accept's own store-day", STORAGE, "save_trade_records"),
]


@contextlib.contextmanager
def _timing_stages(service: harness.Service, seconds: dict[str, float]) -> Iterator[None]:
    """Each stage of STAGES wrapped so that its calls add their time to `seconds`, by label."""

    def timed_stage(label: str, call: Callable[..., Any]) -> Callable[..., Any]:
        def stage(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return call(*args, **kwargs)
            finally:
                seconds[label] += time.perf_counter() - started

        return stage

    with contextlib.ExitStack() as stack:
        for label, owner_name, attribute in STAGES:
            owner = service.storage if owner_name == STORAGE else importlib.import_module(owner_name)
            stack.enter_context(mock.patch.object(owner, attribute, timed_stage(label, getattr(owner, attribute))))
        yield


def _accept_stages(service: harness.Service, cfg: Config, runs: int) -> dict[str, dict[str, Any]]:
    """Where an accept's time goes: post_trade_records itself on `runs` new batches (of the accept's size,
    into its own store-day), each of its stages timed as the use case calls it (a diagnostic: medians; the
    stages inside another are part of its time)."""
    bodies = generate.batch_bodies(runs, cfg.records, seed=cfg.seed, tag="S")
    samples: dict[str, list[float]] = {label: [] for label, _, _ in STAGES}
    for body in bodies:
        seconds: dict[str, float] = defaultdict(float)
        _settled(service)
        with _timing_stages(service, seconds):
            outcome = _outcome(service.post_trade_records(body))
        if outcome.http_status != 202:
            raise RuntimeError(f"the service did not accept the batch: {outcome.as_dict()}")
        for label, _, _ in STAGES:
            samples[label].append(ms(seconds[label]))
    return {label: summary(figures) for label, figures in samples.items()}
