"""What an environment costs a month, by resource (decision 0067): the idle test environment, the idle production
environment, and production carrying a 10,000-store chain. Every figure is a documented price times a stated
quantity; every quantity is read from infra/ or is a named assumption of `Usage`. Nothing here was billed:
no Azure account is reachable from this project. The operator guide's cost table (docs/operator-guide.md,
"Cost") is this module's output (`python -m bench.cost_model --markdown`; tests/toolchain/test_cost_model.py
keeps them equal).

The chain's Cosmos DB and on-demand Functions figures come from the capacity model (bench/capacity_model.py,
docs/performance.md): `--capacity FILE` reads them from `python -m bench.capacity --json FILE`; without it,
the latest run's figures as docs/performance.md quotes them (CHAIN_FROM_CAPACITY)."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
from pathlib import Path

from bench.capacity_model import INFRA

SECONDS_PER_MONTH = 730 * 3600
MINUTES_PER_MONTH = 730 * 60
GB = 1024**3

# docs/performance.md, "What a 10,000-store chain needs", the latest run (cost per month, USD), as its
# table gives them (the run of 2026-11-27 19:35 UTC, on the record index); a later run: --capacity.
CHAIN_FROM_CAPACITY = {
    "Cosmos DB autoscale throughput": 527.0,
    "Cosmos DB storage (month 1, average)": 254.0,
    "Functions Flex Consumption (upper bound)": 11.6,
    "Storage Queue operations": 0.36,
}


@dataclasses.dataclass(frozen=True)
class Prices:
    """Pay-as-you-go list prices, USD, East US, as the Azure pricing pages publish them (read 2026-11-27 from
    stored copies, not the live calculator: check it before quoting). Regions differ by a few percent."""

    flex_baseline_per_gb_second: float = 0.000004  # Flex Consumption always ready: memory provisioned, all the time
    flex_on_demand_per_gb_second: float = 0.000026
    flex_per_million_executions: float = 0.40
    cosmos_autoscale_per_100_rus_hour: float = 0.012  # single region; billed at >= 10 % of the maximum
    cosmos_zone_redundant_factor: float = 1.25  # provisioned throughput with availability zones
    cosmos_serverless_per_million_ru: float = 0.25
    cosmos_storage_per_gb_month: float = 0.25
    cosmos_continuous_30_days_per_gb_month: float = 0.20  # Continuous7Days: no charge
    log_analytics_per_gb: float = (
        2.30  # Analytics logs ingestion (first 5 GB a month per billing account free: ignored)
    )
    log_retention_per_gb_month: float = 0.10  # beyond 31 days (90 for Application Insights tables)
    log_alert_rule_5_minutes: float = 1.50  # a log alert rule evaluated every 5 minutes, per month
    metric_alert_time_series: float = (
        0.10  # per monitored time series a month (first 10 per subscription free: ignored)
    )
    private_endpoint_hour: float = 0.01
    private_endpoint_per_gb: float = 0.01  # data processed, in and out
    private_dns_zone_month: float = 0.50
    queue_per_10k_operations: float = 0.004
    blob_write_per_10k: float = 0.065  # ASSUMED for hot ZRS/LRS write operations (lease renewals are writes)


@dataclasses.dataclass(frozen=True)
class Usage:
    """What the service does that costs, beyond the chain's own traffic. ASSUMED where not measured here."""

    queue_poll_seconds: float = 2.0  # host.json extensions.queues.maxPollingInterval: an idle instance polls this often
    lease_operations_per_minute: float = 12.0  # ASSUMED: the host's and the timer's singleton leases, per instance
    scale_controller_checks_per_minute: float = 6.0  # ASSUMED: the platform reading the queue's length
    sweeps_per_month: int = 8_760  # RECONCILE_SWEEP_SCHEDULE every 5 minutes
    sweep_seconds: float = 1.0  # ASSUMED: one run of the sweep, warm
    sweep_ru: float = 3.0  # ASSUMED: the days_due query on an empty result
    # Log rows, bytes as Log Analytics bills them (ASSUMED: the columns each table has, with our values).
    request_line_bytes: int = 1_200  # AppTraces: one line per request, its fields in Properties
    invocation_row_bytes: int = 800  # AppRequests: one per function invocation
    metric_rows_per_instance_minute: float = 18.0  # AppMetrics and AppPerformanceCounters (the distro's defaults)
    metric_row_bytes: int = 400
    storage_log_row_bytes: int = 1_500  # StorageQueueLogs, StorageBlobLogs
    data_plane_row_bytes: int = 1_000  # CDBDataPlaneRequests: one row per request, a transactional batch one
    # Cosmos DB requests a store-day makes (docs/performance.md, decision 0056): 4 batches of 500 new records at
    # 0.044 requests a record (22: transactional batches of 100) plus ~6 of the batch's own; the close, 3
    # status reads and the reconciliation's 8; the key, partner and rate-limit count of each of 8 requests.
    cosmos_requests_per_store_day: int = 4 * (22 + 6) + 1 + 3 + 8 + 3 * 8
    chain_requests_per_store_day: int = 8  # 4 batches, 1 close, 3 status reads (docs/performance.md)
    chain_stores: int = 10_000
    days_per_month: int = 30
    chain_gb_through_private_endpoints: float = 4_400.0  # ASSUMED: 600 M records x 3.6 KB, in and out, twice


