"""Benchmark: the Azure accept against its floor (decision 0056), measured as HQ's capacity planner would, from
outside the service, in one run:

1. the local host (`python -m devhost`) on the Azure adapters, on the Cosmos DB and Azurite emulators; the
   partner, its store and API key made with `hq`, the store master, products and mapping PUT over HTTP;
2. N batches (default 36) of 500 new trade records POSTed one after another over one HTTP connection, after
   one warm-up batch (its figures kept apart): each batch's latency, the Cosmos DB requests it cost as the
   EMULATOR counts them (bench/emulator_counter.js, preloaded into it: whatever SDK calls the adapter
   makes, each request it serves is counted once, by operation), and the host's CPU time read from outside
   for its whole process tree (each process's CPU-time clock, before and after the batch: its start-up is
   not counted; bench/from_outside.py); the emulator's own CPU is kept apart, for information;
3. one resend of a batch already received (the same body): its requests;
4. the same batches (new ids) sent to a second local host on the embedded SQLite backend: CPU and latency;
5. the floor: the azure-cosmos SDK (the pinned version, in this process, CPU by time.process_time)
   writing the same records as documents in transactional batches of 100 (`execute_item_batch`) to a
   fresh container of the same emulator: its requests (5 per 500 records), CPU and latency per batch.

The three run in rounds (Azure batch i, SQLite batch i, floor batch i), so that a noisy neighbour slows
each alike. Per record: Cosmos DB requests (by kind), host CPU ms, and the p50 of a batch's latency; the
targets (requests per record <= 0.08; Azure CPU per record <= 2x SQLite's; Azure p50 <= 3x the floor's), each
PASS or MISS, for new records and for batches of later versions and of moves.

    python -m bench.azure_accept                 # 36 batches of 500: bench/results/azure-accept.json
    python -m bench.azure_accept --quick         # 2 batches of 250: a smoke test (tests/toolchain/test_azure_accept.py)
    python -m bench.azure_accept --index-max-entries 50 --out bench/results/azure-accept-grown.json
                                                 # into an index grown first with nodes of 50 (decision 0115);
                                                 # without the option, to another file: the 16-node baseline
    python -m bench.run --only azure             # the same, as part of `make bench` (latest.json)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import http.client
import math
import os
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import orjson

from bench import ROOT, catalogue, generate, harness
from bench.from_outside import (
    KIND_ORDER,
    CountingEmulator,
    requests_between,
    start_counting_emulator,
    tree_cpu_seconds,
)
from bench.report import RESULTS_DIR, machine_info, write_results
from devhost.azurite_emulator import start_azurite
from devhost.cosmos_emulator import EMULATOR_KEY
from devhost.processes import free_port
from loadtest.host import Host, launch_or_stop
from loadtest.index_growth import index_nodes_closed

PREFIX = "/pos/v1/"
FLOOR_BATCH = 100  # Cosmos DB's limit of operations in one transactional batch
CURRENCY = "USD"
# The targets the record index was built to reach (decision 0056).
MAX_REQUESTS_PER_RECORD = 0.08
MAX_CPU_X_SQLITE = 2.0
MAX_LATENCY_X_FLOOR = 3.0
# Requests of a resend of a known batch on the code of 2026-11-27 (commit 8cd3853), which the record index was
# not to grow: 5 point reads (3 in `partners`, the key's among them; the batch's marker; one in `daily-closes`)
# and the patch of the rate-limit count.
RESEND_REQUESTS_BEFORE = 6


@dataclass(frozen=True)
class Sizes:
    batches: int
    records: int


# 36 batches: a batch's CPU varies by a tenth to a fifth on either host, so over 12 a run's ratio of the two
# hosts' CPU still moved by about 0.13 either way (decision 0132)
FULL = Sizes(batches=36, records=500)
QUICK = Sizes(batches=2, records=250)  # 250: the floor's last transactional batch is a partial one


# --- the local hosts ----------------------------------------------------------------------------------------


def _host_env(work: Path, **settings: str) -> dict[str, str]:
    env = {
        **os.environ,
        "POS_DATA_DIR": str(work / "data"),
        "PORT": str(free_port()),
        "POS_CREATE_DEMO_PARTNER": "false",
        "RATE_LIMIT_PER_MINUTE": "600",  # on, as deployed (infra/main.bicep): its count is part of the cost
        "RECONCILE_SWEEP_SCHEDULE": "0 0 0 1 1 *",  # once a year: no sweep's requests inside a batch
        "PYTHONUNBUFFERED": "1",
        **settings,
    }
    for name in ("APPLICATIONINSIGHTS_CONNECTION_STRING", "POS_FAULTS", "POS_FAULTS_KILL"):
        env.pop(name, None)
    return env


class Client:
    """One persistent HTTP connection to a host, with the partner's key."""

    def __init__(self, port: int, key: str) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        self.headers = {"Content-Type": "application/json", "x-functions-key": key}

    def send(self, method: str, path: str, body: bytes) -> tuple[int, dict, float]:
        began = time.perf_counter()
        self.connection.request(method, PREFIX + path, body, self.headers)
        response = self.connection.getresponse()
        answer = response.read()
        elapsed_ms = (time.perf_counter() - began) * 1000
        return response.status, orjson.loads(answer) if answer else {}, elapsed_ms

    def close(self) -> None:
        self.connection.close()


