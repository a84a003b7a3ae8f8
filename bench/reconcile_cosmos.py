"""Reconciliation on Cosmos DB: the request units of reconciling a 2,000-record and a 100,000-record store-day
(quick: 200 and 2,000) on the emulator, priced by bench/request_charges.py, beside what summing the day's
records themselves costs (the query reconciliation made before the day's sums item, decision 0108). The
records are loaded without their documents (a few hundred bytes an item instead of 3.6 KB): reconciliation
never reads a document, and the emulator keeps every item in its memory."""

from __future__ import annotations

import dataclasses
import datetime as dt
import statistics
import uuid
from pathlib import Path
from unittest import mock

from bench import generate, harness, reconciliation
from bench.measure import Config
from bench.request_charges import RequestLog

FULL_SIZES = (2_000, 100_000)
QUICK_SIZES = (200, 2_000)
TARGET_RU = 50
# The emulator pages a query by running it again from the start for each page: summing a 100,000-record day
# takes it minutes. Beyond this many records the records' sum is not measured (it costs about 1 RU a record).
SUMMED_AT_MOST = 10_000


def _without_documents(rows: list) -> list:
    return [dataclasses.replace(row, document_json="") for row in rows]


def run(cfg: Config, tmp: Path) -> dict:
    from backends.cosmos import day_sums, keys
    from backends.cosmos.storage import CosmosStorage
    from devhost.cosmos_emulator import start_cosmos_emulator
    from reconcile.service import reconcile

    sizes = QUICK_SIZES if cfg.quick else FULL_SIZES
    emulator = start_cosmos_emulator(tmp / "reconcile-cosmos-emulator.log")
    storage = None
    results: dict = {
        "target_ru": TARGET_RU,
        "explained": "reconcile() of one store-day over the Cosmos DB adapter, every request priced from its "
        "operation, item size and indexed terms (bench/request_charges.py); beside it, the query that sums the "
        "day's records and batch entries themselves (what reconciliation read before the sums item)",
        "sizes": {},
    }
    try:
        storage = CosmosStorage(
            emulator.endpoint, f"reconcile-{uuid.uuid4().hex[:8]}", key=emulator.key, create_containers=True
        )
        service = harness.set_up(storage)
        for number, size in enumerate(sizes):
            business_date = generate.DEFAULT_DATE + dt.timedelta(days=number)
            with mock.patch.object(reconciliation, "_rows", _light_rows):
                request, _ = reconciliation.load_store_day(service, size, business_date, cfg.seed)
            runs = []
            for _ in range(max(2, min(cfg.repeat, 5))):
                with RequestLog() as log:
                    result = reconcile(storage, request)
                if result is None or result.status != "MATCHED":
                    raise RuntimeError(f"{size} records did not reconcile to MATCHED on Cosmos DB: {result}")
                runs.append((log.total_ru(), len(log.requests), log.counts()))
            pk = keys.day_key(service.partner.partner_id, service.store_id, business_date.isoformat())
            summed = RequestLog()
            if size <= SUMMED_AT_MOST:
                with summed:
                    day_sums.summed_day(storage._containers.trade_records, pk)
            ru = statistics.median(run[0] for run in runs)
            results["sizes"][str(size)] = {
                "records": size,
                "ru": ru,
                "ru_spread": [min(run[0] for run in runs), max(run[0] for run in runs)],
                "requests": runs[-1][1],
                "by_request": {" ".join(map(str, key)): n for key, n in sorted(runs[-1][2].items())},
                "summing_the_records_ru": summed.total_ru() if size <= SUMMED_AT_MOST else None,
                "met": ru <= TARGET_RU,
            }
    finally:
        if storage is not None:
            storage.close()
        emulator.stop()
    return results


_full_rows = reconciliation._rows


def _light_rows(records: list[dict], exponent: int) -> list:
    return _without_documents(_full_rows(records, exponent))