def infra(file: str) -> dict:
    """A parameter file's values, azd's `${NAME=default}` read as its default."""
    raw = json.loads((INFRA / file).read_text(encoding="utf-8"))["parameters"]
    values = {}
    for name, entry in raw.items():
        value = entry["value"]
        if isinstance(value, str) and value.startswith("${"):
            value = value.split("=", 1)[1].rstrip("}") if "=" in value else ""
        values[name] = value
    return values


@functools.cache
def scale_groups() -> tuple[str, ...]:
    """Flex Consumption's per-function scale groups of the registered functions: every HTTP function shares
    the `http` group (blob and durable triggers would share theirs; the app has none), every other function
    is a group of its own (`function:NAME`). Read from the app itself, so that a new trigger is counted."""
    from triggers.blueprints import new_app  # imported only here: it loads the whole app

    groups = []
    for function in new_app().get_functions():
        trigger = function.get_trigger().type
        group = "http" if trigger == "httpTrigger" else f"function:{function.get_function_name()}"
        if group not in groups:
            groups.append(group)
    return tuple(groups)


def always_ready_instances(parameters: dict, groups: int | None = None) -> int:
    """Billed always-ready instances: the HTTP group's count; with zone redundancy the platform keeps at
    least 2 in every per-function scale group (http, the reconciliation queue, the sweep and export timers),
    configured or not."""
    configured = int(parameters.get("alwaysReadyInstanceCount", 0))
    if str(parameters.get("zoneRedundant")).lower() == "true":
        count = len(scale_groups()) if groups is None else groups
        return max(configured, 2) + 2 * (count - 1)
    return configured


def chain_cosmos_requests(usage: Usage = Usage()) -> float:
    """Cosmos DB requests a month for the chain (each a CDBDataPlaneRequests row, were they logged)."""
    return usage.chain_stores * usage.days_per_month * usage.cosmos_requests_per_store_day


def log_volume_gb(parameters: dict, usage: Usage, *, requests: float, instance_minutes: float) -> dict[str, float]:
    """GB a month by table, from the diagnostic categories infra/ sends (decision 0067)."""
    closes = requests / usage.chain_requests_per_store_day if requests else 0.0
    volumes = {
        "AppTraces (a line per request and per reconciliation)": (requests + closes) * usage.request_line_bytes,
        "AppRequests (an invocation each)": (requests + closes + usage.sweeps_per_month) * usage.invocation_row_bytes,
        "AppMetrics, AppPerformanceCounters": instance_minutes
        * usage.metric_rows_per_instance_minute
        * usage.metric_row_bytes,
        "StorageQueueLogs (writes, deletes)": 2 * closes * usage.storage_log_row_bytes,
    }
    if str(parameters.get("cosmosDataPlaneLogs")).lower() == "true":
        data_plane = chain_cosmos_requests(usage) if requests else usage.sweeps_per_month
        volumes["CDBDataPlaneRequests"] = data_plane * usage.data_plane_row_bytes
    return {table: size / GB for table, size in volumes.items()}


