"""`make bench`: the service against the floor of the same work, measured in the same run (issue 7).

Every benchmark is a median over repeated runs and a ratio to its floor (bench/floors.py) on the
same data; runs of the service and of its floor alternate, so that a noisy neighbour slows both.
Prints a table and writes bench/results/latest.json (machine, date, settings, every figure and
every sample).

    python -m bench.run                 # the full run (BENCH_REPEAT=15 repetitions by default)
    python -m bench.run --quick         # one repetition, small sizes: a smoke test
    python -m bench.run --only accept,reconcile
    python -m bench.run --profile       # also pyinstrument and cProfile of accept and reconcile
                                        # into bench/results/profile-*.txt
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import hashlib
import http.client
import math
import os
import platform
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from bench import floors, generate, harness  # noqa: E402
from devhost.processes import free_port as _free_port

RESULTS_DIR = ROOT / "bench" / "results"
BENCHMARKS = ("accept", "http", "large", "reconcile", "import")


@dataclass(frozen=True)
class Config:
    quick: bool
    repeat: int  # accept and resend repetitions; 1k/10k reconciliations
    records: int  # records per batch
    http_requests_1: int  # requests of the single client
    http_requests_4: int  # requests of each of the 4 clients
    http_clients: int
    large_bytes: int
    large_repeat: int
    recon_sizes: tuple[int, ...]
    recon_repeat_largest: int
    import_repeat: int
    seed: int

    @classmethod
    def make(cls, quick: bool, repeat: int | None, seed: int) -> "Config":
        if quick:
            return cls(True, repeat or 1, 100, 2, 1, 4, 300_000, 1, (500, 1000, 2000), 1, 1, seed)
        repeat = repeat or int(os.environ.get("BENCH_REPEAT") or 15)
        return cls(False, repeat, 500, max(10, 2 * repeat), max(3, repeat // 2), 4, 5_000_000,
                   max(3, repeat // 3), (1_000, 10_000, 100_000), max(3, repeat // 3), max(3, repeat // 3), seed)


# --- measuring ---------------------------------------------------------------------------------------

def _ms(seconds: float) -> float:
    return seconds * 1000


def timed(call: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def summary(samples_ms: list[float]) -> dict:
    ordered = sorted(samples_ms)
    return {
        "median_ms": statistics.median(ordered),
        "p99_ms": ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)],
        "min_ms": ordered[0],
        "max_ms": ordered[-1],
        "n": len(ordered),
        "samples_ms": [round(value, 3) for value in samples_ms],
    }


def ratio(value: float, floor: float) -> float | None:
    return None if not floor else value / floor


def _rss_kib(pid: int | str = "self") -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a process, in KiB (Linux)."""
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(("VmRSS:", "VmHWM:")):
                name, amount = line.split(":")
                values[name] = int(amount.split()[0])
    return values


