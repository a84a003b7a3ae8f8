"""How the benchmarks measure: the run's settings, timing, repetitions' statistics, ratios to a
floor, and the memory figures of a process (tracemalloc, VmRSS and its peak VmHWM on Linux).

Every figure is a median over repetitions and a ratio to its floor measured in the same run."""

from __future__ import annotations

import gc
import math
import os
import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    quick: bool
    repeat: int  # accept and resend repetitions; 1k/10k reconciliations
    records: int  # records per batch
    http_requests_1: int  # requests of the single client
    http_requests_4: int  # requests of each of the 4 clients
    http_clients: int
    large_bytes: int
    large_repeat: int
    recon_sizes: tuple[int, ...]
    recon_repeat_largest: int
    import_repeat: int
    seed: int

    @classmethod
    def make(cls, quick: bool, repeat: int | None, seed: int) -> Config:
        if quick:
            return cls(True, repeat or 1, 100, 2, 1, 4, 300_000, 1, (500, 1000, 2000), 1, 1, seed)
        repeat = repeat or int(os.environ.get("BENCH_REPEAT") or 15)
        return cls(
            False,
            repeat,
            500,
            max(10, 2 * repeat),
            max(3, repeat // 2),
            4,
            5_000_000,
            max(3, repeat // 3),
            (1_000, 10_000, 100_000),
            max(3, repeat // 3),
            max(3, repeat // 3),
            seed,
        )


def ms(seconds: float) -> float:
    return seconds * 1000


def timed(call: Callable[[], object]) -> tuple[float, object]:
    """Seconds one call took, and what it returned."""
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def summary(samples_ms: list[float]) -> dict:
    """Median, p99, extremes and every sample of a list of timings in ms."""
    ordered = sorted(samples_ms)
    return {
        "median_ms": statistics.median(ordered),
        "p99_ms": ordered[max(0, math.ceil(0.99 * len(ordered)) - 1)],
        "min_ms": ordered[0],
        "max_ms": ordered[-1],
        "n": len(ordered),
        "samples_ms": [round(value, 3) for value in samples_ms],
    }


def ratio(value: float, floor: float) -> float | None:
    return None if not floor else value / floor


def fresh() -> None:
    """Collect garbage before a timed call, so that no earlier call's garbage is collected inside it."""
    gc.collect()


def rss_kib(pid: int | str = "self") -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a process, in KiB (Linux)."""
    values = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(("VmRSS:", "VmHWM:")):
                name, amount = line.split(":")
                values[name] = int(amount.split()[0])
    return values


def reset_peak_rss(pid: int | str = "self") -> bool:
    """Reset VmHWM to the current RSS (Linux: write 5 to clear_refs); False when not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as control:
            control.write("5")
        return True
    except OSError:
        return False


def traced_peak(call: Callable[[], object]) -> int:
    """tracemalloc's peak (bytes) during one call."""
    fresh()
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