def _onboard(host: Host, store_id: str) -> Client:
    """The partner, its store and key through `hq`; the store master, products and mapping over HTTP."""
    host.hq("partner", "add", harness.PARTNER_ID, "--name", "Bench partner")
    host.hq("store", "register", harness.PARTNER_ID, store_id)
    key = host.hq("key", "issue", harness.PARTNER_ID).strip().splitlines()[-1]
    client = Client(host.port, key)
    for path, body in (
        ("stores", generate.stores_body(CURRENCY, store_id)),
        ("products", generate.products_body(CURRENCY)),
        ("mappings/transaction-types", generate.mapping_body()),
    ):
        status, answer, _ = client.send("PUT", path, body)
        if status not in (200, 202) or answer.get("warnings"):
            raise RuntimeError(f"PUT /{path} was not accepted cleanly: {status} {answer}")
    return client


@dataclass
class HostUnderTest:
    name: str
    host: Host
    client: Client
    emulator: CountingEmulator | None = None

    def post(self, body: bytes, records: int, expected: tuple[int, ...] = (202,), warned: str = "") -> dict:
        """POST one batch; its latency, the host's CPU and (on Azure) the emulator's requests. `warned`: the
        one warning code the batch may answer (a moved record's)."""
        assert self.host.process is not None
        pid = self.host.process.pid
        counted = self.emulator.counts() if self.emulator else None
        emulator_cpu = tree_cpu_seconds(self.emulator.process.pid) if self.emulator else 0.0
        cpu = tree_cpu_seconds(pid)
        status, answer, latency_ms = self.client.send("POST", "trade-records", body)
        cpu_ms = (tree_cpu_seconds(pid) - cpu) * 1000
        warnings = [warning for warning in answer.get("warnings") or [] if warning.get("code") != warned]
        if status not in expected or warnings or answer.get("record_count") not in (None, records):
            raise RuntimeError(f"{self.name}: the batch was not accepted cleanly: {status} {str(answer)[:1000]}")
        figures = {"status": status, "latency_ms": latency_ms, "cpu_ms": cpu_ms}
        if self.emulator is not None:
            figures["emulator_cpu_ms"] = (tree_cpu_seconds(self.emulator.process.pid) - emulator_cpu) * 1000
            figures |= requests_between(counted, self.emulator.counts())
        return figures


# --- the floor: the SDK's transactional batches -------------------------------------------------------------