def environment(
    file: str, *, chain: dict | None = None, prices: Prices = Prices(), usage: Usage = Usage()
) -> tuple[dict[str, float], dict[str, float]]:
    """(USD a month by resource, log GB a month by table) of the environment of a parameter file, idle, or
    carrying the chain when `chain` (the capacity model's month costs) is given."""
    parameters = infra(file)
    memory_gb = int(parameters["instanceMemoryMB"]) / 1024
    ready = always_ready_instances(parameters)
    zones = str(parameters.get("zoneRedundant")).lower() == "true"
    vnet = str(parameters.get("vnetEnabled")).lower() == "true"
    requests = usage.chain_stores * usage.days_per_month * usage.chain_requests_per_store_day if chain else 0.0
    on_demand_minutes = (
        chain["Functions Flex Consumption (upper bound)"] / (memory_gb * prices.flex_on_demand_per_gb_second) / 60
        if chain
        else usage.sweeps_per_month * usage.sweep_seconds / 60
    )
    # Instances running: the always-ready ones all month, plus on-demand ones while they execute (ASSUMED:
    # the platform stops an idle on-demand instance between two sweeps; kept warm, add one instance's polls).
    running = ready + on_demand_minutes / MINUTES_PER_MONTH
    instance_minutes = running * MINUTES_PER_MONTH
    costs: dict[str, float] = {}

    costs["Functions: always-ready baseline"] = (
        ready * memory_gb * SECONDS_PER_MONTH * prices.flex_baseline_per_gb_second
    )
    if chain:
        costs["Functions: executions"] = chain["Functions Flex Consumption (upper bound)"]
    else:
        # The sweep's timer wakes an instance every 5 minutes: within the monthly free grant when on demand,
        # billed at the always-ready execution rate (ASSUMED 4x the baseline rate) on always-ready instances.
        sweep_gb_s = usage.sweeps_per_month * usage.sweep_seconds * memory_gb
        costs["Functions: executions"] = sweep_gb_s * prices.flex_baseline_per_gb_second * 4 if ready else 0.0

    factor = prices.cosmos_zone_redundant_factor if zones else 1.0
    if parameters["cosmosThroughputMode"] == "autoscale":
        floor = int(parameters["cosmosAutoscaleMaxThroughput"]) / 10  # billed at least 10 % of the maximum
        idle = floor / 100 * prices.cosmos_autoscale_per_100_rus_hour * 730
        costs["Cosmos DB: throughput"] = factor * (chain["Cosmos DB autoscale throughput"] if chain else idle)
    else:
        ru = usage.sweeps_per_month * usage.sweep_ru
        costs["Cosmos DB: throughput"] = ru / 1e6 * prices.cosmos_serverless_per_million_ru
    stored_gb = chain["Cosmos DB storage (month 1, average)"] / prices.cosmos_storage_per_gb_month if chain else 0.01
    costs["Cosmos DB: storage"] = stored_gb * prices.cosmos_storage_per_gb_month
    thirty_days = parameters.get("cosmosBackupTier") == "Continuous30Days"
    costs["Cosmos DB: continuous backup"] = (
        stored_gb * prices.cosmos_continuous_30_days_per_gb_month if thirty_days else 0.0
    )

    queue_ops = (
        running * SECONDS_PER_MONTH / usage.queue_poll_seconds
        + usage.scale_controller_checks_per_minute * MINUTES_PER_MONTH
    )
    lease_ops = running * usage.lease_operations_per_minute * MINUTES_PER_MONTH
    costs["Storage: transactions (polls, leases, messages)"] = (
        queue_ops / 10_000 * prices.queue_per_10k_operations
        + lease_ops / 10_000 * prices.blob_write_per_10k
        + (chain["Storage Queue operations"] if chain else 0.0)
    )

    volumes = log_volume_gb(parameters, usage, requests=requests, instance_minutes=instance_minutes)
    costs["Log Analytics: ingestion"] = sum(volumes.values()) * prices.log_analytics_per_gb
    retention_days = int(parameters["logRetentionDays"])
    storage_tables_gb = sum(size for table, size in volumes.items() if not table.startswith("App"))
    costs["Log Analytics: retention past 31 days"] = (
        storage_tables_gb * max(0, retention_days - 31) / 30 * prices.log_retention_per_gb_month
    )
    costs["Alert rules (3 log, 2 metric)"] = 3 * prices.log_alert_rule_5_minutes + 2 * prices.metric_alert_time_series
    costs["Private endpoints (3) and DNS zones (3)"] = (
        3 * 730 * prices.private_endpoint_hour
        + 3 * prices.private_dns_zone_month
        + (usage.chain_gb_through_private_endpoints * prices.private_endpoint_per_gb if chain else 0.0)
        if vnet
        else 0.0
    )
    return costs, volumes


