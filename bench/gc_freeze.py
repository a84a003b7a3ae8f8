"""Do the app's garbage collector settings (triggers/garbage_collection.py, called at the end of
function_app.py: `gc.freeze()` and a higher threshold for the youngest generation) pay off under the
worker's conditions?

Each run is a fresh interpreter that does what the Python worker does: it imports function_app (with
the settings in place, or made no-ops before the import), then calls the user code of
post_trade_records with a func.HttpRequest from a thread of a pool, one 500-record batch after the
other (new batch_ids), on SQLite in a temporary folder. Runs with and without the freeze alternate,
the order swapped each round, so that a slower moment of the machine hits both alike.

    python -m bench.gc_freeze                 # 4 rounds of 30 accepts each way
    python -m bench.gc_freeze --rounds 2 --batches 10
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WARM_UP = 3  # accepts not counted: the first ones compile regexes, fill caches, open SQLite


def child(freeze: bool, batches: int) -> dict:
    """One worker-like process: its accept times in ms, and what the collector did meanwhile."""
    import gc

    if not freeze:  # function_app.py's settings become no-ops
        gc.freeze = lambda: None
        gc.set_threshold = lambda *thresholds: None
    data_dir = Path(tempfile.mkdtemp(prefix="gc-freeze-"))
    os.environ.update(
        POS_BACKEND="sqlite", POS_DATA_DIR=str(data_dir), POS_CREATE_DEMO_PARTNER="false", RATE_LIMIT_PER_MINUTE="0"
    )
    import azure.functions as func

    import function_app
    from bench import generate, harness

    service = harness.open_service(data_dir)
    key = harness.issue_key(service.storage)
    function = next(f for f in function_app.app.get_functions() if f.get_function_name() == "post_trade_records")
    user_code = function.get_user_function()

    class Context(func.Context):
        invocation_id = property(lambda self: "bench")
        function_name = property(lambda self: "post_trade_records")
        function_directory = trace_context = retry_context = thread_local_storage = property(lambda self: None)

    pauses: list[tuple[int, float]] = []  # (generation, ms) of each collection during the accepts
    collecting: dict = {}

    def on_collection(phase: str, info: dict) -> None:
        if phase == "start":
            collecting["started"] = time.perf_counter()
        elif "started" in collecting:
            pauses.append((info["generation"], (time.perf_counter() - collecting.pop("started")) * 1000))

    def accept(body: bytes) -> float:
        request = func.HttpRequest(
            "POST",
            "http://localhost/pos/v1/trade-records",
            body=body,
            headers={"x-functions-key": key, "content-type": "application/json"},
        )
        started = time.perf_counter()
        response = user_code(request, Context())
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 202:
            raise RuntimeError(f"accept answered {response.status_code}")
        return elapsed

    bodies = generate.batch_bodies(batches + WARM_UP, 500, tag="G")
    with ThreadPoolExecutor(1) as pool:  # the worker runs sync functions in a thread pool
        times = list(pool.map(accept, bodies[:WARM_UP]))
        gc.callbacks.append(on_collection)
        times = list(pool.map(accept, bodies[WARM_UP:]))
        gc.callbacks.remove(on_collection)
    full = [ms for generation, ms in pauses if generation == 2]
    return {
        "freeze": freeze,
        "ms": times,
        "frozen_objects": gc.get_freeze_count(),
        "full_collection_ms": full,
        "collections": len(pauses),
        "collection_ms": sum(ms for _, ms in pauses),
    }


def run_child(freeze: bool, batches: int) -> dict:
    ran = subprocess.run(
        [sys.executable, "-m", "bench.gc_freeze", "--child", "on" if freeze else "off", "--batches", str(batches)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    if ran.returncode != 0:
        raise RuntimeError(ran.stderr)
    return json.loads(ran.stdout.strip().splitlines()[-1])


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure(rounds: int, batches: int) -> dict:
    runs = {True: [], False: []}
    for round_ in range(rounds):
        order = (True, False) if round_ % 2 == 0 else (False, True)
        for freeze in order:
            runs[freeze].append(run_child(freeze, batches))
    report = {}
    for freeze, results in runs.items():
        samples = [ms for result in results for ms in result["ms"]]
        report["with the app's settings" if freeze else "without"] = {
            "accepts": len(samples),
            "p50_ms": round(statistics.median(samples), 1),
            "p90_ms": round(percentile(samples, 0.9), 1),
            "p99_ms": round(percentile(samples, 0.99), 1),
            "max_ms": round(max(samples), 1),
            "p50_ms_per_run": [round(statistics.median(result["ms"]), 1) for result in results],
            "frozen_objects": results[0]["frozen_objects"],
            "full_collections": sum(len(result["full_collection_ms"]) for result in results),
            "full_collection_p50_ms": round(
                statistics.median([ms for result in results for ms in result["full_collection_ms"]] or [0]), 2
            ),
            "collections_per_accept": round(sum(result["collections"] for result in results) / len(samples), 1),
            "collection_ms_per_accept": round(sum(result["collection_ms"] for result in results) / len(samples), 2),
        }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--child", choices=("on", "off"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child == "on", args.batches)))
        return 0
    print(json.dumps(measure(args.rounds, args.batches), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