class SdkFloor:
    """The azure-cosmos SDK writing each record's JSON as a document, in transactional batches of 100 in its
    store-day's partition, to a container of its own."""

    def __init__(self, endpoint: str, key: str) -> None:
        from azure.cosmos import CosmosClient, PartitionKey
        from urllib3.exceptions import InsecureRequestWarning

        warnings.filterwarnings("ignore", category=InsecureRequestWarning)  # the emulator's certificate
        self.client = CosmosClient(endpoint, key, connection_verify=False)
        database = self.client.create_database_if_not_exists("bench-floor")
        self.container = database.create_container_if_not_exists(
            f"floor-{uuid.uuid4().hex[:8]}", partition_key=PartitionKey(path="/pk")
        )
        self.document_bytes: list[int] = []

    def write(self, body: bytes) -> int:
        batch = orjson.loads(body)
        pk = f"{harness.PARTNER_ID}|{batch['store_id']}|{batch['business_date']}"
        documents = [
            {
                "id": "record|" + record["trade_record_id"],
                "pk": pk,
                "type": "record",
                "trade_record_id": record["trade_record_id"],
                "version": record["version"],
                "document": record,
            }
            for record in batch["trade_records"]
        ]
        self.document_bytes.append(len(orjson.dumps(documents[0])))
        for start in range(0, len(documents), FLOOR_BATCH):
            results = self.container.execute_item_batch(
                [("create", (document,)) for document in documents[start : start + FLOOR_BATCH]], partition_key=pk
            )
            if len(results) != len(documents[start : start + FLOOR_BATCH]):
                raise RuntimeError(f"the floor's batch answered {len(results)} results")
        return len(documents)

    def post(self, body: bytes, records: int, emulator: CountingEmulator) -> dict:
        counted = emulator.counts()
        emulator_cpu = tree_cpu_seconds(emulator.process.pid)
        cpu, began = time.process_time(), time.perf_counter()
        written = self.write(body)
        latency_ms, cpu_ms = (time.perf_counter() - began) * 1000, (time.process_time() - cpu) * 1000
        emulator_cpu_ms = (tree_cpu_seconds(emulator.process.pid) - emulator_cpu) * 1000
        if written != records:
            raise RuntimeError(f"the floor wrote {written} documents, not {records}")
        figures = {"latency_ms": latency_ms, "cpu_ms": cpu_ms, "emulator_cpu_ms": emulator_cpu_ms}
        return figures | requests_between(counted, emulator.counts())

    def close(self) -> None:
        self.client.__exit__(None, None, None)  # its connection pool


# --- the run ------------------------------------------------------------------------------------------------


