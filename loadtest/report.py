"""What a load run reports: throughput, p50 and p99 latency and errors per endpoint, the memory verdict
(growth after warm-up against LOAD_MAX_RSS_GROWTH_MB), the reconciliations, and what the host log says
about messages delivered before their close was committed (decision 0046); as a dict (LOAD_JSON) and as text."""

from __future__ import annotations

import re
import statistics

from loadtest.client import Stats

EARLY = re.compile(r"reconciliation postponed: close (\S+) of (\S+)/(\S+) is not committed yet \(attempt 1 ")
SWEPT = re.compile(r"sweep re-enqueued (\d+) overdue")


def reconciliation_events(log_text: str) -> dict:
    """What the host log says about messages that did not reconcile their close at once.

    A message delivered before its close was committed (the close sends its message first, and under
    load the commit can wait longer than the 1 s delay) is postponed: the worker fails it, and the
    queue delivers it again after the visibility timeout (decision 0046)."""
    postponed = [{"close_batch_id": m[1], "store_id": m[2], "business_date": m[3]} for m in EARLY.finditer(log_text)]
    return {"postponed_before_commit": postponed, "swept": sum(int(m[1]) for m in SWEPT.finditer(log_text))}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[index]


# On SQLite the server's memory settles as it works, not as time passes: each connection's page cache (up to
# 2 MB per connection and database) fills with the data written, which is part of it (with 100 KiB caches a
# 60 s run grew 10 MiB instead of 14). It levels off after about this many requests of the mix (the 300 s
# run of docs/reliability.md, "The load run on the Azure path"), which a loaded machine serves later than
# the first quarter of a 60 s run. The Azure adapters keep no such cache: time alone there.
WARM_UP_REQUESTS = {"sqlite": 2_500, "azure": 0}


def memory_verdict(
    samples: list[tuple[float, int, int]], seconds: float, limit_mib: float, warm_up_requests: int = 0
) -> dict:
    """Growth after the warm-up: the first quarter of the run (at least 5 s), and at least `warm_up_requests`
    served; `samples` are (seconds, RSS in KiB, requests served so far)."""
    warm_up = max(5.0, seconds / 4)
    warmed = [at for at, _, served in samples if at >= warm_up and served >= warm_up_requests]
    warm_up = warmed[0] if warmed else warm_up
    after = [rss for at, rss, _ in samples if warmed and at >= warm_up]
    if len(after) < 8:
        return {
            "warm_up_s": warm_up,
            "ok": True,
            "reason": (
                "not judged: too few samples after the warm-up (run longer, or sample more often)"
                if warmed
                else f"not judged: fewer than {warm_up_requests} requests served (the warm-up): run longer"
            ),
        }
    quarter = max(1, len(after) // 4)
    baseline, final = statistics.median(after[:quarter]), statistics.median(after[-quarter:])
    growth_mib = (final - baseline) / 1024
    return {
        "warm_up_s": warm_up,
        "baseline_mib": round(baseline / 1024, 1),
        "final_mib": round(final / 1024, 1),
        "growth_mib": round(growth_mib, 1),
        "limit_mib": limit_mib,
        "peak_mib": round(max(after) / 1024, 1),
        "ok": growth_mib <= limit_mib,
    }


def report(
    stats: Stats,
    elapsed: float,
    samples,
    memory: dict,
    results: dict[str, int],
    settings: dict,
    events: dict | None = None,
    not_matched: list[str] | None = None,
) -> dict:
    endpoints = {}
    for endpoint in sorted(stats.latencies):
        values = stats.latencies[endpoint]
        endpoints[endpoint] = {
            "requests": len(values),
            "per_s": round(len(values) / elapsed, 1),
            "p50_ms": round(percentile(values, 0.50) * 1000, 1),
            "p99_ms": round(percentile(values, 0.99) * 1000, 1),
            "max_ms": round(max(values) * 1000, 1),
            "errors": stats.errors.get(endpoint, 0),
        }
    every = [value for values in stats.latencies.values() for value in values]
    total = {
        "requests": len(every),
        "per_s": round(len(every) / elapsed, 1),
        "records_per_s": round(stats.records / elapsed, 1),
        "p50_ms": round(percentile(every, 0.50) * 1000, 1),
        "p99_ms": round(percentile(every, 0.99) * 1000, 1),
        "errors": sum(stats.errors.values()),
    }
    return {
        "settings": settings,
        "elapsed_s": round(elapsed, 1),
        "endpoints": endpoints,
        "total": total,
        "reconciliations": results,
        "not_matched": not_matched or [],
        "reconciliation_events": events or {"postponed_before_commit": [], "swept": 0},
        "memory": memory,
        "rss_samples": [
            {"t_s": round(at, 1), "rss_mib": round(rss / 1024, 1), "requests": count} for at, rss, count in samples
        ],
        "error_samples": stats.error_samples,
    }


def print_report(figures: dict) -> None:
    settings = figures["settings"]
    print(
        f"\nLoad run: {figures['elapsed_s']} s, {settings['clients']} clients ({settings['partners']} partners x "
        f"{settings['stores_per_partner']} stores), backend {settings['backend']}, {settings['machine']}"
    )
    header = f"{'endpoint':<30} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'errors':>7}"
    print(header)
    print("-" * len(header))
    for endpoint, row in figures["endpoints"].items():
        print(
            f"{endpoint:<30} {row['requests']:>9} {row['per_s']:>8} {row['p50_ms']:>8} {row['p99_ms']:>8} "
            f"{row['max_ms']:>8} {row['errors']:>7}"
        )
    total = figures["total"]
    print("-" * len(header))
    print(
        f"{'all':<30} {total['requests']:>9} {total['per_s']:>8} {total['p50_ms']:>8} {total['p99_ms']:>8} "
        f"{'':>8} {total['errors']:>7}"
    )
    print(f"trade records accepted: {total['records_per_s']} per second")
    print(f"daily closes reconciled: {figures['reconciliations']}")
    events = figures["reconciliation_events"]
    early = events["postponed_before_commit"]
    print(
        f"messages delivered before their close was committed (delivered again 30 s later): {len(early)}; "
        f"closes re-sent by the sweep: {events['swept']}"
    )
    for close in early:
        print(f"  early: close {close['close_batch_id']} of {close['store_id']}/{close['business_date']}")
    for close in figures["not_matched"]:
        print(f"not matched: {close}")
    print("\nserver memory (VmRSS) over time:")
    previous = (0.0, 0)
    for sample in figures["rss_samples"][:: max(1, len(figures["rss_samples"]) // 15)]:
        rate = (sample["requests"] - previous[1]) / max(sample["t_s"] - previous[0], 1e-9)
        print(
            f"  t={sample['t_s']:>6.1f} s  rss={sample['rss_mib']:>7.1f} MiB  requests={sample['requests']:>7}"
            f"  ({rate:.0f}/s)"
        )
        previous = (sample["t_s"], sample["requests"])
    memory = figures["memory"]
    if "growth_mib" in memory:
        print(
            f"memory after the {memory['warm_up_s']:.0f} s warm-up: {memory['baseline_mib']} -> "
            f"{memory['final_mib']} MiB (growth {memory['growth_mib']} MiB, limit {memory['limit_mib']} MiB, "
            f"peak {memory['peak_mib']} MiB)"
        )
    else:
        print(f"memory: {memory.get('reason')}")
    for sample in figures["error_samples"]:
        print(f"error: {sample}")
