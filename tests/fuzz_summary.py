"""Summary of a `make fuzz` run: one line per operation and generation mode, then the totals.

`python -m tests.fuzz_summary FILE` reads the JSON lines tests/e2e/test_fuzz.py appends to FUZZ_SUMMARY.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def main(path: str) -> int:
    file = Path(path)
    runs = [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()] if file.exists() else []
    if not runs:
        print("fuzz: no run was recorded")
        return 1
    runs.sort(key=lambda run: (run["operation"].split(" ", 1)[1], run["operation"], run["mode"]))
    width = max(len(run["operation"]) for run in runs)
    print(f"\n{'operation':<{width}}  {'mode':<8}  {'calls':>6}  {'seconds':>7}  statuses  result")
    statuses: Counter = Counter()
    for run in runs:
        statuses.update({int(code): count for code, count in run["statuses"].items()})
        answered = " ".join(f"{code}:{count}" for code, count in run["statuses"].items())
        result = "ok" if run["failure"] is None else "FAILED"
        print(
            f"{run['operation']:<{width}}  {run['mode']:<8}  {run['calls']:>6}  {run['seconds']:>7}  "
            f"{answered}  {result}"
        )
    failed = [run for run in runs if run["failure"] is not None]
    seeds = sorted({run["seed"] for run in runs})
    examples = sorted({run["examples"] for run in runs})
    print(
        f"\n{len({run['operation'] for run in runs})} operations, {len(runs)} runs, "
        f"{sum(run['calls'] for run in runs)} requests ({examples} examples per run, seed {seeds}), "
        f"{sum(run['seconds'] for run in runs):.0f} s in all; statuses: "
        + " ".join(f"{code}:{count}" for code, count in sorted(statuses.items()))
    )
    server_errors = sum(count for code, count in statuses.items() if code >= 500)
    print(f"5xx answers: {server_errors}; failed runs: {len(failed)}")
    for run in failed:
        print(f"\n--- {run['operation']} ({run['mode']}) ---\n{run['failure']}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
