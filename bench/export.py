"""Benchmark: the Parquet export (export/) of one 10,000-record store-day and of a month of 100 stores
(quick: 1,000 records; 3 stores x 3 days), each against its floor: pyarrow writing the same tables from memory
(the service also reads the day from SQLite, parses the documents and builds the tables). The store-day's
time split into its stages: reading its pages, building the tables (the rest is writing, the floor's work); and
against the least export of its stored documents, the floor its target is set against (decision 0131).

`export_cosmos` (bench.run --only export_cosmos): the same store-day on the Cosmos DB emulator, once."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from bench import generate, harness
from bench.measure import Config, fresh, ms, ratio, summary, timed
from bench.reconciliation import load_store_day

MONTH_DAYS = 30
MONTH_RECORDS_PER_DAY = 20
# The month has no target and one round (service and floor) takes about 50 s: 3 rounds, not BENCH_REPEAT's 15,
# which made it 13 of make bench's 20 minutes.
MONTH_REPEAT = 3
# On SQLite: against the least export of the documents as stored (SQLite's read of them, Arrow's JSON reader,
# the writer), decision 0131. Against the writer alone it is reported beside, with no target.
STORED_FORM_TARGET = 1.5
# From Cosmos DB: against the SDK's own read of the same items, the floor the emulator allows.
COSMOS_READ_TARGET = 3.0


def _reconciled(service: harness.Service, size: int, business_date: dt.date, seed: int) -> None:
    from reconcile.service import reconcile

    request, _ = load_store_day(service, size, business_date, seed)
    result = reconcile(service.storage, request)
    if result is None or result.status != "MATCHED":
        raise RuntimeError(f"the bench store-day did not reconcile: {result}")


def _floor(tables_by_day: list[dict]) -> int:
    """pyarrow alone: the same tables, already in memory, written as the same Parquet files."""
    from export.tables import parquet_bytes

    return sum(len(parquet_bytes(table)) for tables in tables_by_day for table in tables.values())


def _floor_side_by_side(tables_by_day: list[dict]) -> int:
    """The same, each day's four files encoded side by side on the export's threads, as the service does
    (decision 0117): the writer's floor with the machine's two cores."""
    from export.pool import EXPORT_THREADS
    from export.tables import parquet_bytes

    return sum(sum(map(len, EXPORT_THREADS.map(parquet_bytes, tables.values()))) for tables in tables_by_day)


def _stored_form_floor(service: harness.Service, days: list, tables_by_day: list[dict]) -> int:
    """The least export of the stored documents: the storage's read of each day's documents, Arrow's JSON
    reader over them in one call (its own threads) with the fields the export takes, then the writer's floor."""
    import pyarrow as pa
    import pyarrow.json as pj

    from export.documents import WITH_TEXTS

    options = pj.ParseOptions(explicit_schema=WITH_TEXTS, unexpected_field_behavior="ignore")
    for partner_id, day in days:
        pages = service.storage.store_day_documents(partner_id, day.store_id, day.business_date)
        data = b"\n".join([document for page in pages for document in page.documents] + [b""])
        pj.read_json(pa.BufferReader(data), parse_options=options)
    return _floor(tables_by_day)


def _tables(service: harness.Service, days: list) -> list[dict]:
    from export.store_days import resolution_of
    from export.tables import store_day_tables

    resolution = resolution_of(service.storage, service.partner.partner_id)
    tables = []
    for partner_id, day in days:
        close = service.storage.get_closed_day(partner_id, day.store_id, day.business_date)
        records = service.storage.store_day_documents(partner_id, day.store_id, day.business_date)
        tables.append(store_day_tables(close, records, resolution))
    return tables


def _stages(service: harness.Service, days: list) -> dict[str, float]:
    """The export's stages, in seconds: reading the days' pages, and building their tables from them."""
    from export.store_days import resolution_of
    from export.tables import store_day_tables

    storage = service.storage
    resolution = resolution_of(storage, service.partner.partner_id)
    read_s = tables_s = 0.0
    for partner_id, day in days:
        close = storage.get_closed_day(partner_id, day.store_id, day.business_date)
        reading = storage.store_day_documents(partner_id, day.store_id, day.business_date)
        seconds, pages = timed(partial(list, reading))
        read_s += seconds
        tables_s += timed(partial(store_day_tables, close, pages, resolution))[0]
    return {"read": read_s, "tables": tables_s}


@dataclass
class SecondFloor:
    """A floor of the store-day timed in the same rounds beside the writer's, with the target against it."""

    name: str
    call: Callable[[list[dict]], object]  # given the days' tables
    target: float