def measure(sizes: Sizes, tmp: Path, seed: int = generate.DEFAULT_SEED, index_max_entries: int | None = None) -> dict:
    store_id = catalogue.profile_for(CURRENCY).store_id
    copies = sizes.batches + 1  # the first is the warm-up
    bodies = {
        name: generate.batch_bodies(copies, sizes.records, seed=seed, store_id=store_id, tag=tag)
        for name, tag in (("azure", "A"), ("sqlite", "Q"), ("floor", "F"))
    }
    started = time.perf_counter()
    emulator = start_counting_emulator(tmp / "cosmos.log")
    stack = contextlib.ExitStack()
    stack.callback(emulator.stop)
    with stack:
        azurite = start_azurite(tmp)
        stack.callback(azurite.stop)
        azure_work, sqlite_work = tmp / "azure", tmp / "sqlite"
        azure_work.mkdir()
        sqlite_work.mkdir()
        azure_env = _host_env(
            azure_work,
            POS_BACKEND="azure",
            COSMOS_ENDPOINT=emulator.endpoint,
            COSMOS_KEY=EMULATOR_KEY,
            COSMOS_DATABASE="bench",
            COSMOS_CREATE_CONTAINERS="true",
            AzureWebJobsStorage=azurite.connection_string,
        )
        sqlite_env = _host_env(sqlite_work, POS_BACKEND="sqlite")
        hosts = {}
        for name, env, work in (("azure", azure_env, azure_work), ("sqlite", sqlite_env, sqlite_work)):
            host = Host(None, int(env["PORT"]), env, work)
            launch_or_stop(host)
            stack.callback(host.stop)
            hosts[name] = host
        set_up_counts = emulator.counts()
        azure = HostUnderTest("azure", hosts["azure"], _onboard(hosts["azure"], store_id), emulator)
        sqlite = HostUnderTest("sqlite", hosts["sqlite"], _onboard(hosts["sqlite"], store_id))
        stack.callback(azure.client.close)
        stack.callback(sqlite.client.close)
        onboarding = requests_between(set_up_counts, emulator.counts())
        floor = SdkFloor(emulator.endpoint, EMULATOR_KEY)
        stack.callback(floor.close)
        if index_max_entries:
            _grow_index(azure, index_max_entries, sizes.records, seed, store_id)
        set_up_s = time.perf_counter() - started

        warm_up = {
            "azure": azure.post(bodies["azure"][0], sizes.records),
            "sqlite": sqlite.post(bodies["sqlite"][0], sizes.records),
            "floor": floor.post(bodies["floor"][0], sizes.records, emulator),
        }
        runs: dict[str, list[dict]] = {"azure": [], "sqlite": [], "floor": []}
        for index in range(1, copies):
            runs["azure"].append(azure.post(bodies["azure"][index], sizes.records))
            runs["sqlite"].append(sqlite.post(bodies["sqlite"][index], sizes.records))
            runs["floor"].append(floor.post(bodies["floor"][index], sizes.records, emulator))
        # Later versions of batches already received: in their store-day, then moved to the next day.
        changed: dict[str, dict[str, list[dict]]] = {
            "later": {"azure": [], "sqlite": []},
            "moves": {"azure": [], "sqlite": []},
        }
        for index in range(1, copies):
            for kind, days in (("later", 0), ("moves", 1)):
                for name, under_test in (("azure", azure), ("sqlite", sqlite)):
                    body = later_versions(bodies[name][index], version=2 + days, days=days, seq=100 + index)
                    warned = "TRADE_RECORD_MOVED" if days else ""
                    changed[kind][name].append(under_test.post(body, sizes.records, warned=warned))
        # A batch already received, sent again as it was: answered 200 (ALREADY_RECEIVED).
        resend = azure.post(bodies["azure"][1], sizes.records, expected=(200,))
        nodes_closed = index_nodes_closed(azure_env)

    from azure.cosmos import __version__ as sdk_version

    result = {
        "batches": sizes.batches,
        "records": sizes.records,
        "body_bytes": len(bodies["azure"][1]),
        "azure_cosmos_version": sdk_version,
        "set_up_s": set_up_s,
        "onboarding_requests": onboarding,
        "warm_up": warm_up,
        "resend": resend,
        "index_max_entries": index_max_entries,
        "index_nodes_closed": nodes_closed,
        "azure": _figures(runs["azure"], sizes.records),
        "sqlite": _figures(runs["sqlite"], sizes.records),
        "floor": _figures(runs["floor"], sizes.records)
        | {"document_bytes": statistics.median(floor.document_bytes), "operations_per_batch_request": FLOOR_BATCH},
        **{
            kind: {name: _figures(batches, sizes.records) for name, batches in by_host.items()}
            for kind, by_host in changed.items()
        },
    }
    result["targets"] = _targets(result)
    return result


GROW_BATCHES = 6  # of `records` each, written with nodes of `index_max_entries` before the measured batches


def _grow_index(azure: HostUnderTest, max_entries: int, records: int, seed: int, store_id: str) -> None:
    """The partner's record index grown several times before the measured batches (decision 0115): the host
    restarted with nodes of `max_entries`, GROW_BATCHES batches sent, then restarted with the default limit,
    so that the measured batches write into the grown layout without closing more nodes (as in Azure,
    where a node closes once per 20 million entries)."""
    key = azure.client.headers["x-functions-key"]
    for limit in (str(max_entries), None):
        azure.client.close()
        azure.host.stop_process()
        launch_or_stop_with(azure.host, {"COSMOS_INDEX_PARTITION_MAX_ENTRIES": limit} if limit else {})
        azure.client = Client(azure.host.port, key)
        if limit:
            grow = generate.batch_bodies(
                GROW_BATCHES, records, seed=seed + 1, store_id=store_id, tag="G", first_seq=1000
            )
            for body in grow:
                azure.post(body, records)


def launch_or_stop_with(host: Host, settings: dict[str, str]) -> None:
    if not host.launch(**settings):
        host.stop()
        raise RuntimeError("the host exited at start")


def later_versions(body: bytes, version: int, days: int, seq: int) -> bytes:
    """The batch's records again as `version`, under a new batch_id, in the same store-day or moved `days`
    later (every date of the body shifted: the record's times stay within its business day)."""
    document = orjson.loads(body)
    text = body.decode()
    if days:
        day = dt.date.fromisoformat(document["business_date"])
        for shift in range(2 * days, -1, -1):  # the later dates first, so that nothing is shifted twice
            was = (day + dt.timedelta(days=shift)).isoformat()
            text = text.replace(was, (day + dt.timedelta(days=shift + days)).isoformat())
        document = orjson.loads(text)
    document["batch_id"] = str(uuid.uuid4())
    document["batch_seq"] = seq
    for record in document["trade_records"]:
        record["version"] = version
    return orjson.dumps(document)