def data_plane_logs_cost(prices: Prices = Prices(), usage: Usage = Usage()) -> float:
    """What CDBDataPlaneRequests would add for the chain (cosmosDataPlaneLogs true in production)."""
    return chain_cosmos_requests(usage) * usage.data_plane_row_bytes / GB * prices.log_analytics_per_gb


CASES = {
    "idle test": ("main.test.parameters.json", False),
    "idle production": ("main.production.parameters.json", False),
    "production, 10,000-store chain": ("main.production.parameters.json", True),
}


def table(chain: dict = CHAIN_FROM_CAPACITY) -> dict[str, tuple[dict[str, float], dict[str, float]]]:
    """(USD a month by resource, log GB a month by table) for the three cases of the operator guide's table."""
    return {case: environment(file, chain=chain if busy else None) for case, (file, busy) in CASES.items()}


def _usd(value: float) -> str:
    return "0" if round(value, 2) == 0 else f"{value:,.2f}" if value < 100 else f"{value:,.0f}"


def markdown(chain: dict = CHAIN_FROM_CAPACITY) -> str:
    """The operator guide's cost table: a row per resource, a column per case, USD a month."""
    cases = table(chain)
    resources = list(next(iter(cases.values()))[0])
    lines = ["| USD a month | " + " | ".join(cases) + " |", "| --- |" + " ---: |" * len(cases)]
    for resource in resources:
        lines.append(f"| {resource} | " + " | ".join(_usd(costs[resource]) for costs, _ in cases.values()) + " |")
    lines.append(
        "| **total** | " + " | ".join(f"**{_usd(sum(costs.values()))}**" for costs, _ in cases.values()) + " |"
    )
    gigabytes = " | ".join(f"{sum(volumes.values()):,.1f}" for _, volumes in cases.values())
    lines.append(f"| log volume, GB a month | {gigabytes} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cost_model", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--capacity", type=Path, help="a `python -m bench.capacity --json` file for the chain's figures"
    )
    parser.add_argument("--markdown", action="store_true", help="the operator guide's cost table")
    args = parser.parse_args(argv)
    chain = CHAIN_FROM_CAPACITY
    if args.capacity:
        chain = json.loads(args.capacity.read_text(encoding="utf-8"))["plan"]["cost_per_month_usd"]
    if args.markdown:
        print(markdown(chain))
        return 0
    for case, (costs, volumes) in table(chain).items():
        print(f"{case}: {_usd(sum(costs.values()))} USD a month")
        for resource, value in costs.items():
            print(f"  {resource}: {_usd(value)}")
        print("  log GB a month: " + ", ".join(f"{name} {size:,.2f}" for name, size in volumes.items()))
    print(f"with cosmosDataPlaneLogs: +{_usd(data_plane_logs_cost())} USD a month for the chain")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