def _reset_peak_rss(pid: int | str = "self") -> bool:
    """Reset VmHWM to the current RSS (Linux: write 5 to clear_refs); False when not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as control:
            control.write("5")
        return True
    except OSError:
        return False


def _fresh() -> None:
    gc.collect()


def machine_info() -> dict:
    cpu = platform.processor() or ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        memory = int(Path("/proc/meminfo").read_text().splitlines()[0].split()[1]) // 1024
    versions = {}
    for module in ("pydantic", "pydantic_core", "orjson", "azure.functions"):
        with contextlib.suppress(Exception):
            versions[module] = __import__(module, fromlist=["__version__"]).__version__
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
    return {
        "cpu_model": cpu,
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "memory_mib": memory,
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "sqlite": sqlite3.sqlite_version,
        "versions": versions,
        "git_commit": commit.stdout.strip() or None,
        "git_dirty": bool(dirty.stdout.strip()),
        "load_average_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


# --- 1. accept a batch in-process, and its resend --------------------------------------------------

def bench_accept(cfg: Config, tmp: Path) -> dict:
    service = harness.open_service(tmp / "accept")
    floor_db = floors.connect(tmp / "accept" / "floor.sqlite3")
    warmup = 2
    bodies = generate.batch_bodies(cfg.repeat + warmup, cfg.records, seed=cfg.seed, tag="A")
    service_ms, floor_ms, resend_ms, resend_floor_ms = [], [], [], []
    parse_ms, write_ms = [], []
    warnings = 0
    for index, body in enumerate(bodies):
        _fresh()
        if index % 2:  # alternate which goes first
            floor_s, _ = timed(lambda: floors.accept(floor_db, body))
            _fresh()
            service_s, outcome = timed(lambda: service.post_trade_records(body))
        else:
            service_s, outcome = timed(lambda: service.post_trade_records(body))
            _fresh()
            floor_s, _ = timed(lambda: floors.accept(floor_db, body))
        if outcome.http_status != 202 or outcome.record_count != cfg.records:
            raise RuntimeError(f"the service did not accept the batch: {outcome.as_dict()}")
        warnings += len(outcome.warnings)
        _fresh()
        again_s, again = timed(lambda: service.post_trade_records(body))
        if not again.replayed or again.warnings:
            raise RuntimeError(f"a resend was not answered ALREADY_RECEIVED: {again.as_dict()}")
        _fresh()
        again_floor_s, known = timed(lambda: floors.resend(floor_db, body))
        if not known:
            raise RuntimeError("the floor's resend did not find its marker")
        if index < warmup:
            continue
        service_ms.append(_ms(service_s))
        floor_ms.append(_ms(floor_s))
        resend_ms.append(_ms(again_s))
        resend_floor_ms.append(_ms(again_floor_s))
    # What the floor is made of: the parse alone and the write alone, on the last body.
    for _ in range(max(3, cfg.repeat // 3)):
        body = bodies[-1]
        seconds, document = timed(lambda: orjson.loads(body))
        parse_ms.append(_ms(seconds))
    scratch = floors.connect(tmp / "accept" / "floor-write.sqlite3")
    for copy, body in enumerate(bodies[-max(3, cfg.repeat // 3):]):
        document = orjson.loads(body)
        rows = [("bench", record["trade_record_id"], orjson.dumps(record).decode()) for record in document["trade_records"]]

        def write():
            scratch.execute("BEGIN IMMEDIATE")
            scratch.executemany("INSERT INTO records VALUES (?, ?, ?)", rows)
            scratch.execute("COMMIT")
        write_ms.append(_ms(timed(write)[0]))
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


def _accept_stages(service: harness.Service, body: bytes, repeat: int) -> dict[str, dict]:
    """Where an accept's time goes: each stage of post_trade_records timed alone on the same parsed batch
    (a diagnostic: medians; the whole accept is also the store, the marker and the look-ups)."""
    from ingest import parsing
    from ingest.amounts import MoneyReader
    from ingest.data_protection import protection_problems
    from ingest.trade_records import _row, read_amounts
    from ingest.trade_rules import record_warnings
    from ingest.wire.requests import TradeRecordsBatch
    from ingest.wire.resend_keys import StoreDayKey

    batch = TradeRecordsBatch.model_validate_json(body)
    store = service.storage.get_store(harness.PARTNER_ID, service.store_id)
    standard_of = service.storage.get_mapping(harness.PARTNER_ID).standard_code_of()
    known_payment_types = {"SALE", "REFUND", "DEPOSIT", "DEPOSIT_APPLIED", "ADJUSTMENT"}
    paths = [f"trade_records[{index}]" for index in range(len(batch.trade_records))]
    amounts = [read_amounts(path, record, MoneyReader(record.currency))
               for path, record in zip(paths, batch.trade_records)]
    stages = {
        "batch_id look-up parse (resend check)": lambda: StoreDayKey.model_validate_json(body),
        "validation (model_validate_json)": lambda: TradeRecordsBatch.model_validate_json(body),
        "I-JSON second parse, unknown names": lambda: parsing.i_json_and_names(TradeRecordsBatch, body),
        "amounts: places, range, minor units": lambda: [
            read_amounts(path, record, MoneyReader(record.currency))
            for path, record in zip(paths, batch.trade_records)],
        "data protection (card numbers, member_id)": lambda: [
            protection_problems(path, record, store.country_code) for path, record in zip(paths, batch.trade_records)],
        "recording rules (warnings)": lambda: [
            record_warnings(path, record, money, standard_of.get(record.source_transaction_type), known_payment_types,
                            store.time_zone, store.workday_start)
            for path, record, money in zip(paths, batch.trade_records, amounts)],
        "rows and stored documents": lambda: [_row(record, money) for record, money in zip(batch.trade_records, amounts)],
    }
    figures = {}
    for name, stage in stages.items():
        samples = []
        for _ in range(repeat):
            _fresh()
            samples.append(_ms(timed(stage)[0]))
        figures[name] = summary(samples)
    return figures


# --- 2. the same over HTTP, and the large body's RSS --------------------------------------------


@contextlib.contextmanager
def _process(command: list[str], env: dict, port: int, log_path: Path, health: str):
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{command} exited:\n{log_path.read_text(errors='replace')[-4000:]}")
            with contextlib.suppress(OSError):
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                connection.request("GET", health)
                if connection.getresponse().status == 200:
                    connection.close()
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{command} did not start:\n{log_path.read_text(errors='replace')[-4000:]}")
            time.sleep(0.1)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _post_all(port: int, path: str, headers: dict, bodies: list[bytes], clients: int) -> dict:
    """POST the bodies from `clients` threads, each on one persistent connection; latencies and wall time."""
    share = [bodies[index::clients] for index in range(clients)]
    latencies: list[float] = []
    statuses: dict[int, int] = defaultdict(int)
    warnings = [0]
    errors: list[str] = []
    lock = threading.Lock()
    start = threading.Barrier(clients + 1)

    def client(mine: list[bytes]) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        connection.connect()
        start.wait()
        for body in mine:
            try:
                began = time.perf_counter()
                connection.request("POST", path, body, headers)
                response = connection.getresponse()
                answer = response.read()
                elapsed = time.perf_counter() - began
            except (OSError, http.client.HTTPException) as error:
                with lock:
                    errors.append(repr(error))
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
                continue
            with lock:
                latencies.append(_ms(elapsed))
                statuses[response.status] += 1
                if response.status == 202:
                    warnings[0] += len(orjson.loads(answer).get("warnings") or [])
                elif len(errors) < 5:
                    errors.append(answer[:500].decode(errors="replace"))
        connection.close()

    threads = [threading.Thread(target=client, args=(mine,)) for mine in share]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    return {"latencies_ms": latencies, "wall_s": wall, "statuses": dict(statuses), "warnings": warnings[0],
            "errors": errors}


def _http_figures(run: dict, records: int) -> dict:
    ok = run["statuses"].get(202, 0)
    return {**summary(run["latencies_ms"]), "records_per_s": ok * records / run["wall_s"] if run["wall_s"] else None,
            "wall_s": run["wall_s"], "statuses": run["statuses"], "warnings": run["warnings"],
            "errors": run["errors"][:5]}


def _large_over_http(port: int, path: str, headers: dict, bodies: list[bytes], pid: int) -> dict:
    """Each large body alone; the process's RSS before and its peak (VmHWM) during, per body."""
    samples = []
    for body in bodies:
        _reset_peak_rss(pid)
        before = _rss_kib(pid)
        run = _post_all(port, path, headers, [body], 1)
        after = _rss_kib(pid)
        if run["statuses"] != {202: 1} or run["warnings"]:
            raise RuntimeError(f"a large body was not accepted cleanly: {run}")
        samples.append({"latency_ms": run["latencies_ms"][0], "rss_before_kib": before["VmRSS"],
                        "rss_peak_kib": after["VmHWM"], "rss_after_kib": after["VmRSS"],
                        "peak_growth_x_body": (after["VmHWM"] - before["VmRSS"]) * 1024 / len(body)})
    return {"latency": summary([sample["latency_ms"] for sample in samples]),
            # The first large body meets a process that has only seen a small batch; later ones reuse the
            # memory the allocator kept from it, so their growth understates the need.
            "peak_growth_x_body": samples[0]["peak_growth_x_body"],
            "samples": samples}


