"""Benchmark 6: throughput of the local host with 1 and 2 worker processes (FUNCTIONS_WORKER_PROCESS_COUNT)
under 1, 2 and 4 keep-alive clients posting 500-record batches: records per second and p50/p99. Both hosts
run at once, on data of their own, and the client runs alternate between them, so that a noisy neighbour
slows both. What it shows: one process is one GIL, so its records per second stop growing at one core and
its p99 grows with the clients; a second process uses the second core (docs/performance.md)."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from bench import generate, harness
from bench.measure import Config, summary
from bench.over_http import _post_all, _process, host_env
from devhost.processes import free_port

PROCESS_COUNTS = (1, 2)
CLIENT_COUNTS = (1, 2, 4)


def _requests_per_client(cfg: Config) -> int:
    return 3 if cfg.quick else max(8, cfg.repeat)


def run(cfg: Config, tmp: Path) -> dict:
    per_client = _requests_per_client(cfg)
    needed = per_client * sum(CLIENT_COUNTS) + 2  # two warm-up batches per host
    hosts: dict[int, dict] = {}
    with contextlib.ExitStack() as stack:
        for processes in PROCESS_COUNTS:
            data = tmp / f"workers-{processes}"
            service = harness.open_service(data)
            key = harness.issue_key(service.storage)
            port = free_port()
            env = host_env(data, port, FUNCTIONS_WORKER_PROCESS_COUNT=str(processes))
            stack.enter_context(
                _process([sys.executable, "-m", "devhost"], env, port, tmp / f"host-{processes}.log", "/pos/v1/health")
            )
            bodies = generate.batch_bodies(needed, cfg.records, seed=cfg.seed, tag=f"W{processes}")
            headers = {"Content-Type": "application/json", "x-functions-key": key}
            _post_all(port, "/pos/v1/trade-records", headers, bodies[:2], 1)  # warm-up
            hosts[processes] = {"port": port, "headers": headers, "bodies": bodies[2:]}

        results: dict = {"records": cfg.records, "requests_per_client": per_client, "runs": {}}
        for clients in CLIENT_COUNTS:
            # alternate the order per client count: 1 then 2 processes, then 2 then 1
            order = PROCESS_COUNTS if clients % 2 else tuple(reversed(PROCESS_COUNTS))
            for processes in order:
                host = hosts[processes]
                count = per_client * clients
                bodies, host["bodies"] = host["bodies"][:count], host["bodies"][count:]
                run_ = _post_all(host["port"], "/pos/v1/trade-records", host["headers"], bodies, clients)
                if run_["statuses"] != {202: count}:
                    raise RuntimeError(f"{processes} processes, {clients} clients: not all accepted: {run_}")
                results["runs"][f"processes_{processes}_clients_{clients}"] = {
                    **summary(run_["latencies_ms"]),
                    "records_per_s": count * cfg.records / run_["wall_s"],
                }
    return results


def table(results: dict) -> list[tuple[str, str]]:
    """(label, figures) rows for the report: records per second and p50/p99 per processes and clients."""
    rows = []
    for processes in PROCESS_COUNTS:
        for clients in CLIENT_COUNTS:
            figures = results["runs"][f"processes_{processes}_clients_{clients}"]
            rows.append(
                (
                    f"{processes} process{'es' if processes > 1 else ''}, {clients} client{'s' if clients > 1 else ''}",
                    f"{figures['records_per_s']:,.0f} records/s, p50 {figures['median_ms']:.0f} ms, "
                    f"p99 {figures['p99_ms']:.0f} ms",
                )
            )
    return rows