def _figures(batches: list[dict], records: int) -> dict:
    """Per record over the measured batches: CPU and (when counted) requests by kind; a batch's latency."""
    total = records * len(batches)
    latencies = [batch["latency_ms"] for batch in batches]
    figures = {
        "cpu_ms_per_record": sum(batch["cpu_ms"] for batch in batches) / total,
        "latency_p50_ms": statistics.median(latencies),
        "latency_max_ms": max(latencies),
        "samples": batches,
    }
    if "emulator_cpu_ms" in batches[0]:
        figures["emulator_cpu_ms_per_record"] = sum(batch["emulator_cpu_ms"] for batch in batches) / total
    if "requests" in batches[0]:
        by_kind = Counter()
        by_operation = Counter()
        for batch in batches:
            by_kind.update(batch["by_kind"])
            by_operation.update(batch["by_status"])
        requests = sum(batch["requests"] for batch in batches)
        figures |= {
            "requests": requests,
            "requests_per_record": requests / total,
            "requests_by_kind": {kind: by_kind[kind] for kind in KIND_ORDER if by_kind[kind]},
            "requests_by_kind_per_record": {kind: by_kind[kind] / total for kind in KIND_ORDER if by_kind[kind]},
            "requests_by_status": dict(sorted(by_operation.items())),
            "batch_operations": sum(batch["batch_operations"] for batch in batches),
        }
    return figures


def _cpu_x(azure: dict, sqlite: dict) -> float:
    return azure["cpu_ms_per_record"] / sqlite["cpu_ms_per_record"] if sqlite["cpu_ms_per_record"] else math.inf


def _targets(result: dict) -> list[dict]:
    azure, sqlite, floor = result["azure"], result["sqlite"], result["floor"]
    cpu_x = _cpu_x(azure, sqlite)
    latency_x = azure["latency_p50_ms"] / floor["latency_p50_ms"]
    changed = [
        target
        for kind, label in (("later", "later versions"), ("moves", "later versions moved to another day"))
        if kind in result
        for target in (
            {
                "target": f"{label}: Cosmos DB requests per record <= {MAX_REQUESTS_PER_RECORD}",
                "value": f"{result[kind]['azure']['requests_per_record']:.3f}",
                "met": result[kind]["azure"]["requests_per_record"] <= MAX_REQUESTS_PER_RECORD,
            },
            {
                "target": f"{label}: host CPU per record <= {MAX_CPU_X_SQLITE:g}x embedded SQLite's",
                "value": f"{_cpu_x(result[kind]['azure'], result[kind]['sqlite']):.1f}x",
                "met": _cpu_x(result[kind]["azure"], result[kind]["sqlite"]) <= MAX_CPU_X_SQLITE,
            },
        )
    ]
    return [
        {
            "target": f"Cosmos DB requests per record <= {MAX_REQUESTS_PER_RECORD}",
            "value": f"{azure['requests_per_record']:.3f}",
            "met": azure["requests_per_record"] <= MAX_REQUESTS_PER_RECORD,
        },
        {
            "target": f"host CPU per record <= {MAX_CPU_X_SQLITE:g}x embedded SQLite's",
            "value": f"{cpu_x:.1f}x",
            "met": cpu_x <= MAX_CPU_X_SQLITE,
        },
        {
            "target": f"latency p50 of a batch <= {MAX_LATENCY_X_FLOOR:g}x the SDK batch floor's",
            "value": f"{latency_x:.1f}x",
            "met": latency_x <= MAX_LATENCY_X_FLOOR,
        },
        {
            "target": f"a resend of a known batch: requests <= {RESEND_REQUESTS_BEFORE} (as before)",
            "value": str(result["resend"]["requests"]),
            "met": result["resend"]["requests"] <= RESEND_REQUESTS_BEFORE,
        },
    ] + changed