def bench_http(cfg: Config, tmp: Path) -> dict:
    data = tmp / "http"
    service = harness.open_service(data)
    key = harness.issue_key(service.storage)
    count_1, count_4 = cfg.http_requests_1, cfg.http_requests_4 * cfg.http_clients
    warmup = 2
    bodies = generate.batch_bodies(warmup + count_1 + count_4, cfg.records, seed=cfg.seed, tag="H")
    small = generate.batch_bodies(1, 20, seed=cfg.seed, tag="S", first_seq=len(bodies) + 1)
    large = generate.batch_bodies(cfg.large_repeat, None, target_bytes=cfg.large_bytes, seed=cfg.seed, tag="L",
                                  first_seq=len(bodies) + 2)
    headers = {"Content-Type": "application/json", "x-functions-key": key}
    results: dict = {"records": cfg.records, "body_bytes": len(bodies[-1]), "large_body_bytes": len(large[0])}

    host_port = _free_port()
    env = {**os.environ, "POS_DATA_DIR": str(data), "PORT": str(host_port), "POS_CREATE_DEMO_PARTNER": "false",
           "RATE_LIMIT_PER_MINUTE": "0", "PYTHONUNBUFFERED": "1"}
    env.pop("APPLICATIONINSIGHTS_CONNECTION_STRING", None)
    floor_port = _free_port()
    floor_dir = tmp / "http-floor"
    floor_dir.mkdir()

    runs: dict = {"service": {}, "floor": {}}
    with _process([sys.executable, "-m", "devhost"], env, host_port, tmp / "host.log", "/pos/v1/health") as host, \
            _process([sys.executable, "-m", "bench.floor_server", str(floor_port), str(floor_dir)], env, floor_port,
                     tmp / "floor.log", "/") as floor:
        for name, port, path, pid in (("service", host_port, "/pos/v1/trade-records", host.pid),
                                      ("floor", floor_port, "/trade-records", floor.pid)):
            _post_all(port, path, headers, small, 1)  # a small warm-up, so that the large body meets a lean process
            runs[name]["large"] = _large_over_http(port, path, headers, large, pid)
            _post_all(port, path, headers, bodies[:warmup], 1)
        # Alternate service and floor in halves so that both meet the same neighbours.
        one = bodies[warmup:warmup + count_1]
        four = bodies[warmup + count_1:]
        targets = {"service": (host_port, "/pos/v1/trade-records"), "floor": (floor_port, "/trade-records")}
        for order, half in ((("service", "floor"), one[:len(one) // 2]), (("floor", "service"), one[len(one) // 2:])):
            for name in order:
                if half:
                    runs[name].setdefault("one", []).append(_post_all(*targets[name], headers, half, 1))
        for name in ("service", "floor"):
            runs[name]["four"] = _post_all(*targets[name], headers, four, cfg.http_clients)
        results["host_rss_end_kib"] = _rss_kib(host.pid)

    for name in ("service", "floor"):
        parts = runs[name]["one"]
        merged = {"latencies_ms": [value for part in parts for value in part["latencies_ms"]],
                  "wall_s": sum(part["wall_s"] for part in parts),
                  "statuses": {status: sum(part["statuses"].get(status, 0) for part in parts)
                               for part in parts for status in part["statuses"]},
                  "warnings": sum(part["warnings"] for part in parts),
                  "errors": [error for part in parts for error in part["errors"]]}
        results[name] = {"clients_1": _http_figures(merged, cfg.records),
                         f"clients_{cfg.http_clients}": _http_figures(runs[name]["four"], cfg.records),
                         "large": runs[name]["large"]}
    for clients in (1, cfg.http_clients):
        key_name = f"clients_{clients}"
        service, floor = results["service"][key_name], results["floor"][key_name]
        results[f"ratio_{key_name}"] = {"p50": ratio(service["median_ms"], floor["median_ms"]),
                                        "p99": ratio(service["p99_ms"], floor["p99_ms"]),
                                        "records_per_s": ratio(floor["records_per_s"] or 0, service["records_per_s"] or 0)}
    for name in ("service", "floor"):
        for key_name in ("clients_1", f"clients_{cfg.http_clients}"):
            figures = results[name][key_name]
            if figures["statuses"] != {202: figures["n"]} or figures["warnings"]:
                raise RuntimeError(f"HTTP {name} {key_name}: not every request was accepted cleanly: {figures}")
    return results


# --- 3. a large body in-process: latency and peak memory ---------------------------------------------

def _peak(call: Callable[[], object]) -> int:
    """tracemalloc's peak (bytes) during one call."""
    _fresh()
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _memory_probe(kind: str, data_dir: Path, body_path: Path) -> dict:
    """In a fresh interpreter (`--memory-probe`): warm up with a small batch, then the RSS before and the
    peak RSS (VmHWM, reset first) while one body is accepted by the service or by the floor."""
    body = body_path.read_bytes()
    small = generate.batch_bodies(1, 20, tag="W", first_seq=90_000)[0]  # a batch_seq of its own
    if kind == "service":
        service = harness.open_service(data_dir)
        call = service.post_trade_records
    else:
        connection = floors.connect(data_dir / "floor.sqlite3")
        call = lambda data: floors.accept(connection, data)  # noqa: E731
    call(small)
    _fresh()
    if not _reset_peak_rss():
        return {}
    before = _rss_kib()
    call(body)
    after = _rss_kib()
    return {"rss_before_kib": before["VmRSS"], "rss_peak_kib": after["VmHWM"], "rss_after_kib": after["VmRSS"],
            "peak_growth_x_body": (after["VmHWM"] - before["VmRSS"]) * 1024 / len(body)}


def _probe(kind: str, tmp: Path, body: bytes) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"probe-{kind}-", dir=tmp))
    body_path = work / "body.json"
    body_path.write_bytes(body)
    done = subprocess.run([sys.executable, "-m", "bench.run", "--memory-probe", kind, str(work), str(body_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(f"memory probe failed:\n{done.stderr[-3000:]}")
    return orjson.loads(done.stdout.strip().splitlines()[-1])


def bench_large(cfg: Config, tmp: Path) -> dict:
    service = harness.open_service(tmp / "large")
    floor_db = floors.connect(tmp / "large" / "floor.sqlite3")
    bodies = generate.batch_bodies(cfg.large_repeat + 3, None, target_bytes=cfg.large_bytes, seed=cfg.seed, tag="B")
    size = len(bodies[0])
    records = len(orjson.loads(bodies[0])["trade_records"])
    service_ms, floor_ms = [], []
    for index, body in enumerate(bodies[:cfg.large_repeat + 1]):
        _fresh()
        service_s, outcome = timed(lambda: service.post_trade_records(body))
        if outcome.http_status != 202 or outcome.warnings:
            raise RuntimeError(f"the large body was not accepted cleanly: {outcome.as_dict()}")
        _fresh()
        floor_s, _ = timed(lambda: floors.accept(floor_db, body))
        if index:  # the first is a warm-up
            service_ms.append(_ms(service_s))
            floor_ms.append(_ms(floor_s))
    service_traced = _peak(lambda: service.post_trade_records(bodies[-2]))
    floor_traced = _peak(lambda: floors.accept(floor_db, bodies[-2]))
    service_rss = _probe("service", tmp, bodies[-1])
    floor_rss = _probe("floor", tmp, bodies[-1])
    service_summary, floor_summary = summary(service_ms), summary(floor_ms)
    return {
        "body_bytes": size,
        "records": records,
        "service": service_summary,
        "floor": floor_summary,
        "ratio": ratio(service_summary["median_ms"], floor_summary["median_ms"]),
        "memory": {
            "service_tracemalloc_peak_x_body": service_traced / size,
            "floor_tracemalloc_peak_x_body": floor_traced / size,
            "tracemalloc_ratio": ratio(service_traced, floor_traced),
            "service_rss_peak_growth_x_body": service_rss.get("peak_growth_x_body"),
            "floor_rss_peak_growth_x_body": floor_rss.get("peak_growth_x_body"),
            "service_rss_probe": service_rss,
            "floor_rss_probe": floor_rss,
            "note": "tracemalloc sees Python allocations only (not pydantic-core's Rust heap nor SQLite's); "
                    "the RSS figure is the peak RSS growth (VmHWM reset just before) of a fresh interpreter "
                    "accepting the body once after a small warm-up batch, so it sees every allocation",
        },
    }


# --- 4. reconciliation of one store-day ----------------------------------------------------------------

def _rows(records: list[dict], exponent: int) -> list:
    """The stored form of each record, as the accept use case builds it (ingest/trade_records.py _row)."""
    from core.ports import TradeRecordRow

    rows = []
    for record in records:
        payments: dict[str, int] = defaultdict(int)
        for payment in record["payments"]:
            payments[payment["payment_type"]] += int(payment["amount"].replace(".", ""))
        rows.append(TradeRecordRow(
            trade_record_id=record["trade_record_id"], version=record["version"],
            last_modified_at=dt.datetime.fromisoformat(record["last_modified_at"]), store_id=record["store_id"],
            business_date=dt.date.fromisoformat(record["business_date"]),
            source_transaction_type=record["source_transaction_type"], item_rows=len(record["items"]),
            payment_rows=len(record["payments"]), total_minor=int(record["total_amount"].replace(".", "")),
            tax_minor=int(record["tax_amount"].replace(".", "")), tip_minor=int(record["tip_amount"].replace(".", "")),
            payments_minor=dict(payments), document_json=orjson.dumps(record).decode()))
    return rows


def load_store_day(service: harness.Service, size: int, business_date: dt.date, seed: int):
    """size records of one store-day saved in batches of 500 through SqliteStorage.save_trade_records,
    and a daily close with their control totals through the daily close use case; the reconcile request."""
    from core.ports import BatchMarker
    from ingest.daily_close import post_daily_close
    from reconcile.service import request_for

    exponent = generate.profile_for(service.currency).exponent
    everything = []
    for seq, start in enumerate(range(0, size, generate.BATCH_LIMIT), start=1):
        records = generate.trade_records(min(generate.BATCH_LIMIT, size - start), seed=seed, currency=service.currency,
                                         store_id=service.store_id, business_date=business_date, start=start)
        everything += records
        body = generate.dumps(generate.trade_batch(records, batch_seq=seq, seed=seed))
        marker = BatchMarker(service.partner.partner_id, generate.batch_uuid(seed, "recon", business_date, seq),
                             "trade-records", len(records), hashlib.sha256(body).hexdigest(),
                             dt.datetime.now(dt.timezone.utc), service.store_id, business_date, seq)
        if service.storage.save_trade_records(marker, _rows(records, exponent)).existing is not None:
            raise RuntimeError("the store-day was loaded before")
    batches = math.ceil(size / generate.BATCH_LIMIT)
    close = generate.daily_close_body(everything, batch_count=batches, currency=service.currency, seed=seed)
    outcome = post_daily_close(service.storage, harness.NullQueue(), service.partner, close, 0)
    if outcome.http_status != 202:
        raise RuntimeError(f"the daily close was not accepted: {outcome.as_dict()}")
    day = service.storage.get_closed_day(service.partner.partner_id, service.store_id, business_date)
    return request_for(service.partner.partner_id, day), generate.control_totals(everything, exponent)


def bench_reconcile(cfg: Config, tmp: Path) -> dict:
    from reconcile.service import reconcile

    service = harness.open_service(tmp / "reconcile")
    revenue_codes = sorted(code for code, (standard, _) in generate.MAPPING.items()
                           if standard in generate.REVENUE_STANDARD_CODES)
    floor_sql = floors.reconcile_sql(revenue_codes, generate.PAYMENT_DIRECTIONS)
    int_sql = floors.reconcile_int_sql(revenue_codes)
    floor_db = floors.connect(tmp / "reconcile" / "pos.sqlite3", schema=None)
    results: dict = {"sizes": {}, "floor_sql": floor_sql,
                     "floor_explained": "one SELECT over the store-day's rows of the service's own trade_records "
                                        "table (same database, same index): COUNT and SUMs of the integer "
                                        "minor-unit columns, net sales as a SUM with CASE on the revenue source "
                                        "codes, the payment total as a SUM over json_each(payments) times each "
                                        "payment type's direction. It does not collect the unmapped codes, "
                                        "unknown payment types, batch_seqs or write the result, which the "
                                        "service also does."}
    exponent = generate.profile_for(service.currency).exponent
    days = {}
    for number, size in enumerate(cfg.recon_sizes):
        business_date = generate.DEFAULT_DATE + dt.timedelta(days=number)
        setup_s, (request, expected) = timed(lambda: load_store_day(service, size, business_date, cfg.seed))
        days[size] = {"request": request, "expected": expected, "setup_s": setup_s,
                      "args": (*revenue_codes, service.partner.partner_id, service.store_id, business_date.isoformat()),
                      "repeat": cfg.recon_repeat_largest if size == max(cfg.recon_sizes) and not cfg.quick
                      else cfg.repeat, "service": [], "floor": [], "int": []}
    # Rounds over every size, so that a noisy neighbour slows all sizes alike (the scaling stays honest).
    for index in range(max(day["repeat"] for day in days.values()) + 1):
        for size, day in days.items():
            if index > day["repeat"]:
                continue
            _fresh()
            service_s, result = timed(lambda: reconcile(service.storage, day["request"]))
            _fresh()
            floor_s, row = timed(lambda: floor_db.execute(floor_sql, day["args"]).fetchone())
            _fresh()
            int_s, _ = timed(lambda: floor_db.execute(int_sql, day["args"]).fetchone())
            if result is None or result.status != "MATCHED":
                raise RuntimeError(f"{size} transactions did not reconcile to MATCHED: {result}")
            floor_totals = {"trade_record_count": row[0], "item_row_count": row[1], "payment_row_count": row[2],
                            "net_sales_amount": generate._money(row[3], exponent),
                            "tax_amount": generate._money(row[4], exponent),
                            "tip_amount": generate._money(row[5], exponent),
                            "payment_total_amount": generate._money(row[6], exponent)}
            if floor_totals != day["expected"] or result.actual != day["expected"]:
                raise RuntimeError(f"totals differ: expected {day['expected']}, service {result.actual}, "
                                   f"floor {floor_totals}")
            if index:  # the first round is a warm-up
                day["service"].append(_ms(service_s))
                day["floor"].append(_ms(floor_s))
                day["int"].append(_ms(int_s))
    for size, day in days.items():
        service_summary, floor_summary = summary(day["service"]), summary(day["floor"])
        results["sizes"][str(size)] = {
            "transactions": size,
            "setup_s": day["setup_s"],
            "service": service_summary,
            "floor": floor_summary,
            "floor_integer_columns_only": summary(day["int"]),
            "ratio": ratio(service_summary["median_ms"], floor_summary["median_ms"]),
            "service_ms_per_1k": service_summary["median_ms"] * 1000 / size,
            "floor_ms_per_1k": floor_summary["median_ms"] * 1000 / size,
        }
    smallest, largest = (results["sizes"][str(size)] for size in (min(cfg.recon_sizes), max(cfg.recon_sizes)))
    results["scaling"] = {
        "service_per_1k_largest_over_smallest": ratio(largest["service_ms_per_1k"], smallest["service_ms_per_1k"]),
        "floor_per_1k_largest_over_smallest": ratio(largest["floor_ms_per_1k"], smallest["floor_ms_per_1k"]),
        "ratio_largest_over_smallest": ratio(largest["ratio"], smallest["ratio"]),
        "note": "time per 1k transactions at the largest size over the same at the smallest: 1.0 is linear; "
                "the ratio to the floor at the largest over the same at the smallest cancels the machine's "
                "own non-linearity (caches) and most of its noise",
    }
    return results


# --- 5. cold import of function_app ------------------------------------------------------------------

_IMPORTTIME = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def _import_run(module: str) -> tuple[float, dict[str, tuple[int, int, int]]]:
    """Wall seconds of a fresh interpreter importing module, and -X importtime per module
    (self us, cumulative us, depth)."""
    env = {**os.environ}
    env.pop("APPLICATIONINSIGHTS_CONNECTION_STRING", None)
    code = f"import {module}" if module else "pass"
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"python -c '{code}' failed:\n{done.stderr[-3000:]}")
    modules = {}
    for line in done.stderr.splitlines():
        match = _IMPORTTIME.match(line)
        if match:
            modules[match.group(4)] = (int(match.group(1)), int(match.group(2)), (len(match.group(3)) - 1) // 2)
    return wall, modules


def bench_import(cfg: Config) -> dict:
    runs = {"function_app": [], "azure.functions": [], "": []}
    tables = []
    for _ in range(cfg.import_repeat + 1):
        for module in runs:
            wall, modules = _import_run(module)
            cumulative = modules.get(module, (0, 0, 0))[1] / 1000 if module else 0.0
            runs[module].append((wall * 1000, cumulative))
            if module == "function_app":
                tables.append(modules)
    for module in runs:
        runs[module] = runs[module][1:]  # the first run of each warms the page cache and __pycache__
    tables = tables[1:]
    app_import = statistics.median(c for _, c in runs["function_app"])
    floor_import = statistics.median(c for _, c in runs["azure.functions"])
    median_table = sorted(tables, key=lambda t: t.get("function_app", (0, 0, 0))[1])[len(tables) // 2]
    heaviest = sorted(((name, cum / 1000, own / 1000) for name, (own, cum, depth) in median_table.items()
                       if depth <= 2 and name != "function_app"), key=lambda item: -item[1])[:15]
    own_heaviest = sorted(((name, own / 1000) for name, (own, cum, depth) in median_table.items()),
                          key=lambda item: -item[1])[:15]
    return {
        "function_app_import_ms": summary([c for _, c in runs["function_app"]]),
        "function_app_process_wall_ms": summary([w for w, _ in runs["function_app"]]),
        "azure_functions_import_ms": summary([c for _, c in runs["azure.functions"]]),
        "bare_interpreter_wall_ms": summary([w for w, _ in runs[""]]),
        "ratio": ratio(app_import, floor_import),
        "floor_explained": "the floor is `import azure.functions` alone, which any Functions app needs; both "
                           "are -X importtime cumulative figures of a fresh interpreter (the bare interpreter's "
                           "own start is reported beside them)",
        "heaviest_imports_ms": [{"module": name, "cumulative_ms": round(cum, 1), "self_ms": round(own, 1)}
                                for name, cum, own in heaviest],
        "heaviest_self_ms": [{"module": name, "self_ms": round(own, 1)} for name, own in own_heaviest],
    }


# --- the table ---------------------------------------------------------------------------------------

def _fmt_ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f} ms" if value >= 100 else f"{value:.1f} ms" if value >= 1 else f"{value:.2f} ms"


def _fmt_x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def table_rows(results: dict, cfg: Config) -> list[dict]:
    rows = []

    def add(name, service, floor, ratio_text, target="", verdict=None):
        rows.append({"benchmark": name, "service": service, "floor": floor, "ratio": ratio_text, "target": target,
                     "met": verdict})

    accept = results.get("accept")
    if accept:
        add(f"accept {accept['records']} records in-process ({accept['body_bytes'] / 1e6:.2f} MB), median",
            _fmt_ms(accept["service"]["median_ms"]), _fmt_ms(accept["floor"]["median_ms"]), _fmt_x(accept["ratio"]),
            "<= 2.5x", accept["ratio"] <= 2.5)
        parse_floor = accept["floor_parts"]["orjson_loads"]["median_ms"]
        for stage, figures in accept.get("stages", {}).items():
            # each stage against the floor's parse (orjson.loads of the same body)
            add(f"  stage: {stage}", _fmt_ms(figures["median_ms"]), _fmt_ms(parse_floor),
                _fmt_x(ratio(figures["median_ms"], parse_floor)))
        resend = accept["resend"]
        add("resend of a known batch_id, median", _fmt_ms(resend["service"]["median_ms"]),
            _fmt_ms(resend["floor"]["median_ms"]), _fmt_x(resend["ratio"]),
            f"{resend['fraction_of_first_send']:.0%} of first send")
    http_results = results.get("http")
    if http_results:
        for clients in (1, cfg.http_clients):
            key = f"clients_{clients}"
            service, floor = http_results["service"][key], http_results["floor"][key]
            ratios = http_results[f"ratio_{key}"]
            add(f"HTTP {http_results['records']} records, {clients} client{'s' if clients > 1 else ''}: p50",
                _fmt_ms(service["median_ms"]), _fmt_ms(floor["median_ms"]), _fmt_x(ratios["p50"]))
            add(f"HTTP {clients} client{'s' if clients > 1 else ''}: p99 (n={service['n']})",
                _fmt_ms(service["p99_ms"]), _fmt_ms(floor["p99_ms"]), _fmt_x(ratios["p99"]),
                "p99 <= 150 ms" if clients == 1 else "", service["p99_ms"] <= 150 if clients == 1 else None)
            add(f"HTTP {clients} client{'s' if clients > 1 else ''}: records/s",
                f"{service['records_per_s']:,.0f}/s", f"{floor['records_per_s']:,.0f}/s",
                _fmt_x(ratios["records_per_s"]))
    large = results.get("large")
    if large:
        memory = large["memory"]
        add(f"{large['body_bytes'] / 1e6:.2f} MB body ({large['records']} records) in-process, median",
            _fmt_ms(large["service"]["median_ms"]), _fmt_ms(large["floor"]["median_ms"]), _fmt_x(large["ratio"]))
        add("  peak memory, tracemalloc, x body", f"{memory['service_tracemalloc_peak_x_body']:.1f}x",
            f"{memory['floor_tracemalloc_peak_x_body']:.1f}x", _fmt_x(memory["tracemalloc_ratio"]),
            "<= 10x body", memory["service_tracemalloc_peak_x_body"] <= 10)
        if memory["service_rss_peak_growth_x_body"] is not None:
            add("  peak RSS growth, fresh process, x body", f"{memory['service_rss_peak_growth_x_body']:.1f}x",
                f"{memory['floor_rss_peak_growth_x_body']:.1f}x",
                _fmt_x(ratio(memory["service_rss_peak_growth_x_body"], memory["floor_rss_peak_growth_x_body"])),
                "<= 10x body", memory["service_rss_peak_growth_x_body"] <= 10)
    if http_results:
        service_large, floor_large = http_results["service"]["large"], http_results["floor"]["large"]
        add(f"{http_results['large_body_bytes'] / 1e6:.2f} MB body over HTTP, median",
            _fmt_ms(service_large["latency"]["median_ms"]), _fmt_ms(floor_large["latency"]["median_ms"]),
            _fmt_x(ratio(service_large["latency"]["median_ms"], floor_large["latency"]["median_ms"])))
        add("  host RSS peak growth, x body", f"{service_large['peak_growth_x_body']:.1f}x",
            f"{floor_large['peak_growth_x_body']:.1f}x",
            _fmt_x(ratio(service_large["peak_growth_x_body"], floor_large["peak_growth_x_body"])), "<= 10x body",
            service_large["peak_growth_x_body"] <= 10)
    recon = results.get("reconcile")
    if recon:
        largest = max(int(size) for size in recon["sizes"])
        for size, figures in recon["sizes"].items():
            is_largest = int(size) == largest
            add(f"reconcile {int(size):,} transactions, median", _fmt_ms(figures["service"]["median_ms"]),
                _fmt_ms(figures["floor"]["median_ms"]), _fmt_x(figures["ratio"]),
                "<= 1.5x" if is_largest else "", figures["ratio"] <= 1.5 if is_largest else None)
            add(f"  per 1k transactions at {int(size):,}", _fmt_ms(figures["service_ms_per_1k"]),
                _fmt_ms(figures["floor_ms_per_1k"]), "")
        scaling = recon["scaling"]["service_per_1k_largest_over_smallest"]
        add("  scaling: per-1k time largest / smallest", f"{scaling:.2f}",
            f"{recon['scaling']['floor_per_1k_largest_over_smallest']:.2f}",
            f"{recon['scaling']['ratio_largest_over_smallest']:.2f}", "linear (~1)", scaling <= 1.5)
    imports = results.get("import")
    if imports:
        add("cold import of function_app (-X importtime), median", _fmt_ms(imports["function_app_import_ms"]["median_ms"]),
            _fmt_ms(imports["azure_functions_import_ms"]["median_ms"]), _fmt_x(imports["ratio"]), "<= 1 s",
            imports["function_app_import_ms"]["median_ms"] <= 1000)
        add("  fresh interpreter wall: import function_app / bare",
            _fmt_ms(imports["function_app_process_wall_ms"]["median_ms"]),
            _fmt_ms(imports["bare_interpreter_wall_ms"]["median_ms"]), "")
    return rows


def render_table(rows: list[dict], markdown: bool = False) -> str:
    headers = ("benchmark", "service", "floor", "ratio", "target", "met")

    def cell(row, name):
        if name == "met":
            return "" if row["met"] is None else ("yes" if row["met"] else "NO")
        if markdown and name == "benchmark" and row[name].startswith("  "):
            return "· " + row[name].strip()  # Markdown drops the indent of a detail row
        return str(row[name])
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join("---" for _ in headers) + " |"]
        lines += ["| " + " | ".join(cell(row, name).replace("|", "\\|") for name in headers) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(name), *(len(cell(row, name)) for row in rows)) for name in headers]
    lines = ["  ".join(name.ljust(width) for name, width in zip(headers, widths)),
             "  ".join("-" * width for width in widths)]
    lines += ["  ".join(cell(row, name).ljust(width) for name, width in zip(headers, widths)) for row in rows]
    return "\n".join(lines)


# --- profiles ------------------------------------------------------------------------------------------

def profile(cfg: Config, tmp: Path, out_dir: Path) -> list[Path]:
    """pyinstrument (call tree) and cProfile (flat, by own time) of the accept and of the largest
    reconciliation."""
    import cProfile
    import io
    import pstats

    from pyinstrument import Profiler

    from reconcile.service import reconcile

    written = []
    service = harness.open_service(tmp / "profile-accept")
    repeat = max(3, cfg.repeat // 2)
    bodies = generate.batch_bodies(2 * repeat + 1, cfg.records, seed=cfg.seed, tag="P")
    service.post_trade_records(bodies[0])
    recon_service = harness.open_service(tmp / "profile-reconcile")
    size = max(cfg.recon_sizes)
    request, _ = load_store_day(recon_service, size, generate.DEFAULT_DATE, cfg.seed)
    reconcile(recon_service.storage, request)

    def accept_many(chunk):
        for body in chunk:
            service.post_trade_records(body)

    def reconcile_many():
        for _ in range(min(repeat, 3)):
            reconcile(recon_service.storage, request)

    for name, first, second in (("accept", lambda: accept_many(bodies[1:repeat + 1]),
                                 lambda: accept_many(bodies[repeat + 1:])),
                                ("reconcile", reconcile_many, reconcile_many)):
        _fresh()
        profiler = Profiler(interval=0.0005)
        profiler.start()
        first()
        profiler.stop()
        tree = profiler.output_text(unicode=False, color=False, time="percent_of_total")
        _fresh()
        cprofile = cProfile.Profile()
        cprofile.enable()
        second()
        cprofile.disable()
        stats = pstats.Stats(cprofile)
        ranked = _ranked(stats)
        stats_out = io.StringIO()
        stats.stream = stats_out
        stats.sort_stats("cumulative").print_stats(30)
        path = out_dir / f"profile-{name}.txt"
        what = (f"{repeat} accepts of {cfg.records}-record batches" if name == "accept"
                else f"{min(repeat, 3)} reconciliations of {size:,} transactions")
        path.write_text(f"# Profile: {what}\n\n{ranked}\n\n## pyinstrument: call tree, share of wall time "
                        f"(library frames folded)\n\n{tree}\n\n## cProfile: cumulative\n\n{stats_out.getvalue()}")
        written.append(path)
    return written


def _c_name(function: str) -> str:
    """"<method 'execute' of 'sqlite3.Connection' objects>" -> "sqlite3.Connection.execute"."""
    method = re.fullmatch(r"<method '(.+)' of '(.+)' objects>", function)
    if method:
        return f"{method.group(2)}.{method.group(1)}"
    builtin = re.fullmatch(r"<built-in method (.+)>", function)
    return builtin.group(1) if builtin else function


def _ranked(stats, top: int = 25) -> str:
    """Own time (cProfile tottime) by function and by module, as shares of the total."""
    total = sum(entry[2] for entry in stats.stats.values()) or 1.0
    by_function = sorted(stats.stats.items(), key=lambda item: -item[1][2])[:top]
    by_module: dict[str, float] = defaultdict(float)
    for (file, _, function), entry in stats.stats.items():
        module = file if file != "~" else f"C: {_c_name(function)}"
        module = module.replace(str(ROOT) + "/", "")
        module = re.sub(r".*/(site-packages|lib/python3\.\d+)/", r"\1/", module)
        by_module[module] += entry[2]
    lines = [f"## cProfile: own time by function (total {total:.3f} s under the profiler)", "",
             "share    own s  calls      function"]
    for (file, line, function), (_, calls, own, _, _) in by_function:
        where = file.replace(str(ROOT) + "/", "")
        where = re.sub(r".*/(site-packages|lib/python3\.\d+)/", r"\1/", where)
        name = f"C: {_c_name(function)}" if file == "~" else f"{function} ({where}:{line})"
        lines.append(f"{own / total:6.1%}  {own:6.3f}  {calls:<9}  {name}")
    lines += ["", "## cProfile: own time by module", "", "share    own s  module"]
    for module, own in sorted(by_module.items(), key=lambda item: -item[1])[:15]:
        lines.append(f"{own / total:6.1%}  {own:6.3f}  {module}")
    return "\n".join(lines)


# --- main ----------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repetition and small sizes (a smoke test)")
    parser.add_argument("--repeat", type=int, default=None, help="repetitions (default $BENCH_REPEAT or 15)")
    parser.add_argument("--only", default=",".join(BENCHMARKS), help=f"comma-separated subset of {','.join(BENCHMARKS)}")
    parser.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=None,
                        help="results file (default bench/results/latest.json; quick runs: bench/results/quick.json)")
    parser.add_argument("--profile", action="store_true", help="also profile accept and reconcile")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--show", type=Path, nargs="?", const=RESULTS_DIR / "latest.json", default=None,
                        metavar="RESULTS", help="print the table of a results file (default latest.json) and exit")
    parser.add_argument("--memory-probe", nargs=3, metavar=("KIND", "DIR", "BODY"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_probe:
        kind, data_dir, body_path = args.memory_probe
        print(orjson.dumps(_memory_probe(kind, Path(data_dir), Path(body_path))).decode())
        return 0
    if args.show:
        document = orjson.loads(args.show.read_bytes())
        machine = document["machine"]
        print(f"{machine['cpu_model']}, {machine['cores']} cores, Python {machine['python']}, "
              f"SQLite {machine['sqlite']}; {document['date']}; load average {machine['load_average_start'][0]:.2f} "
              f"-> {machine['load_average_end'][0]:.2f}\n")
        print(render_table(document["table"], markdown=args.markdown))
        return 0
    cfg = Config.make(args.quick, args.repeat, args.seed)
    selected = [name for name in args.only.split(",") if name]
    unknown = set(selected) - set(BENCHMARKS)
    if unknown:
        parser.error(f"unknown benchmarks: {', '.join(sorted(unknown))}")
    out = args.out or RESULTS_DIR / ("quick.json" if cfg.quick else "latest.json")

    started = time.perf_counter()
    results: dict = {}
    machine = machine_info()
    functions = {"accept": bench_accept, "http": bench_http, "large": bench_large, "reconcile": bench_reconcile}
    with tempfile.TemporaryDirectory(prefix="pos-bench-") as temp:
        tmp = Path(temp)
        for name in selected:
            print(f"[bench] {name} ...", file=sys.stderr, flush=True)
            began = time.perf_counter()
            results[name] = bench_import(cfg) if name == "import" else functions[name](cfg, tmp)
            results[name]["elapsed_s"] = time.perf_counter() - began
        profiles = []
        if args.profile:
            print("[bench] profiles ...", file=sys.stderr, flush=True)
            RESULTS_DIR.mkdir(parents=True, exist_ok=True)
            profiles = [str(path.relative_to(ROOT)) for path in profile(cfg, tmp, RESULTS_DIR)]
    machine["load_average_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    rows = table_rows(results, cfg)
    document = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine,
        "config": asdict(cfg),
        "elapsed_s": time.perf_counter() - started,
        "table": rows,
        "benchmarks": results,
        "profiles": profiles,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_suffix(".tmp")
    temporary.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n")
    temporary.replace(out)
    print(f"{machine['cpu_model']}, {machine['cores']} cores, Python {machine['python']}, SQLite {machine['sqlite']}; "
          f"{document['date']}; load {machine['load_average_start'][0]:.2f} -> {machine['load_average_end'][0]:.2f}")
    print(render_table(rows, markdown=args.markdown))
    print(f"\n{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out} written in {document['elapsed_s']:.0f} s"
          + (f"; profiles: {', '.join(profiles)}" if profiles else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
