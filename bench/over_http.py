"""Benchmark 2: the accept over HTTP (the local host, `python -m devhost`) against the HTTP floor
(bench/floor_server.py) with 1 and 4 keep-alive clients, and each large body alone with the host's
peak RSS growth. Both servers run as processes of their own for the whole benchmark."""

from __future__ import annotations

import contextlib
import http.client
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import orjson

from bench import ROOT, generate, harness
from bench.measure import Config, ms, ratio, reset_peak_rss, rss_kib, summary
from devhost.processes import free_port, wait_until_serving


@contextlib.contextmanager
def _process(command: list[str], env: dict, port: int, log_path: Path, health: str):
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until_serving(
            process, port, health, str(command), lambda: log_path.read_text(errors="replace")[-4000:], timeout=60
        )
        yield process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def host_env(data: Path, port: int, **settings: str) -> dict[str, str]:
    """The environment of a benchmarked local host: its own data and port, no demo partner, no rate limit,
    no telemetry export."""
    env = {
        **os.environ,
        "POS_DATA_DIR": str(data),
        "PORT": str(port),
        "POS_CREATE_DEMO_PARTNER": "false",
        "RATE_LIMIT_PER_MINUTE": "0",
        "PYTHONUNBUFFERED": "1",
        **settings,
    }
    env.pop("APPLICATIONINSIGHTS_CONNECTION_STRING", None)
    return env


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
                latencies.append(ms(elapsed))
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
    return {
        "latencies_ms": latencies,
        "wall_s": wall,
        "statuses": dict(statuses),
        "warnings": warnings[0],
        "errors": errors,
    }


def _alternating(targets: dict[str, tuple[int, str]], headers: dict, bodies: list[bytes]) -> dict[str, dict]:
    """Each body POSTed to every target in turn, one persistent connection per target, the order of the
    targets reversed every round; per target what `_post_all` returns for one client."""
    connections = {
        name: http.client.HTTPConnection("127.0.0.1", port, timeout=300) for name, (port, _) in targets.items()
    }
    runs = {
        name: {"latencies_ms": [], "wall_s": 0.0, "statuses": defaultdict(int), "warnings": 0, "errors": []}
        for name in targets
    }
    for index, body in enumerate(bodies):
        for name in list(targets)[:: 1 if index % 2 == 0 else -1]:
            run = runs[name]
            began = time.perf_counter()
            connections[name].request("POST", targets[name][1], body, headers)
            response = connections[name].getresponse()
            answer = response.read()
            elapsed = time.perf_counter() - began
            run["latencies_ms"].append(ms(elapsed))
            run["wall_s"] += elapsed
            run["statuses"][response.status] += 1
            if response.status == 202:
                run["warnings"] += len(orjson.loads(answer).get("warnings") or [])
            elif len(run["errors"]) < 5:
                run["errors"].append(answer[:500].decode(errors="replace"))
    for connection in connections.values():
        connection.close()
    return {name: {**run, "statuses": dict(run["statuses"])} for name, run in runs.items()}


def _http_figures(run: dict, records: int) -> dict:
    ok = run["statuses"].get(202, 0)
    return {
        **summary(run["latencies_ms"]),
        "records_per_s": ok * records / run["wall_s"] if run["wall_s"] else None,
        "wall_s": run["wall_s"],
        "statuses": run["statuses"],
        "warnings": run["warnings"],
        "errors": run["errors"][:5],
    }


def _large_over_http(port: int, path: str, headers: dict, bodies: list[bytes], pid: int) -> dict:
    """Each large body alone; the process's RSS before and its peak (VmHWM) during, per body."""
    samples = []
    for body in bodies:
        reset_peak_rss(pid)
        before = rss_kib(pid)
        run = _post_all(port, path, headers, [body], 1)
        after = rss_kib(pid)
        if run["statuses"] != {202: 1} or run["warnings"]:
            raise RuntimeError(f"a large body was not accepted cleanly: {run}")
        samples.append(
            {
                "latency_ms": run["latencies_ms"][0],
                "rss_before_kib": before["VmRSS"],
                "rss_peak_kib": after["VmHWM"],
                "rss_after_kib": after["VmRSS"],
                "peak_growth_x_body": (after["VmHWM"] - before["VmRSS"]) * 1024 / len(body),
            }
        )
    return {
        "latency": summary([sample["latency_ms"] for sample in samples]),
        # The first large body meets a process that has only seen a small batch; later ones reuse the
        # memory the allocator kept from it, so their growth understates the need.
        "peak_growth_x_body": samples[0]["peak_growth_x_body"],
        "samples": samples,
    }


