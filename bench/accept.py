"""Benchmark 1: accept a trade-records batch in-process, and its resend, against the floor (bench/floors.py:
orjson.loads plus one SQLite transaction of the same records); and where an accept's time goes, stage
by stage. Runs of the service and of its floor alternate, so that a noisy neighbour slows both."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path

import orjson

from bench import floors, generate, harness
from bench.measure import Config, fresh, ms, ratio, summary, timed
from core.records import BatchMarker, TradeRecordRow


def run(cfg: Config, tmp: Path) -> dict:
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
            service_s, outcome = timed(partial(service.post_trade_records, body))
        else:
            service_s, outcome = timed(partial(service.post_trade_records, body))
            settled()
            floor_s, _ = timed(partial(floors.accept, floor_db, body))
        if outcome.http_status != 202 or outcome.record_count != cfg.records:
            raise RuntimeError(f"the service did not accept the batch: {outcome.as_dict()}")
        warnings += len(outcome.warnings)
        settled()
        again_s, again = timed(partial(service.post_trade_records, body))
        if not again.replayed or again.warnings != outcome.warnings:  # the first answer's warnings (issue 32)
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
    stages = _accept_stages(service, bodies[-1], max(3, cfg.repeat // 3))
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


def _settled(service: harness.Service) -> None:
    """Before a timed call: garbage collected, and the service's checkpoint done. The service checkpoints
    SQLite's log in a thread of its own after each write (backends/sqlite/database.py): waited for here, it
    does not run inside the next timed call, the floor's or its own. The floor checkpoints inside its
    commits, as a minimal server does (docs/decisions.md)."""
    fresh()
    with service.storage.db.read() as connection:  # FULL waits for a checkpoint under way, then finishes it
        connection.execute("PRAGMA wal_checkpoint(FULL)")


# Batches a store-day holds before the store stage's first timed run (the accept's own day ends with ~17).
BUSY_DAY_BATCHES = 10


def _busy_store_day(
    service: harness.Service, marker: BatchMarker, rows: list[TradeRecordRow], runs: int
) -> Iterator[tuple[BatchMarker, list[TradeRecordRow]]]:
    """The store stage's (marker, rows) for each run: the batch's rows as new records, into one store-day (of a
    partner of its own) that already holds BUSY_DAY_BATCHES batches and grows run after run, as the accept's
    own does. Each run's trade_record_ids and payment_ids are greater than the previous run's, as ticket
    numbers grow through a day; an empty store-day would hide what the day's indexes cost."""
    partner_id = f"{harness.PARTNER_ID}-store-stage"

    def batch(number: int) -> tuple[BatchMarker, list[TradeRecordRow]]:
        prefix = f"R{number:04d}-"
        renamed = [
            replace(
                row,
                trade_record_id=prefix + row.trade_record_id,
                payment_ids=tuple(prefix + payment_id for payment_id in row.payment_ids),
            )
            for row in rows
        ]
        return replace(marker, partner_id=partner_id, batch_id=prefix + marker.batch_id), renamed

    for number in range(BUSY_DAY_BATCHES):
        service.storage.save_trade_records(*batch(number))
    return iter([batch(BUSY_DAY_BATCHES + run) for run in range(runs)])


def _accept_stages(service: harness.Service, body: bytes, repeat: int) -> dict[str, dict]:
    """Where an accept's time goes: each stage of post_trade_records timed alone on the same parsed batch
    (a diagnostic: medians; the whole accept is also the store, the marker and the look-ups)."""
    from core.money import currency_exponent
    from ingest.amounts import MoneyReader
    from ingest.batches import resend_key
    from ingest.data_protection import may_hold_card_numbers, protection_problems
    from ingest.one_parse import bulk_checks, no_repeated_names, read_batch, validated_once
    from ingest.trade_batches import meaning_of_records, trade_records_meaning
    from ingest.trade_records import _row, read_amounts, trade_records_marker
    from ingest.trade_rules import record_warnings
    from ingest.wire.requests import TradeRecordsBatch
    from ingest.wire.resend_keys import StoreDayKey

    store = service.storage.get_store(harness.PARTNER_ID, service.store_id)
    exponent = currency_exponent(store.currency)
    read, checked = read_batch(TradeRecordsBatch, body), read_batch(TradeRecordsBatch, body)
    assert read is not None and checked is not None
    colons = bulk_checks(checked.struct, exponent)  # the checks replace the timestamps: a batch of their own
    assert colons is not None
    # the batch a real accept holds: the fast path's Structs (the slow way's dataclasses cost otherwise)
    batch = validated_once(TradeRecordsBatch, body, read, exponent)
    assert batch is not None
    standard_of = service.storage.get_mapping(harness.PARTNER_ID).standard_code_of()
    known_payment_types = {"SALE", "REFUND", "DEPOSIT", "DEPOSIT_APPLIED", "ADJUSTMENT"}
    paths = [f"trade_records[{index}]" for index in range(len(batch.trade_records))]
    amounts = [
        read_amounts(path, record, MoneyReader(record.currency, exponent))
        for path, record in zip(paths, batch.trade_records, strict=True)
    ]
    rows = [_row(record, money) for record, money in zip(batch.trade_records, amounts, strict=True)]
    marker = trade_records_marker(harness.PARTNER_ID, batch, len(rows), body, trade_records_meaning(batch))
    store_runs = _busy_store_day(service, marker, rows, repeat)
    stages = {
        "the one decode (msgspec, ingest/one_parse.py)": lambda: read_batch(TradeRecordsBatch, body),
        "resend key from the decoded values": lambda: resend_key(
            body, StoreDayKey, read.values(StoreDayKey.model_fields)
        ),
        "the one decode and the bulk checks (places of the store's currency, timestamps)": lambda: bulk_checks(
            read_batch(TradeRecordsBatch, body).struct,  # type: ignore[union-attr]
            exponent,
        ),
        "I-JSON: repeated names, by counting colons": lambda: no_repeated_names(body, colons - read.left_out),
        "amounts: minor units (places checked in validation)": lambda: [
            read_amounts(path, record, MoneyReader(record.currency, exponent))
            for path, record in zip(paths, batch.trade_records, strict=True)
        ],
        "data protection (card numbers, member_id)": lambda: [
            protection_problems(path, record, store.country_code, may_hold_card_numbers=cards)
            for cards in [may_hold_card_numbers(batch.trade_records)]
            for path, record in zip(paths, batch.trade_records, strict=True)
        ],
        "recording rules (warnings)": lambda: [
            record_warnings(
                path,
                record,
                money,
                standard_of.get(record.source_transaction_type),
                known_payment_types,
                store.time_zone,
                store.workday_start,
            )
            for path, record, money in zip(paths, batch.trade_records, amounts, strict=True)
        ],
        "rows and stored documents, and what the batch says (its digest)": lambda: [
            _row(record, money, meaning)
            for meaning in [meaning_of_records(batch)]
            for record, money in zip(batch.trade_records, amounts, strict=True)
        ],
        f"store (save_trade_records) into a store-day of {BUSY_DAY_BATCHES}+ batches": lambda: (
            service.storage.save_trade_records(*next(store_runs))
        ),
    }
    figures = {}
    for name, stage in stages.items():
        samples = []
        for _ in range(repeat):
            _settled(service)
            samples.append(ms(timed(stage)[0]))
        figures[name] = summary(samples)
    return figures
