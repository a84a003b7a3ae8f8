"""`make bench`: the service against the floor of the same work, measured in the same run (decision 0008).

Every benchmark is a median over repeated runs and a ratio to its floor (bench/floors.py) on the
same data; runs of the service and of its floor alternate, so that a noisy neighbour slows both.
Prints a table and writes bench/results/latest.json (machine, date, settings, every figure and
every sample). One module per benchmark (bench/accept.py, over_http.py, large_body.py,
reconciliation.py, cold_import.py, dashboard.py, export.py, azure_accept.py); measuring in bench/measure.py, the table
and the file in bench/report.py, the profiles in bench/profiles.py.

    python -m bench.run                 # the full run (BENCH_REPEAT=15 repetitions by default)
    python -m bench.run --quick         # one repetition, small sizes: a smoke test
    python -m bench.run --only accept,reconcile
    python -m bench.run --profile       # also pyinstrument and cProfile of accept and reconcile
                                        # into bench/results/profile-*.txt
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import orjson

from bench import (
    ROOT,
    accept,
    azure_accept,
    cold_import,
    dashboard,
    export,
    generate,
    large_body,
    over_http,
    profiles,
    reconcile_cosmos,
    reconciliation,
    worker_processes,
)
from bench.measure import Config
from bench.report import RESULTS_DIR, machine_info, render_table, table_rows, write_results
from triggers.garbage_collection import set_for_requests

# name in --only -> the benchmark's run(cfg, tmp), in the order they run and appear in the table's file
BENCHMARKS = {
    "accept": accept.run,
    "http": over_http.run,
    "large": large_body.run,
    "reconcile": reconciliation.run,
    "reconcile_cosmos": reconcile_cosmos.run,  # its request units on the Cosmos DB emulator (decision 0108)
    "import": cold_import.run,
    "workers": worker_processes.run,
    "dashboard": dashboard.run,
    "export": export.run,  # the Parquet export of a 10,000-record store-day and of a month of 100 stores
    "export_cosmos": export.run_cosmos,  # the same store-day's export from the Cosmos DB emulator
    "azure": azure_accept.run,  # the Azure accept against its floor, on the emulators (decision 0059)
}


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repetition and small sizes (a smoke test)")
    parser.add_argument("--repeat", type=int, default=None, help="repetitions (default $BENCH_REPEAT or 15)")
    parser.add_argument(
        "--only", default=",".join(BENCHMARKS), help=f"comma-separated subset of {','.join(BENCHMARKS)}"
    )
    parser.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="results file (default bench/results/latest.json; quick runs: bench/results/quick.json)",
    )
    parser.add_argument("--profile", action="store_true", help="also profile accept and reconcile")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument(
        "--show",
        type=Path,
        nargs="?",
        const=RESULTS_DIR / "latest.json",
        default=None,
        metavar="RESULTS",
        help="print the table of a results file (default latest.json) and exit",
    )
    parser.add_argument("--memory-probe", nargs=3, metavar=("KIND", "DIR", "BODY"), help=argparse.SUPPRESS)
    return parser


def _show(path: Path, markdown: bool) -> None:
    document = orjson.loads(path.read_bytes())
    machine = document["machine"]
    print(
        f"{machine['cpu_model']}, {machine['cores']} cores, Python {machine['python']}, "
        f"SQLite {machine['sqlite']}; {document['date']}; load average {machine['load_average_start'][0]:.2f} "
        f"-> {machine['load_average_end'][0]:.2f}\n"
    )
    print(render_table(document["table"], markdown=markdown))


def main(argv: list[str] | None = None) -> int:
    parser = _arguments()
    args = parser.parse_args(argv)
    if args.memory_probe:  # the fresh interpreter of the large-body benchmark
        kind, data_dir, body_path = args.memory_probe
        print(orjson.dumps(large_body.memory_probe(kind, Path(data_dir), Path(body_path))).decode())
        return 0
    if args.show:
        _show(args.show, args.markdown)
        return 0
    cfg = Config.make(args.quick, args.repeat, args.seed)
    selected = [name for name in args.only.split(",") if name]
    unknown = set(selected) - set(BENCHMARKS)
    if unknown:
        parser.error(f"unknown benchmarks: {', '.join(sorted(unknown))}")
    out = args.out or RESULTS_DIR / ("quick.json" if cfg.quick else "latest.json")
    # The collector settings the app sets in its worker (function_app.py); the floors measured in this
    # process share them, as the HTTP floor server does.
    set_for_requests()

    started = time.perf_counter()
    results: dict = {}
    machine = machine_info()
    with tempfile.TemporaryDirectory(prefix="pos-bench-") as temp:
        tmp = Path(temp)
        for name in selected:
            print(f"[bench] {name} ...", file=sys.stderr, flush=True)
            began = time.perf_counter()
            results[name] = BENCHMARKS[name](cfg, tmp)
            results[name]["elapsed_s"] = time.perf_counter() - began
        written = []
        if args.profile:
            print("[bench] profiles ...", file=sys.stderr, flush=True)
            RESULTS_DIR.mkdir(parents=True, exist_ok=True)
            written = [str(path.relative_to(ROOT)) for path in profiles.profile(cfg, tmp, RESULTS_DIR)]
    machine["load_average_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    rows = table_rows(results, cfg)
    document = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine,
        "config": asdict(cfg),
        "elapsed_s": time.perf_counter() - started,
        "table": rows,
        "benchmarks": results,
        "profiles": written,
    }
    write_results(out, document)
    print(
        f"{machine['cpu_model']}, {machine['cores']} cores, Python {machine['python']}, SQLite {machine['sqlite']}; "
        f"{document['date']}; load {machine['load_average_start'][0]:.2f} -> {machine['load_average_end'][0]:.2f}"
    )
    print(render_table(rows, markdown=args.markdown))
    print(
        f"\n{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out} written in {document['elapsed_s']:.0f} s"
        + (f"; profiles: {', '.join(written)}" if written else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