def run(cfg: Config, tmp: Path) -> dict:
    data = tmp / "http"
    service = harness.open_service(data)
    key = harness.issue_key(service.storage)
    count_1, count_4 = cfg.http_requests_1, cfg.http_requests_4 * cfg.http_clients
    warmup = 2
    bodies = generate.batch_bodies(warmup + count_1 + count_4, cfg.records, seed=cfg.seed, tag="H")
    small = generate.batch_bodies(1, 20, seed=cfg.seed, tag="S", first_seq=len(bodies) + 1)
    large = generate.batch_bodies(
        cfg.large_repeat, None, target_bytes=cfg.large_bytes, seed=cfg.seed, tag="L", first_seq=len(bodies) + 2
    )
    headers = {"Content-Type": "application/json", "x-functions-key": key}
    results: dict = {"records": cfg.records, "body_bytes": len(bodies[-1]), "large_body_bytes": len(large[0])}

    host_port = free_port()
    env = host_env(data, host_port)
    floor_port = free_port()
    floor_dir = tmp / "http-floor"
    floor_dir.mkdir()

    runs: dict = {"service": {}, "floor": {}}
    with (
        _process([sys.executable, "-m", "devhost"], env, host_port, tmp / "host.log", "/pos/v1/health") as host,
        _process(
            [sys.executable, "-m", "bench.floor_server", str(floor_port), str(floor_dir)],
            env,
            floor_port,
            tmp / "floor.log",
            "/",
        ) as floor,
    ):
        for name, port, path, pid in (
            ("service", host_port, "/pos/v1/trade-records", host.pid),
            ("floor", floor_port, "/trade-records", floor.pid),
        ):
            _post_all(port, path, headers, small, 1)  # a small warm-up, so that the large body meets a lean process
            runs[name]["large"] = _large_over_http(port, path, headers, large, pid)
            _post_all(port, path, headers, bodies[:warmup], 1)
        # One client: service and floor alternate request by request, each on its own persistent
        # connection (which goes first swaps every round), so that both meet the same neighbours.
        one = bodies[warmup : warmup + count_1]
        four = bodies[warmup + count_1 :]
        targets = {"service": (host_port, "/pos/v1/trade-records"), "floor": (floor_port, "/trade-records")}
        for name, run in _alternating(targets, headers, one).items():
            runs[name]["one"] = [run]
        for name in ("service", "floor"):
            runs[name]["four"] = _post_all(*targets[name], headers, four, cfg.http_clients)
        results["host_rss_end_kib"] = rss_kib(host.pid)

    for name in ("service", "floor"):
        parts = runs[name]["one"]
        merged = {
            "latencies_ms": [value for part in parts for value in part["latencies_ms"]],
            "wall_s": sum(part["wall_s"] for part in parts),
            "statuses": {
                status: sum(part["statuses"].get(status, 0) for part in parts)
                for part in parts
                for status in part["statuses"]
            },
            "warnings": sum(part["warnings"] for part in parts),
            "errors": [error for part in parts for error in part["errors"]],
        }
        results[name] = {
            "clients_1": _http_figures(merged, cfg.records),
            f"clients_{cfg.http_clients}": _http_figures(runs[name]["four"], cfg.records),
            "large": runs[name]["large"],
        }
    for clients in (1, cfg.http_clients):
        key_name = f"clients_{clients}"
        service, floor = results["service"][key_name], results["floor"][key_name]
        results[f"ratio_{key_name}"] = {
            "p50": ratio(service["median_ms"], floor["median_ms"]),
            "p99": ratio(service["p99_ms"], floor["p99_ms"]),
            "records_per_s": ratio(floor["records_per_s"] or 0, service["records_per_s"] or 0),
        }
    for name in ("service", "floor"):
        for key_name in ("clients_1", f"clients_{cfg.http_clients}"):
            figures = results[name][key_name]
            if figures["statuses"] != {202: figures["n"]} or figures["warnings"]:
                raise RuntimeError(f"HTTP {name} {key_name}: not every request was accepted cleanly: {figures}")
    return results
