"""The load run's figures (loadtest/report.py) from known samples: percentiles, the memory verdict after
warm-up and the per-endpoint report. The load itself runs in `make load`, not in the tests."""

from __future__ import annotations

from loadtest.client import Stats
from loadtest.report import memory_verdict, percentile, report
from loadtest.workload import Request


def test_percentile_is_a_sample_of_the_run():
    values = [float(value) for value in range(100, 0, -1)]
    assert percentile(values, 0.50) == 50.0 and percentile(values, 0.99) in (99.0, 100.0)
    assert (percentile([3.0, 1.0, 2.0], 0.5), percentile([7.0], 0.99), percentile(values, 1.0)) == (2.0, 7.0, 100.0)


def test_memory_is_judged_after_the_warm_up_and_only_with_enough_samples():
    steady = [(float(second), 50 * 1024, second * 100) for second in range(40)]
    growing = [(float(second), (50 + second) * 1024, second * 100) for second in range(40)]

    assert memory_verdict(steady, 40, 10)["ok"] and memory_verdict(steady, 40, 10)["growth_mib"] == 0
    verdict = memory_verdict(growing, 40, 10)
    assert verdict["warm_up_s"] == 10 and verdict["growth_mib"] > 10 and not verdict["ok"]
    assert memory_verdict(growing[:12], 12, 10) == {
        "warm_up_s": 5.0,
        "ok": True,
        "reason": "not judged: too few samples after the warm-up (run longer, or sample more often)",
    }


def test_the_warm_up_lasts_until_enough_requests_were_served():
    """Memory settles with the work done: on a loaded machine the first quarter of the run is not enough."""
    settling = [(float(second), (50 + min(second, 20)) * 1024, second * 100) for second in range(40)]
    assert not memory_verdict(settling, 40, 5)["ok"]  # judged from 10 s: still settling
    verdict = memory_verdict(settling, 40, 5, warm_up_requests=2_000)
    assert (verdict["warm_up_s"], verdict["growth_mib"], verdict["ok"]) == (20.0, 0, True)
    assert memory_verdict(settling, 40, 5, warm_up_requests=10_000) == {
        "warm_up_s": 10.0,
        "ok": True,
        "reason": "not judged: fewer than 10000 requests served (the warm-up): run longer",
    }


def test_report_counts_requests_records_and_errors_per_endpoint():
    stats = Stats()
    batch = Request("POST trade-records", "POST", "trade-records", b"{}", (202,), records=100)
    health = Request("GET health", "GET", "health", None, (200,))
    stats.add(batch, 0.100, None)
    stats.add(batch, 0.200, None)
    stats.add(batch, 0.300, "HTTP 500")
    stats.add(health, 0.002, None)

    figures = report(stats, 2.0, [], {"ok": True}, {"MATCHED": 1}, {"clients": 1})

    assert figures["endpoints"]["POST trade-records"] == {
        "requests": 3,
        "per_s": 1.5,
        "p50_ms": 200.0,
        "p99_ms": 300.0,
        "max_ms": 300.0,
        "errors": 1,
    }
    assert figures["total"]["requests"] == 4 and figures["total"]["errors"] == 1
    assert figures["total"]["records_per_s"] == 100.0  # only the accepted batches' records
    assert figures["error_samples"] == ["POST trade-records: HTTP 500"]
    assert figures["reconciliation_events"] == {"postponed_before_commit": [], "swept": 0}
