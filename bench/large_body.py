"""Benchmark 3: a large body (5 MB; 0.3 MB quick) accepted in-process: latency against the floor, and peak
memory as a multiple of the body, by tracemalloc here and by the peak RSS growth of a fresh interpreter
(`python -m bench.run --memory-probe`, which calls `memory_probe`)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

import orjson

from bench import ROOT, floors, generate, harness
from bench.measure import Config, fresh, ms, ratio, reset_peak_rss, rss_kib, summary, timed, traced_peak


def memory_probe(kind: str, data_dir: Path, body_path: Path) -> dict:
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
    fresh()
    if not reset_peak_rss():
        return {}
    before = rss_kib()
    call(body)
    after = rss_kib()
    return {
        "rss_before_kib": before["VmRSS"],
        "rss_peak_kib": after["VmHWM"],
        "rss_after_kib": after["VmRSS"],
        "peak_growth_x_body": (after["VmHWM"] - before["VmRSS"]) * 1024 / len(body),
    }


def _probe(kind: str, tmp: Path, body: bytes) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"probe-{kind}-", dir=tmp))
    body_path = work / "body.json"
    body_path.write_bytes(body)
    done = subprocess.run(
        [sys.executable, "-m", "bench.run", "--memory-probe", kind, str(work), str(body_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode:
        raise RuntimeError(f"memory probe failed:\n{done.stderr[-3000:]}")
    return orjson.loads(done.stdout.strip().splitlines()[-1])


def run(cfg: Config, tmp: Path) -> dict:
    service = harness.open_service(tmp / "large")
    floor_db = floors.connect(tmp / "large" / "floor.sqlite3")
    bodies = generate.batch_bodies(cfg.large_repeat + 3, None, target_bytes=cfg.large_bytes, seed=cfg.seed, tag="B")
    size = len(bodies[0])
    records = len(orjson.loads(bodies[0])["trade_records"])
    service_ms, floor_ms = [], []
    for index, body in enumerate(bodies[: cfg.large_repeat + 1]):
        fresh()
        service_s, outcome = timed(partial(service.post_trade_records, body))
        if outcome.http_status != 202 or outcome.warnings:
            raise RuntimeError(f"the large body was not accepted cleanly: {outcome.as_dict()}")
        fresh()
        floor_s, _ = timed(partial(floors.accept, floor_db, body))
        if index:  # the first is a warm-up
            service_ms.append(ms(service_s))
            floor_ms.append(ms(floor_s))
    service_traced = traced_peak(lambda: service.post_trade_records(bodies[-2]))
    floor_traced = traced_peak(lambda: floors.accept(floor_db, bodies[-2]))
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