def _measure(
    cfg: Config,
    service: harness.Service,
    days: list,
    out: Path,
    stages: bool = False,
    second: SecondFloor | None = None,
    repeat: int | None = None,
) -> dict:
    from backends.export_destinations import LocalFolder
    from export.store_days import export_days

    tables = _tables(service, days)
    samples: dict[str, list[float]] = {
        "service": [],
        "floor": [],
        "floor_side_by_side": [],
        "read": [],
        "tables": [],
        "second": [],
    }
    exported = None
    for index in range((repeat or cfg.repeat) + 1):
        fresh()
        service_s, exported = timed(partial(export_days, service.storage, LocalFolder(out), days))
        fresh()
        floor_s, _ = timed(partial(_floor, tables))
        parts = _stages(service, days) if stages else {}
        if stages:
            fresh()
            parts["floor_side_by_side"] = timed(partial(_floor_side_by_side, tables))[0]
        if second is not None:
            fresh()
            parts["second"] = timed(partial(second.call, tables))[0]
        if index:  # the first round is a warm-up
            samples["service"].append(ms(service_s))
            samples["floor"].append(ms(floor_s))
            for name, seconds in parts.items():
                samples[name].append(ms(seconds))
    service_summary, floor_summary = summary(samples["service"]), summary(samples["floor"])
    assert exported is not None and exported.days == len(days)
    return {
        "store_days": exported.days,
        "files": exported.files,
        "rows": exported.rows,
        "bytes": exported.bytes,
        "service": service_summary,
        "floor": floor_summary,
        "ratio": ratio(service_summary["median_ms"], floor_summary["median_ms"]),
        **(_against_side_by_side(service_summary, summary(samples["floor_side_by_side"])) if stages else {}),
        **({"stages": {name: summary(samples[name]) for name in ("read", "tables")}} if stages else {}),
        **(_against(second, service_summary, summary(samples["second"])) if second is not None else {}),
    }


def _against_side_by_side(service: dict, side_by_side: dict) -> dict:
    return {
        "floor_side_by_side": side_by_side,
        "ratio_to_side_by_side": ratio(service["median_ms"], side_by_side["median_ms"]),
    }


def _against(second: SecondFloor, service: dict, floor: dict) -> dict:
    return {
        second.name: floor,
        f"ratio_to_{second.name}": ratio(service["median_ms"], floor["median_ms"]),
        f"{second.name}_target": second.target,
    }


def _sdk_read(storage, partner_id: str, day, tables_by_day: list[dict]) -> int:
    """The azure-cosmos SDK's own read of the store-day's record items, as the export's query names them:
    its pages consumed, nothing done with them."""
    del tables_by_day  # the read alone
    from backends.cosmos.exports import DAY_DOCUMENTS
    from backends.cosmos.keys import day_key

    pk = day_key(partner_id, day.store_id, day.business_date.isoformat())
    items = storage._containers.trade_records.query_items(
        DAY_DOCUMENTS, parameters=[{"name": "@pk", "value": pk}], partition_key=pk
    )
    return sum(1 for _ in items)


def run(cfg: Config, tmp: Path) -> dict:
    from core.records import StoreDay

    big = 1_000 if cfg.quick else 10_000
    day_service = harness.open_service(tmp / "export-day")
    _reconciled(day_service, big, generate.DEFAULT_DATE, cfg.seed)
    partner_id = day_service.partner.partner_id
    one_day = [(partner_id, StoreDay(day_service.store_id, generate.DEFAULT_DATE))]

    stores, dates = (3, 3) if cfg.quick else (100, MONTH_DAYS)
    month_days = []
    month_service = None
    for number in range(stores):
        month_service = harness.open_service(tmp / "export-month", store_id=f"S{number:03d}")
        for offset in range(dates):
            business_date = generate.DEFAULT_DATE + dt.timedelta(days=offset)
            _reconciled(month_service, MONTH_RECORDS_PER_DAY, business_date, cfg.seed + number)
            month_days.append((partner_id, StoreDay(month_service.store_id, business_date)))
    assert month_service is not None
    return {
        "floor_explained": "pyarrow writing the same four tables per store-day from memory, as Parquet "
        "(zstd) into bytes; the service also reads each day from SQLite, parses its documents, builds "
        "the tables and writes the files to a folder. The store-day's stored-form floor: SQLite's read of its "
        "documents, Arrow's JSON reader over them in one call, then the same writing",
        "store_day": {
            "records": big,
            **_measure(
                cfg,
                day_service,
                one_day,
                tmp / "out-day",
                stages=True,
                second=SecondFloor(
                    "stored_form_floor", partial(_stored_form_floor, day_service, one_day), STORED_FORM_TARGET
                ),
            ),
        },
        "month": {
            "stores": stores,
            "days": dates,
            "records_per_day": MONTH_RECORDS_PER_DAY,
            **_measure(cfg, month_service, month_days, tmp / "out-month", repeat=min(cfg.repeat, MONTH_REPEAT)),
        },
    }


def run_cosmos(cfg: Config, tmp: Path) -> dict:
    """The 10,000-record store-day (quick: 1,000) exported from the Cosmos DB emulator, and its stages."""
    from backends.cosmos.storage import CosmosStorage
    from core.records import StoreDay
    from devhost.cosmos_emulator import start_cosmos_emulator

    big = 1_000 if cfg.quick else 10_000
    emulator = start_cosmos_emulator(tmp / "export-cosmos-emulator.log")
    storage = None
    try:
        storage = CosmosStorage(
            emulator.endpoint, f"export-{uuid.uuid4().hex[:8]}", key=emulator.key, create_containers=True
        )
        service = harness.set_up(storage)
        _reconciled(service, big, generate.DEFAULT_DATE, cfg.seed)
        one_day = [(service.partner.partner_id, StoreDay(service.store_id, generate.DEFAULT_DATE))]
        return {
            "floor_explained": "as the export benchmark's; the service reads the day from the Cosmos DB emulator "
            "(devhost/cosmos_emulator.py) on this machine",
            "store_day": {
                "records": big,
                **_measure(
                    cfg,
                    service,
                    one_day,
                    tmp / "out-cosmos",
                    stages=True,
                    second=SecondFloor("read_floor", partial(_sdk_read, storage, *one_day[0]), COSMOS_READ_TARGET),
                ),
            },
        }
    finally:
        if storage is not None:
            storage.close()
        emulator.stop()
