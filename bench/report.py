"""The report of a benchmark run: the machine it ran on, the table (benchmark, service, floor, ratio, target,
met) built from the figures, printed as text or Markdown, and the results document
(bench/results/latest.json) written atomically."""

from __future__ import annotations

import contextlib
import os
import platform
import sqlite3
import subprocess
from pathlib import Path

import orjson

from bench import ROOT
from bench.measure import Config, ratio

RESULTS_DIR = ROOT / "bench" / "results"
# The embedded accept's targets: its ratio to the floor of the same run in-process, and over HTTP with one
# client (p50) against the same floor behind the same stdlib server (decision 0119).
ACCEPT_TARGET_X = 2.2
HTTP_ACCEPT_TARGET_X = 2.5


def machine_info() -> dict:
    cpu = platform.processor() or ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        memory = int(Path("/proc/meminfo").read_text().splitlines()[0].split()[1]) // 1024
    versions = {}
    for module in ("pydantic", "pydantic_core", "orjson", "azure.functions"):
        with contextlib.suppress(Exception):
            versions[module] = __import__(module, fromlist=["__version__"]).__version__
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
    return {
        "cpu_model": cpu,
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "memory_mib": memory,
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "sqlite": sqlite3.sqlite_version,
        "versions": versions,
        "git_commit": commit.stdout.strip() or None,
        "git_dirty": bool(dirty.stdout.strip()),
        "load_average_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f} ms" if value >= 100 else f"{value:.1f} ms" if value >= 1 else f"{value:.2f} ms"


def fmt_x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def table_rows(results: dict, cfg: Config) -> list[dict]:
    rows = []

    def add(name, service, floor, ratio_text, target="", verdict=None):
        rows.append(
            {
                "benchmark": name,
                "service": service,
                "floor": floor,
                "ratio": ratio_text,
                "target": target,
                "met": verdict,
            }
        )

    accept = results.get("accept")
    if accept:
        add(
            f"accept {accept['records']} records in-process ({accept['body_bytes'] / 1e6:.2f} MB), median",
            fmt_ms(accept["service"]["median_ms"]),
            fmt_ms(accept["floor"]["median_ms"]),
            fmt_x(accept["ratio"]),
            f"<= {ACCEPT_TARGET_X:g}x",
            accept["ratio"] <= ACCEPT_TARGET_X,
        )
        parse_floor = accept["floor_parts"]["orjson_loads"]["median_ms"]
        insert_floor = accept["floor_parts"]["sqlite_insert_json_text"]["median_ms"]
        for stage, figures in accept.get("stages", {}).items():
            # each stage against the floor's parse (orjson.loads of the same body), the store against its insert
            floor = insert_floor if stage.startswith("store") else parse_floor
            add(
                f"  stage: {stage}",
                fmt_ms(figures["median_ms"]),
                fmt_ms(floor),
                fmt_x(ratio(figures["median_ms"], floor)),
            )
        resend = accept["resend"]
        add(
            "resend of a known batch_id, median",
            fmt_ms(resend["service"]["median_ms"]),
            fmt_ms(resend["floor"]["median_ms"]),
            fmt_x(resend["ratio"]),
            f"{resend['fraction_of_first_send']:.0%} of first send",
        )
    http_results = results.get("http")
    if http_results:
        for clients in (1, cfg.http_clients):
            key = f"clients_{clients}"
            service, floor = http_results["service"][key], http_results["floor"][key]
            ratios = http_results[f"ratio_{key}"]
            add(
                f"HTTP {http_results['records']} records, {clients} client{'s' if clients > 1 else ''}: p50",
                fmt_ms(service["median_ms"]),
                fmt_ms(floor["median_ms"]),
                fmt_x(ratios["p50"]),
                f"<= {HTTP_ACCEPT_TARGET_X:g}x" if clients == 1 else "",
                (ratios["p50"] or 0) <= HTTP_ACCEPT_TARGET_X if clients == 1 else None,
            )
            add(
                f"HTTP {clients} client{'s' if clients > 1 else ''}: p99 (n={service['n']})",
                fmt_ms(service["p99_ms"]),
                fmt_ms(floor["p99_ms"]),
                fmt_x(ratios["p99"]),
                "p99 <= 150 ms" if clients == 1 else "",
                service["p99_ms"] <= 150 if clients == 1 else None,
            )
            add(
                f"HTTP {clients} client{'s' if clients > 1 else ''}: records/s",
                f"{service['records_per_s']:,.0f}/s",
                f"{floor['records_per_s']:,.0f}/s",
                fmt_x(ratios["records_per_s"]),
            )
    large = results.get("large")
    if large:
        memory = large["memory"]
        add(
            f"{large['body_bytes'] / 1e6:.2f} MB body ({large['records']} records) in-process, median",
            fmt_ms(large["service"]["median_ms"]),
            fmt_ms(large["floor"]["median_ms"]),
            fmt_x(large["ratio"]),
        )
        add(
            "  peak memory, tracemalloc, x body",
            f"{memory['service_tracemalloc_peak_x_body']:.1f}x",
            f"{memory['floor_tracemalloc_peak_x_body']:.1f}x",
            fmt_x(memory["tracemalloc_ratio"]),
            "<= 10x body",
            memory["service_tracemalloc_peak_x_body"] <= 10,
        )
        if memory["service_rss_peak_growth_x_body"] is not None:
            add(
                "  peak RSS growth, fresh process, x body",
                f"{memory['service_rss_peak_growth_x_body']:.1f}x",
                f"{memory['floor_rss_peak_growth_x_body']:.1f}x",
                fmt_x(ratio(memory["service_rss_peak_growth_x_body"], memory["floor_rss_peak_growth_x_body"])),
                "<= 10x body",
                memory["service_rss_peak_growth_x_body"] <= 10,
            )
    if http_results:
        service_large, floor_large = http_results["service"]["large"], http_results["floor"]["large"]
        add(
            f"{http_results['large_body_bytes'] / 1e6:.2f} MB body over HTTP, median",
            fmt_ms(service_large["latency"]["median_ms"]),
            fmt_ms(floor_large["latency"]["median_ms"]),
            fmt_x(ratio(service_large["latency"]["median_ms"], floor_large["latency"]["median_ms"])),
        )
        add(
            "  host RSS peak growth, x body",
            f"{service_large['peak_growth_x_body']:.1f}x",
            f"{floor_large['peak_growth_x_body']:.1f}x",
            fmt_x(ratio(service_large["peak_growth_x_body"], floor_large["peak_growth_x_body"])),
            "<= 10x body",
            service_large["peak_growth_x_body"] <= 10,
        )
    recon = results.get("reconcile")
    if recon:
        largest = max(int(size) for size in recon["sizes"])
        for size, figures in recon["sizes"].items():
            is_largest = int(size) == largest
            add(
                f"reconcile {int(size):,} transactions, median",
                fmt_ms(figures["service"]["median_ms"]),
                fmt_ms(figures["floor"]["median_ms"]),
                fmt_x(figures["ratio"]),
                "<= 1.5x" if is_largest else "",
                figures["ratio"] <= 1.5 if is_largest else None,
            )
            add(
                f"  per 1k transactions at {int(size):,}",
                fmt_ms(figures["service_ms_per_1k"]),
                fmt_ms(figures["floor_ms_per_1k"]),
                "",
            )
        scaling = recon["scaling"]["service_per_1k_largest_over_smallest"]
        add(
            "  scaling: per-1k time largest / smallest",
            f"{scaling:.2f}",
            f"{recon['scaling']['floor_per_1k_largest_over_smallest']:.2f}",
            f"{recon['scaling']['ratio_largest_over_smallest']:.2f}",
            "linear (~1)",
            scaling <= 1.5,
        )
    recon_cosmos = results.get("reconcile_cosmos")
    if recon_cosmos:
        for figures in recon_cosmos["sizes"].values():
            add(
                f"reconcile {figures['records']:,} records on Cosmos DB, RU (requests)",
                f"{figures['ru']:.1f} RU ({figures['requests']})",
                "-" if figures["summing_the_records_ru"] is None else f"{figures['summing_the_records_ru']:.0f} RU",
                "",
                f"<= {recon_cosmos['target_ru']} RU",
                figures["met"],
            )
    imports = results.get("import")
    if imports:
        add(
            "cold import of function_app (-X importtime), median",
            fmt_ms(imports["function_app_import_ms"]["median_ms"]),
            fmt_ms(imports["azure_functions_import_ms"]["median_ms"]),
            fmt_x(imports["ratio"]),
            "<= 1 s",
            imports["function_app_import_ms"]["median_ms"] <= 1000,
        )
        add(
            "  fresh interpreter wall: import function_app / bare",
            fmt_ms(imports["function_app_process_wall_ms"]["median_ms"]),
            fmt_ms(imports["bare_interpreter_wall_ms"]["median_ms"]),
            "",
        )
    workers = results.get("workers")
    if workers:
        for clients in (1, 2, 4):
            one, two = (workers["runs"][f"processes_{count}_clients_{clients}"] for count in (1, 2))
            add(
                f"worker processes, {clients} client{'s' if clients > 1 else ''}: records/s, 2 vs 1 process",
                f"{two['records_per_s']:,.0f}/s",
                f"{one['records_per_s']:,.0f}/s",
                f"{two['records_per_s'] / one['records_per_s']:.2f}x",
            )
            add(
                "  p50 / p99, 2 vs 1 process",
                f"{two['median_ms']:.0f} / {two['p99_ms']:.0f} ms",
                f"{one['median_ms']:.0f} / {one['p99_ms']:.0f} ms",
                fmt_x(ratio(two["p99_ms"], one["p99_ms"])),
            )
    pages = results.get("dashboard")
    if pages:
        for name, label in (
            ("overview", f"dashboard overview, {pages['stores']} stores x {pages['days']} days"),
            ("store_day", f"dashboard store-day of {pages['store_day_records']:,} records"),
        ):
            page = pages["pages"][name]
            add(
                f"{label}, median",
                fmt_ms(page["service"]["median_ms"]),
                fmt_ms(page["floor"]["median_ms"]),
                fmt_x(page["ratio"]),
                f"< {pages['target_ms']} ms",
                page["met"],
            )
    export = results.get("export")
    if export:
        day, month = export["store_day"], export["month"]
        add(
            f"export of a {day['records']:,}-record store-day ({day['bytes'] / 1e6:.1f} MB Parquet), median",
            fmt_ms(day["service"]["median_ms"]),
            fmt_ms(day["floor"]["median_ms"]),
            fmt_x(day["ratio"]),
        )
        add_export_stages(add, day)
        add_side_by_side(add, day)
        add_second_floor(add, day, "stored_form_floor", "  against the least export of its stored JSON documents")
        add(
            f"export of {month['stores']} stores x {month['days']} days "
            f"({month['records_per_day']} records a day, {month['files']:,} files), median",
            fmt_ms(month["service"]["median_ms"]),
            fmt_ms(month["floor"]["median_ms"]),
            fmt_x(month["ratio"]),
        )
    export_cosmos = results.get("export_cosmos")
    if export_cosmos:
        day = export_cosmos["store_day"]
        add(
            f"export of a {day['records']:,}-record store-day from the Cosmos DB emulator, median",
            fmt_ms(day["service"]["median_ms"]),
            fmt_ms(day["floor"]["median_ms"]),
            fmt_x(day["ratio"]),
        )
        add_export_stages(add, day)
        add_second_floor(add, day, "read_floor", "  against the SDK's own read of the same items")
    azure = results.get("azure")
    if azure:
        from bench.azure_accept import report_rows  # imported here: bench/azure_accept.py imports this module

        rows += report_rows(azure)
    return rows


def add_export_stages(add, day: dict) -> None:
    """The export of a store-day in its stages, each against the floor (the writing of the files)."""
    floor = day["floor"]["median_ms"]
    for stage, label in (("read", "read the pages"), ("tables", "build the tables")):
        median = day["stages"][stage]["median_ms"]
        add(f"  stage: {label}", fmt_ms(median), fmt_ms(floor), fmt_x(ratio(median, floor)))


def add_second_floor(add, day: dict, name: str, label: str) -> None:
    """The store-day against a second floor timed in the same rounds, with its target."""
    if name in day:
        target = day[f"{name}_target"]
        add(
            label,
            fmt_ms(day["service"]["median_ms"]),
            fmt_ms(day[name]["median_ms"]),
            fmt_x(day[f"ratio_to_{name}"]),
            f"<= {target:g}x",
            day[f"ratio_to_{name}"] <= target,
        )


def add_side_by_side(add, day: dict) -> None:
    """The store-day against the writer encoding the four files side by side, as the service does."""
    if "floor_side_by_side" in day:
        add(
            "  against the files encoded side by side (two threads)",
            fmt_ms(day["service"]["median_ms"]),
            fmt_ms(day["floor_side_by_side"]["median_ms"]),
            fmt_x(day["ratio_to_side_by_side"]),
        )


def render_table(rows: list[dict], markdown: bool = False) -> str:
    headers = ("benchmark", "service", "floor", "ratio", "target", "met")

    def cell(row, name):
        if name == "met":
            return "" if row["met"] is None else ("yes" if row["met"] else "NO")
        if markdown and name == "benchmark" and row[name].startswith("  "):
            return "· " + row[name].strip()  # Markdown drops the indent of a detail row
        return str(row[name])

    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join("---" for _ in headers) + " |"]
        lines += ["| " + " | ".join(cell(row, name).replace("|", "\\|") for name in headers) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(name), *(len(cell(row, name)) for row in rows)) for name in headers]
    lines = [
        "  ".join(name.ljust(width) for name, width in zip(headers, widths, strict=True)),
        "  ".join("-" * width for width in widths),
    ]
    lines += [
        "  ".join(cell(row, name).ljust(width) for name, width in zip(headers, widths, strict=True)) for row in rows
    ]
    return "\n".join(lines)


def write_results(out: Path, document: dict) -> None:
    """The results document as indented JSON, replaced in one step (a reader never sees half of it)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_suffix(".tmp")
    temporary.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS) + b"\n")
    temporary.replace(out)
