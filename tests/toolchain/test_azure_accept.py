"""The Azure accept against its floor (bench/azure_accept.py, decision 0056): `python -m bench.azure_accept --quick`
runs end to end on the Cosmos DB and Azurite emulators (the request counter preloaded into the first), a local
host on the Azure adapters, one on SQLite and the SDK's transactional batches, and prints its table. What
the emulator counts and what /proc says are asserted, no time and no target."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import time

import orjson
import pytest

from bench import azure_accept
from bench.from_outside import tree_cpu_seconds
from bench.measure import Config
from bench.report import table_rows
from bench.run import BENCHMARKS
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory) -> tuple[str, dict]:
    out = tmp_path_factory.mktemp("azure-accept") / "azure-accept.json"
    run = subprocess.run(
        [sys.executable, "-m", "bench.azure_accept", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout, orjson.loads(out.read_bytes())


def _cells(output: str, first: str) -> list[str]:
    line = next(line for line in output.splitlines() if line.startswith(first))
    return re.split(r"\s{2,}", line.strip())


def test_the_table_has_the_three_columns_and_a_verdict_per_target(quick_run):
    output, document = quick_run
    result = document["benchmarks"]["azure"]
    header = _cells(output, "per record")
    assert header[1:] == ["Azure adapters", "embedded SQLite", "SDK batch floor"]
    assert f"{result['batches']} batches of {result['records']} new records" in header[0]
    for row in ("Cosmos DB requests", "host CPU", "latency of a batch, p50"):
        assert len(_cells(output, row)) == 4, row
    verdicts = [line.rsplit(maxsplit=1)[-1] for line in output.splitlines() if line.endswith(("PASS", "MISS"))]
    assert len(verdicts) == len(result["targets"]) == 8  # new records 4; later versions and moves 2 each


def test_the_emulator_counts_every_request_of_the_azure_batches(quick_run):
    _, document = quick_run
    result = document["benchmarks"]["azure"]
    azure = result["azure"]
    assert (result["batches"], result["records"]) == (azure_accept.QUICK.batches, azure_accept.QUICK.records)
    assert len(azure["samples"]) == result["batches"]
    for batch in azure["samples"]:
        assert batch["status"] == 202
        assert batch["requests"] > 0 and batch["by_kind"]["writes"] > 0
        assert sum(batch["by_kind"].values()) == sum(batch["by_operation"].values()) == batch["requests"]
        assert sum(batch["by_status"].values()) == batch["requests"]  # each request answered, and counted once
        assert batch["cpu_ms"] > 0 and batch["latency_ms"] > 0
    assert azure["requests"] == sum(batch["requests"] for batch in azure["samples"])
    assert azure["requests_per_record"] == azure["requests"] / (result["batches"] * result["records"])
    assert azure["cpu_ms_per_record"] > 0 and azure["emulator_cpu_ms_per_record"] > 0
    # kept apart: the warm-up, the set-up, and the resend of a known batch (answered 200, from its marker)
    assert result["warm_up"]["azure"]["requests"] > 0 and result["onboarding_requests"]["requests"] > 0
    assert result["resend"]["status"] == 200
    assert 0 < result["resend"]["requests"] < azure["samples"][0]["requests"]


def test_the_floor_writes_each_batch_in_transactional_batches_of_100(quick_run):
    _, document = quick_run
    result = document["benchmarks"]["azure"]
    records = result["records"]
    for batch in [result["warm_up"]["floor"], *result["floor"]["samples"]]:
        assert batch["requests"] == math.ceil(records / azure_accept.FLOOR_BATCH)
        assert batch["by_operation"] == {"batch": batch["requests"]}
        assert batch["batch_operations"] == records
        assert batch["cpu_ms"] > 0
    assert result["floor"]["document_bytes"] > 500  # each record's JSON, as stored


def test_the_embedded_host_is_measured_the_same_way(quick_run):
    _, document = quick_run
    sqlite = document["benchmarks"]["azure"]["sqlite"]
    assert [batch["status"] for batch in sqlite["samples"]] == [202, 202]
    assert sqlite["cpu_ms_per_record"] > 0 and sqlite["latency_p50_ms"] > 0
    assert "requests" not in sqlite  # nothing of it reaches the emulator


def test_make_bench_runs_it_and_puts_its_rows_in_the_table(quick_run):
    _, document = quick_run
    assert BENCHMARKS["azure"] is azure_accept.run
    config = Config.make(quick=True, repeat=None, seed=1)
    rows = table_rows({"azure": document["benchmarks"]["azure"]}, config)
    assert rows == document["table"]
    assert [row["met"] for row in rows if row["target"]] == [
        target["met"] for target in document["benchmarks"]["azure"]["targets"]
    ]


# A child that spends BURN seconds of CPU in a thread that then ends, reports what its own clock says, and waits.
CHILD = """
import sys, threading, time
BURN = float(sys.argv[1])
def burn():
    began = time.thread_time()
    while time.thread_time() - began < BURN:
        pass
worker = threading.Thread(target=burn)
worker.start()
worker.join()
print(time.process_time(), flush=True)
sys.stdin.readline()
"""


def test_a_process_trees_cpu_is_read_to_the_millisecond_with_its_ended_threads():
    """/proc's utime + stime come in ticks of 10 ms; the tree's CPU is each process's own CPU-time clock."""
    burn = 0.123
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, str(burn)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            own = float(child.stdout.readline())
            measured = tree_cpu_seconds(child.pid)
        finally:
            child.communicate("\n")
    assert own >= burn
    assert abs(measured - own) < 0.002  # what the child says of itself, after its thread ended; ticks: up to 0.01
    mine = time.process_time()
    assert tree_cpu_seconds(os.getpid()) >= mine  # this process's clock, read later, and its children's