def run(cfg, tmp: Path) -> dict:
    """`python -m bench.run --only azure` (bench/run.py)."""
    work = tmp / "azure-accept"
    work.mkdir()
    return measure(QUICK if cfg.quick else FULL, work, cfg.seed)


# --- the report ---------------------------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f} ms" if value >= 100 else f"{value:.2f} ms" if value >= 1 else f"{value:.3f} ms"


def _per(value: float) -> str:
    return f"{value:.3f}"


def render(result: dict, markdown: bool = False) -> str:
    """The table: per record, for the Azure adapters, embedded SQLite and the SDK batch floor; then the targets."""
    azure, sqlite, floor = result["azure"], result["sqlite"], result["floor"]
    records = result["records"] * result["batches"]
    grown = (
        f"; into an index grown first ({result['index_nodes_closed']:,} nodes closed at "
        f"{result['index_max_entries']:,} entries)"
        if result.get("index_max_entries")
        else ""
    )
    header = (f"per record, {result['batches']} batches of {result['records']} new records{grown}",
              "Azure adapters", "embedded SQLite", "SDK batch floor")  # fmt: skip
    rows = [
        (
            "Cosmos DB requests",
            f"{_per(azure['requests_per_record'])} ({azure['requests']:,} for {records:,})",
            "-",
            f"{_per(floor['requests_per_record'])} ({floor['requests']:,} for {records:,})",
        )
    ]
    for kind in KIND_ORDER:
        if kind in azure["requests_by_kind"] or kind in floor["requests_by_kind"]:
            rows.append(
                (
                    f"  {kind}",
                    _per(azure["requests_by_kind_per_record"].get(kind, 0)),
                    "-",
                    _per(floor["requests_by_kind_per_record"].get(kind, 0)),
                )
            )
    rows += [
        ("host CPU", *(_ms(figures["cpu_ms_per_record"]) for figures in (azure, sqlite, floor))),
        (
            "  the emulator's CPU, apart",
            *(_ms(figures.get("emulator_cpu_ms_per_record")) for figures in (azure, sqlite, floor)),
        ),
        ("latency of a batch, p50", *(_ms(figures["latency_p50_ms"]) for figures in (azure, sqlite, floor))),
    ]
    lines = _table(header, rows, markdown)
    warm, resend = result["warm_up"]["azure"], result["resend"]
    lines += [
        "",
        f"warm-up batch (not counted above), Azure: {warm['requests']:,} requests ({_kinds(warm)}), "
        f"{_ms(warm['latency_ms'])}, CPU {_ms(warm['cpu_ms'])}",
        f"resend of a known batch (same body), Azure: answered {resend['status']}, {resend['requests']} requests "
        f"({_kinds(resend)}), {_ms(resend['latency_ms'])}, CPU {_ms(resend['cpu_ms'])}",
        "",
    ]
    targets = [(target["target"], target["value"], "PASS" if target["met"] else "MISS") for target in result["targets"]]
    return "\n".join(lines + _table(("target", "measured", ""), targets, markdown))


def _kinds(figures: dict) -> str:
    return ", ".join(f"{amount} {kind}" for kind, amount in figures["by_kind"].items()) or "none"


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]], markdown: bool) -> list[str]:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        return lines + ["| " + " | ".join(cell.strip() if cell.startswith("  ") else cell for cell in row) + " |"
                        for row in rows]  # fmt: skip
    widths = [max(len(row[column]) for row in [header, *rows]) for column in range(len(header))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in [header, tuple("-" * width for width in widths), *rows]]  # fmt: skip


