"""`make load`: a bounded load on loopback against a local host of its own (decision 0072).

Starts `python -m devhost` on a free port with a temporary data directory and the rate limit off,
onboards several partners with the real `hq` command line, then runs one closed-loop client thread
per store (keep-alive HTTP/1.1) for LOAD_SECONDS (default 60) with a mix of trade-record batches,
resends, daily closes, status polls, reference and mapping reads, health checks and master-data
updates (loadtest/workload.py). Meanwhile it samples the server's resident memory (VmRSS of
/proc/<pid>/status). At the end it waits for every daily close sent to be reconciled, and each must
be MATCHED: the run also checks that nothing was lost or counted twice under load. The report counts
the reconciliation messages that came before their close was committed (decision 0046: the worker fails
them, and the queue delivers them again 30 s later) and the closes the sweep re-sent.

It reports throughput, p50 and p99 latency and errors per endpoint, and memory over time; it exits
non-zero on any error, on any close not MATCHED, or when memory grew after warm-up by more than
LOAD_MAX_RSS_GROWTH_MB (default 10 MiB: the median of the last quarter of the samples against the
median of the first quarter after warm-up: the first quarter of the run, and on SQLite at least 2,500
requests served, loadtest/report.py says why; a run too short for eight samples after warm-up is not judged).

Settings (environment): LOAD_SECONDS, LOAD_PARTNERS (4), LOAD_STORES_PER_PARTNER (2, one client
each), LOAD_SAMPLE_SECONDS (2), LOAD_MAX_RSS_GROWTH_MB (10), LOAD_BACKEND (sqlite; "azure" runs the
host on the Cosmos DB and Azurite emulators), LOAD_SEED (1), LOAD_JSON (a path to write the figures to).

The host: loadtest/host.py; the clients: loadtest/client.py; the figures: loadtest/report.py.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from loadtest.client import Stats, drive, sample_memory, wait_for_results
from loadtest.host import onboard, start_host
from loadtest.report import WARM_UP_REQUESTS, memory_verdict, print_report, reconciliation_events, report

DRAIN_SECONDS = 120


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


def main() -> int:
    seconds = float(os.environ.get("LOAD_SECONDS") or 60)
    partners = _int("LOAD_PARTNERS", 4)
    stores = _int("LOAD_STORES_PER_PARTNER", 2)
    every = float(os.environ.get("LOAD_SAMPLE_SECONDS") or 2)
    limit = float(os.environ.get("LOAD_MAX_RSS_GROWTH_MB") or 10)
    backend = (os.environ.get("LOAD_BACKEND") or "sqlite").lower()
    seed = _int("LOAD_SEED", 1)
    work = Path(tempfile.mkdtemp(prefix="pos-load-"))
    settings = {
        "seconds": seconds,
        "partners": partners,
        "stores_per_partner": stores,
        "clients": partners * stores,
        "backend": backend,
        "sample_s": every,
        "seed": seed,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
    }
    print(f"Starting a local host ({backend}) in {work} ...", flush=True)
    host = start_host(work, backend)
    try:
        workers = onboard(host, partners, stores, seed)
        stats, samples = Stats(), []
        stop, sampling_stop = threading.Event(), threading.Event()
        started = time.monotonic()
        sampler = threading.Thread(
            target=sample_memory, args=(host, sampling_stop, every, started, stats, samples), daemon=True
        )
        sampler.start()
        threads = [
            threading.Thread(target=drive, args=(worker, host.port, stop, stats), daemon=True) for worker in workers
        ]
        for thread in threads:
            thread.start()
        print(f"{len(workers)} clients running for {seconds:.0f} s ...", flush=True)
        stop.wait(seconds)
        stop.set()
        for thread in threads:
            thread.join(180)
        elapsed = time.monotonic() - started
        sampling_stop.set()
        sampler.join(10)
        alive = host.process is not None and host.process.poll() is None
        not_matched: list[str] = []
        results = wait_for_results(workers, host.port, DRAIN_SECONDS, not_matched) if alive else {}
        events = reconciliation_events((work / "host.log").read_text(errors="replace"))
        memory = memory_verdict(samples, elapsed, limit, WARM_UP_REQUESTS.get(backend, 0))
        figures = report(stats, elapsed, samples, memory, results, settings, events, not_matched)
        print_report(figures)
        if os.environ.get("LOAD_JSON"):
            Path(os.environ["LOAD_JSON"]).write_text(json.dumps(figures, indent=2))
        failures = []
        if not alive:
            failures.append("the host died")
        if figures["total"]["errors"]:
            failures.append(f"{figures['total']['errors']} requests failed")
        if set(results) - {"MATCHED"}:
            failures.append(f"not every close MATCHED: {results}")
        if not figures["memory"]["ok"]:
            failures.append("server memory grew beyond the limit after warm-up")
        print("\nRESULT: " + ("FAIL: " + "; ".join(failures) if failures else "PASS"), flush=True)
        return 1 if failures else 0
    finally:
        host.stop()
        if not os.environ.get("LOAD_KEEP"):
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}")


if __name__ == "__main__":
    sys.exit(main())
