"""The capacity model (decision 0059): what a chain of 10,000 stores x 2,000 transactions a store-day needs.

`python -m bench.capacity` (or `make capacity`) MEASURES the per-request costs here, then computes the
chain's needs from them (bench/capacity_model.py) and prints one table:

- on the embedded path (SQLite): CPU time of an accept of a 500-record batch and of the reconciliation of
  a 2,000-record store-day, the bytes a record adds to the database, the rate limiter's count_request;
- over the Cosmos DB adapter, on the emulator: every request of those same operations (and of a resend,
  a next version, a version that moves a record, a daily close, a request's admission), priced by the
  documented cost model (bench/request_charges.py: the emulator reports a fixed charge of 1), the bytes
  stored per record and per close, and the queue messages a close sends.

`--quick` measures smaller batches and days once (a smoke test, tests/toolchain/test_capacity.py);
`--json FILE` also writes every figure. Figures are taken on whatever machine runs it: CPU times are
indicative (a shared machine slows them), request counts and item sizes are exact.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

import orjson

from bench import capacity_model, generate, harness, reconciliation
from bench.request_charges import RequestLog

DAY = generate.DEFAULT_DATE
T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Sizes:
    batch: int  # records per accept
    day: int  # records of the reconciled store-day
    repeat: int  # timed repetitions


FULL = Sizes(batch=500, day=2_000, repeat=5)
QUICK = Sizes(batch=50, day=200, repeat=1)


class CountingQueue(harness.NullQueue):
    """The delayed queue of the daily close use case, counting what it is asked to send."""

    def __init__(self) -> None:
        self.sent = 0

    def send(self, body: str, delay_seconds: int) -> None:
        self.sent += 1

    def send_to_poison(self, body: bytes) -> None:
        raise AssertionError("a daily close sends nothing to the poison queue")


def _cpu_and_wall(call: Callable[[], T]) -> tuple[float, float, T]:
    cpu, wall = time.process_time(), time.perf_counter()
    result = call()
    return (time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000, result


def _accepted(outcome, records: int) -> None:
    if outcome.http_status not in (200, 202) or outcome.record_count != records:
        raise RuntimeError(f"the batch was not accepted: {outcome.as_dict()}")


def _changed(body: bytes, *, version: int, business_date: dt.date | None = None, batch_seq: int) -> bytes:
    """The same records as a next version (later last_modified_at), optionally moved to another date."""
    batch = orjson.loads(body)
    batch["batch_id"] = str(uuid.uuid4())
    batch["batch_seq"] = batch_seq
    if business_date is not None:
        batch["business_date"] = business_date.isoformat()
    for record in batch["trade_records"]:
        record["version"] = version
        modified = dt.datetime.fromisoformat(record["last_modified_at"]) + dt.timedelta(minutes=version)
        record["last_modified_at"] = modified.isoformat().replace("+00:00", "Z")
        if business_date is not None:
            record["business_date"] = business_date.isoformat()
    return orjson.dumps(batch)


def _resent(body: bytes) -> bytes:
    batch = orjson.loads(body)
    batch["batch_id"] = str(uuid.uuid4())
    batch["batch_seq"] += 100
    return orjson.dumps(batch)


def measure_embedded(sizes: Sizes, tmp: Path) -> dict:
    """CPU per accept and per reconciliation, bytes per record and the rate limiter, on SQLite."""
    service = harness.open_service(tmp / "sqlite")
    database = tmp / "sqlite" / "pos.sqlite3"
    bodies = generate.batch_bodies(sizes.repeat + 1, sizes.batch, tag="C")
    accept_cpu, accept_wall = [], []
    before = _database_bytes(database)
    for index, body in enumerate(bodies):
        cpu, wall, outcome = _cpu_and_wall(partial(service.post_trade_records, body))
        _accepted(outcome, sizes.batch)
        if index:  # the first is a warm-up
            accept_cpu.append(cpu)
            accept_wall.append(wall)
    bytes_per_record = (_database_bytes(database) - before) / (len(bodies) * sizes.batch)
    request, _ = reconciliation.load_store_day(service, sizes.day, DAY + dt.timedelta(days=1), seed=3)
    from reconcile.service import reconcile

    recon_cpu = []
    for _ in range(sizes.repeat + 1):
        cpu, _, result = _cpu_and_wall(lambda: reconcile(service.storage, request))
        if result is None or result.status != "MATCHED":
            raise RuntimeError(f"the store-day did not reconcile to MATCHED: {result}")
        recon_cpu.append(cpu)
    limiter_ms = _count_request_ms(service.storage, service.partner.partner_id, 200)
    return {
        "batch_records": sizes.batch,
        "accept_cpu_ms": statistics.median(accept_cpu),
        "accept_wall_ms": statistics.median(accept_wall),
        "day_records": sizes.day,
        "reconcile_cpu_ms": statistics.median(recon_cpu[1:]),
        "bytes_per_record": bytes_per_record,
        "count_request_ms": limiter_ms,
    }


def _database_bytes(database: Path) -> int:
    return sum(path.stat().st_size for path in database.parent.glob(database.name + "*"))


def _count_request_ms(storage, partner_id: str, calls: int) -> float:
    window = int(time.time()) // 60 * 60 + 3_600  # a window of its own, not the service's
    started = time.perf_counter()
    for _ in range(calls):
        storage.count_request(partner_id, window)
    return (time.perf_counter() - started) * 1000 / calls


def measure_cosmos(sizes: Sizes, tmp: Path) -> dict:
    """Every Cosmos DB request of the same operations, on the emulator, and what they cost."""
    from backends.cosmos.storage import CosmosStorage
    from devhost.cosmos_emulator import start_cosmos_emulator

    emulator = start_cosmos_emulator(tmp / "cosmos-emulator.log")
    storage = None
    try:
        database = f"capacity-{uuid.uuid4().hex[:8]}"
        storage = CosmosStorage(emulator.endpoint, database, key=emulator.key, create_containers=True)
        return _cosmos_costs(harness.set_up(storage), sizes)
    finally:
        if storage is not None:
            storage.close()
        emulator.stop()


def _cosmos_costs(service: harness.Service, sizes: Sizes) -> dict:
    from ingest.access import new_key
    from ingest.daily_close import post_daily_close
    from reconcile.service import reconcile

    storage, partner = service.storage, service.partner
    key = new_key()
    storage.add_key(partner.partner_id, key.key_id, key.key_hash, dt.datetime.now(dt.UTC))
    warm_up, body = generate.batch_bodies(2, sizes.batch, tag="N")
    _accepted(service.post_trade_records(warm_up), sizes.batch)  # connections and caches, not measured
    figures: dict = {"batch_records": sizes.batch, "day_records": sizes.day}
    with RequestLog() as log:
        cpu, wall, outcome = _cpu_and_wall(lambda: service.post_trade_records(body))
        _accepted(outcome, sizes.batch)
        figures["new"] = _priced(log, sizes.batch, cpu_ms=cpu, wall_ms=wall)
        figures["new"]["stored_bytes_per_record"] = log.written_bytes("trade-records") / sizes.batch
        figures["new"]["record_requests"] = sum(
            1 for request in log.requests if request.container == "trade-records" and request.operation != "query_items"
        )
        steps = {
            "resend_new_batch_id": _resent(body),
            "next_version_same_day": _changed(body, version=2, batch_seq=2),
            "next_version_other_day": _changed(body, version=3, business_date=DAY + dt.timedelta(days=7), batch_seq=1),
        }
        for name, changed in steps.items():
            log.clear()
            cpu, wall, outcome = _cpu_and_wall(partial(service.post_trade_records, changed))
            _accepted(outcome, sizes.batch)
            figures[name] = _priced(log, sizes.batch, cpu_ms=cpu, wall_ms=wall)
        request, _ = reconciliation.load_store_day(service, sizes.day, DAY + dt.timedelta(days=1), seed=3)
        log.clear()
        cpu, wall, result = _cpu_and_wall(lambda: reconcile(storage, request))
        if result is None or result.status != "MATCHED":
            raise RuntimeError(f"the store-day did not reconcile to MATCHED on Cosmos DB: {result}")
        figures["reconcile"] = _priced(log, sizes.day, cpu_ms=cpu, wall_ms=wall)
        results = [r.size for r in log.requests if r.container == "daily-closes" and r.operation == "replace_item"]
        figures["reconcile"]["reconciled_close_bytes"] = max(results, default=0)
        records = generate.trade_records(2, store_id=service.store_id, business_date=DAY + dt.timedelta(days=20))
        queue = CountingQueue()
        close = generate.daily_close_body(records, batch_count=1, currency=service.currency)
        log.clear()
        outcome = post_daily_close(storage, queue, partner, close, 0)
        if outcome.http_status != 202:
            raise RuntimeError(f"the daily close was not accepted: {outcome.as_dict()}")
        figures["close"] = _priced(log, 1) | {
            "queue_messages": queue.sent,
            "stored_bytes": log.written_bytes("daily-closes"),
        }
        log.clear()
        storage.find_key(key.key_hash)
        storage.get_partner(partner.partner_id)
        figures["key_and_partner"] = _priced(log, 1)
        log.clear()
        window = int(time.time()) // 60 * 60
        storage.count_request(partner.partner_id, window)  # the window's first request creates its item
        log.clear()
        started = time.perf_counter()
        calls = 20
        for _ in range(calls):
            storage.count_request(partner.partner_id, window)
        figures["count_request"] = _priced(log, calls) | {"ms": (time.perf_counter() - started) * 1000 / calls}
    return figures


def _priced(log: RequestLog, per: int, **extra) -> dict:
    counts = {f"{container} {operation} {status}": n for (container, operation, status), n in log.counts().items()}
    ru_by: dict[str, float] = {}
    for request in log.requests:
        name = f"{request.container} {request.operation}"
        ru_by[name] = ru_by.get(name, 0.0) + request.ru
    return {
        "requests": len(log.requests),
        "ru": log.total_ru(),
        "ru_per": log.total_ru() / per,
        "emulator_reported_charge": sum(request.emulator_charge for request in log.requests),
        "by_request": dict(sorted(counts.items())),
        "ru_by_operation": dict(sorted(ru_by.items())),
        **extra,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.capacity", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small batches and days, measured once")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    parser.add_argument("--markdown", action="store_true", help="the table as Markdown (for docs/performance.md)")
    parser.add_argument("--measured", type=Path, help="compute from the measurements of an earlier --json file")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.measured:
        measured = orjson.loads(args.measured.read_bytes())["measured"]
    else:
        with tempfile.TemporaryDirectory(prefix="capacity-") as folder:
            tmp = Path(folder)
            measured = {"embedded": measure_embedded(sizes, tmp), "cosmos": measure_cosmos(sizes, tmp)}
    costs = capacity_model.Costs.of(measured)
    plan = capacity_model.plan(costs, capacity_model.Chain(), capacity_model.Prices())
    print(capacity_model.render(costs, plan, markdown=args.markdown))
    pushed = capacity_model.plan(costs, capacity_model.Chain().pushed(), capacity_model.Prices())["busiest_hour"]
    print(
        f"\nResults as webhooks instead of 3 status reads a close: {pushed['requests/s']:.1f} requests/s and "
        f"{pushed['Cosmos DB RU/s']:,.0f} RU/s at the busiest hour (decision 0107)."
    )
    if args.json:
        args.json.write_bytes(
            orjson.dumps(
                {"measured": measured, "costs": dataclasses.asdict(costs), "plan": plan}, option=orjson.OPT_INDENT_2
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