def report_rows(result: dict) -> list[dict]:
    """Rows of `make bench`'s table (bench/report.py): service = Azure adapters, floor as named."""
    azure, sqlite, floor = result["azure"], result["sqlite"], result["floor"]
    targets = result["targets"]

    def row(name, service, against, ratio, target="", met=None):
        return {"benchmark": name, "service": service, "floor": against, "ratio": ratio, "target": target, "met": met}

    return [
        row(
            f"Azure accept {result['records']} records over HTTP: Cosmos DB requests per record, vs SDK batch floor",
            _per(azure["requests_per_record"]),
            _per(floor["requests_per_record"]),
            f"{azure['requests_per_record'] / floor['requests_per_record']:.0f}x",
            f"<= {MAX_REQUESTS_PER_RECORD} per record",
            targets[0]["met"],
        ),
        row(
            "  host CPU per record, vs embedded SQLite",
            _ms(azure["cpu_ms_per_record"]),
            _ms(sqlite["cpu_ms_per_record"]),
            targets[1]["value"],
            f"<= {MAX_CPU_X_SQLITE:g}x",
            targets[1]["met"],
        ),
        row(
            "  host CPU per record, vs SDK batch floor",
            _ms(azure["cpu_ms_per_record"]),
            _ms(floor["cpu_ms_per_record"]),
            f"{azure['cpu_ms_per_record'] / floor['cpu_ms_per_record']:.1f}x",
        ),
        row(
            "  latency of a batch p50, vs SDK batch floor",
            _ms(azure["latency_p50_ms"]),
            _ms(floor["latency_p50_ms"]),
            targets[2]["value"],
            f"<= {MAX_LATENCY_X_FLOOR:g}x",
            targets[2]["met"],
        ),
        row(
            "  resend of a known batch: Cosmos DB requests",
            str(result["resend"]["requests"]),
            "-",
            "",
            f"<= {RESEND_REQUESTS_BEFORE}",
            targets[3]["met"],
        ),
    ] + [
        row(
            f"  {label}: {what}",
            service,
            against,
            ratio,
            target["target"].split(": ", 1)[1].replace(" per record", "").replace(" embedded SQLite's", ""),
            target["met"],
        )
        for kind, label in (("later", "later versions"), ("moves", "later versions moved to another day"))
        if kind in result
        for (what, service, against, ratio), target in zip(
            (
                ("Cosmos DB requests per record", _per(result[kind]["azure"]["requests_per_record"]), "", ""),
                (
                    "host CPU per record, vs embedded SQLite",
                    _ms(result[kind]["azure"]["cpu_ms_per_record"]),
                    _ms(result[kind]["sqlite"]["cpu_ms_per_record"]),
                    f"{_cpu_x(result[kind]['azure'], result[kind]['sqlite']):.1f}x",
                ),
            ),
            [target for target in targets if target["target"].startswith(label + ":")],
            strict=True,
        )
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.azure_accept", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK.batches} batches of {QUICK.records} records")
    parser.add_argument("--batches", type=int, default=None, help=f"measured batches (default {FULL.batches})")
    parser.add_argument("--records", type=int, default=None, help=f"records per batch (default {FULL.records})")
    parser.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=None, help="results file (default bench/results/azure-accept.json)")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    parser.add_argument(
        "--index-max-entries",
        type=int,
        default=None,
        help="grow the partner's index first with nodes of this many entries, then measure with the default",
    )
    args = parser.parse_args(argv)
    base = QUICK if args.quick else FULL
    sizes = Sizes(args.batches or base.batches, args.records or base.records)
    if not 1 <= sizes.records <= generate.BATCH_LIMIT or sizes.batches < 1:
        parser.error(f"--records from 1 to {generate.BATCH_LIMIT}, --batches at least 1")
    out = args.out or RESULTS_DIR / ("azure-accept-quick.json" if args.quick else "azure-accept.json")
    machine = machine_info()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pos-bench-azure-") as folder:
        result = measure(sizes, Path(folder), args.seed, args.index_max_entries)
    machine["load_average_end"] = list(os.getloadavg())
    result["elapsed_s"] = time.perf_counter() - started
    document = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "config": {
            "quick": args.quick,
            "batches": sizes.batches,
            "records": sizes.records,
            "seed": args.seed,
            "index_max_entries": args.index_max_entries,
        },
        "elapsed_s": result["elapsed_s"],
        "table": report_rows(result),
        "benchmarks": {"azure": result},
    }
    write_results(out, document)
    print(
        f"{machine['cpu_model']}, {machine['cores']} cores, Python {machine['python']}, azure-cosmos "
        f"{result['azure_cosmos_version']}; {document['date']}; load {machine['load_average_start'][0]:.2f} -> "
        f"{machine['load_average_end'][0]:.2f}\n"
    )
    print(render(result, markdown=args.markdown))
    print(f"\n{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out} written in {result['elapsed_s']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
