"""Benchmark 5: the cold import of function_app (`-X importtime` of a fresh interpreter) against `import
azure.functions` alone, which any Functions app needs, and the heaviest imports."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import ROOT
from bench.measure import Config, ratio, summary

_IMPORTTIME = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def _import_run(module: str) -> tuple[float, dict[str, tuple[int, int, int]]]:
    """Wall seconds of a fresh interpreter importing module, and -X importtime per module
    (self us, cumulative us, depth)."""
    env = {**os.environ}
    env.pop("APPLICATIONINSIGHTS_CONNECTION_STRING", None)
    code = f"import {module}" if module else "pass"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    wall = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"python -c '{code}' failed:\n{done.stderr[-3000:]}")
    modules = {}
    for line in done.stderr.splitlines():
        match = _IMPORTTIME.match(line)
        if match:
            modules[match.group(4)] = (int(match.group(1)), int(match.group(2)), (len(match.group(3)) - 1) // 2)
    return wall, modules


def run(cfg: Config, tmp: Path) -> dict:
    """Fresh interpreters need no working folder: tmp is unused."""
    runs = {"function_app": [], "azure.functions": [], "": []}
    tables = []
    for _ in range(cfg.import_repeat + 1):
        for module in runs:
            wall, modules = _import_run(module)
            cumulative = modules.get(module, (0, 0, 0))[1] / 1000 if module else 0.0
            runs[module].append((wall * 1000, cumulative))
            if module == "function_app":
                tables.append(modules)
    for module in runs:
        runs[module] = runs[module][1:]  # the first run of each warms the page cache and __pycache__
    tables = tables[1:]
    app_import = statistics.median(c for _, c in runs["function_app"])
    floor_import = statistics.median(c for _, c in runs["azure.functions"])
    median_table = sorted(tables, key=lambda t: t.get("function_app", (0, 0, 0))[1])[len(tables) // 2]
    heaviest = sorted(
        (
            (name, cum / 1000, own / 1000)
            for name, (own, cum, depth) in median_table.items()
            if depth <= 2 and name != "function_app"
        ),
        key=lambda item: -item[1],
    )[:15]
    own_heaviest = sorted(
        ((name, own / 1000) for name, (own, cum, depth) in median_table.items()), key=lambda item: -item[1]
    )[:15]
    return {
        "function_app_import_ms": summary([c for _, c in runs["function_app"]]),
        "function_app_process_wall_ms": summary([w for w, _ in runs["function_app"]]),
        "azure_functions_import_ms": summary([c for _, c in runs["azure.functions"]]),
        "bare_interpreter_wall_ms": summary([w for w, _ in runs[""]]),
        "ratio": ratio(app_import, floor_import),
        "floor_explained": "the floor is `import azure.functions` alone, which any Functions app needs; both "
        "are -X importtime cumulative figures of a fresh interpreter (the bare interpreter's "
        "own start is reported beside them)",
        "heaviest_imports_ms": [
            {"module": name, "cumulative_ms": round(cum, 1), "self_ms": round(own, 1)} for name, cum, own in heaviest
        ],
        "heaviest_self_ms": [{"module": name, "self_ms": round(own, 1)} for name, own in own_heaviest],
    }
