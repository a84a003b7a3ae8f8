"""FUNCTIONS_WORKER_PROCESS_COUNT in the local host (devhost/workers.py): several worker processes share
the port, each serves requests and runs the queue trigger; a dead worker is started again; a supervisor
killed with SIGKILL leaves no worker behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from devhost.workers import worker_process_count
from tests.conftest import ROOT, make_partner, start_host
from tests.e2e.test_business_day import DIRECTIONS, open_store, wait_for_result
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

DAY = "2026-11-20"


def workers_of(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return sorted(int(child) for child in children)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def wait_until(condition, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.fixture
def two_workers(tmp_path):
    host = start_host(tmp_path, FUNCTIONS_WORKER_PROCESS_COUNT="2")
    # /health answers once one worker serves; the other may still be starting on a loaded machine.
    assert wait_until(lambda: len(workers_of(host.process.pid)) == 2), host.log()
    yield host
    host.stop()


def test_the_setting_is_read_as_the_functions_host_reads_it():
    assert worker_process_count({}) == 1
    assert worker_process_count({"FUNCTIONS_WORKER_PROCESS_COUNT": "4"}) == 4
    for wrong in ("0", "11", "two", "-1", "1.5"):
        with pytest.raises(ValueError, match="FUNCTIONS_WORKER_PROCESS_COUNT"):
            worker_process_count({"FUNCTIONS_WORKER_PROCESS_COUNT": wrong})


def test_a_wrong_count_stops_the_host_with_a_plain_message(tmp_path):
    env = {**os.environ, "POS_DATA_DIR": str(tmp_path), "FUNCTIONS_WORKER_PROCESS_COUNT": "0", "PORT": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "devhost"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert "Cannot start: FUNCTIONS_WORKER_PROCESS_COUNT must be a whole number from 1 to 10" in done.stderr


def serving_processes(host) -> set[int]:
    """The process ids that logged an accepted trade-records request."""
    entries = [json.loads(line) for line in host.log().splitlines() if line.startswith("{")]
    return {
        entry["process_id"]
        for entry in entries
        if entry.get("event") == "http_request" and entry.get("path") == "pos/v1/trade-records"
    }


def test_both_workers_serve_requests_and_a_day_is_reconciled(two_workers):
    workers = workers_of(two_workers.process.pid)
    assert len(workers) == 2
    partner = make_partner(two_workers)
    open_store(partner)
    records, sent = [], 0
    # Each batch on a connection of its own, four at a time: the kernel hands connections to either worker,
    # so both show up within a few batches unless one does not serve.
    with ThreadPoolExecutor(4) as pool:
        while serving_processes(two_workers) != set(workers) and sent < 40:
            batch = [trade_record("S1", DAY, [Line("P-BURGER", 2, 550)], tax=88) for _ in range(4 * 5)]
            bodies = [
                trade_batch("S1", DAY, batch[at : at + 5], batch_seq=sent + 1 + at // 5) for at in range(0, 20, 5)
            ]
            statuses = list(
                pool.map(
                    lambda body: (
                        requests.post(
                            two_workers.url("trade-records"), json=body, headers=partner.headers(), timeout=60
                        ).status_code
                    ),
                    bodies,
                )
            )
            assert statuses == [202] * 4
            records += batch
            sent += 4
    assert serving_processes(two_workers) == set(workers)
    totals = totals_of(records, {"01", "02"}, DIRECTIONS)
    assert partner.post("daily-close", daily_close("S1", DAY, totals, batch_count=sent)).status_code == 202
    result = wait_for_result(partner, "S1", DAY)
    assert result["status"] == "MATCHED", result


def test_a_killed_worker_is_started_again(two_workers):
    first, second = workers_of(two_workers.process.pid)
    os.kill(first, signal.SIGKILL)
    assert wait_until(
        lambda: len(workers_of(two_workers.process.pid)) == 2 and first not in workers_of(two_workers.process.pid)
    )
    assert second in workers_of(two_workers.process.pid)
    assert requests.get(two_workers.url("health"), timeout=5).status_code == 200
    assert "Worker process 0" in two_workers.log() and "signal SIGKILL" in two_workers.log()


def test_no_worker_outlives_a_killed_supervisor(two_workers):
    workers = workers_of(two_workers.process.pid)
    two_workers.process.kill()
    two_workers.process.wait(10)
    assert wait_until(lambda: all(gone(pid) for pid in workers))
    with pytest.raises(requests.ConnectionError):
        requests.get(two_workers.url("health"), timeout=2)
