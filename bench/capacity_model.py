"""The arithmetic of the capacity model (bench/capacity.py measures, this computes): from per-request costs
to what a chain needs at its busiest hour and over a month, against the limits of each part, and what it
costs at list prices. Every assumption is a field of `Chain` or `Prices`, with where it comes from."""

from __future__ import annotations

import dataclasses
import json
import math
import re

from backends.cosmos.connection import PROJECT_ROOT
from bench.request_charges import read_ru
from core.retention import EXPIRY_GRACE_DAYS

GB = 1024**3
INFRA = PROJECT_ROOT / "infra"


def infra_parameter(name: str, file: str = "main.production.parameters.json") -> int:
    """A deployment parameter as infra/ sets it: a literal, or azd's "${NAME=default}" default."""
    value = json.loads((INFRA / file).read_text(encoding="utf-8"))["parameters"][name]["value"]
    if isinstance(value, str):
        found = re.search(r"=(\d+)\}", value)
        if found is None:
            raise ValueError(f"{file}: {name} has no number: {value!r}")
        return int(found.group(1))
    return int(value)


@dataclasses.dataclass(frozen=True)
class Chain:
    stores: int = 10_000
    records_per_store_day: int = 2_000
    batch_records: int = 500  # the specification's batch limit, used in full
    closing_share: float = 0.8  # "most stores close within two hours": 80 % of stores ...
    closing_hours: int = 2  # ... spread evenly over these hours; the other 20 % over the other 22
    # Records are pushed at close (the busiest case: a POS pushing all day flattens the peak).
    polls_per_close: int = 3  # GET /daily-close: the specification says first after ~30 min, then every 10-15
    # Results pushed as webhooks instead (decision 0107; Chain.pushed()): no status reads, one event per close
    # per endpoint, each a delivery written and saved with its attempt after the endpoints' read, and three
    # queue operations (send, get, delete). ASSUMED: 2 KB items (write ~6.3 RU, upsert ~10 RU, query ~3 RU).
    events_per_close: int = 0
    ru_per_event: float = 20.0
    corrections_share: float = 0.02  # records sent again as a next version in the same store-day
    moves_share: float = 0.002  # records whose next version moves them to another store-day
    resends_share: float = 0.01  # records resent under a new batch_id (retries after a timeout)
    days_per_month: int = 30
    vcpu_per_instance: float = 1.0  # ASSUMED for a 2,048 MB Flex Consumption instance (infra/: 2048)
    cpu_utilisation: float = 0.7  # scale out before an instance's CPU queues requests
    http_per_instance_concurrency: int = dataclasses.field(
        default_factory=lambda: infra_parameter("httpPerInstanceConcurrency", "main.parameters.json")
    )
    maximum_instances: int = dataclasses.field(default_factory=lambda: infra_parameter("maximumInstanceCount"))
    instance_memory_gb: float = dataclasses.field(default_factory=lambda: infra_parameter("instanceMemoryMB") / 1024)
    autoscale_max_deployed: int = dataclasses.field(
        default_factory=lambda: infra_parameter("cosmosAutoscaleMaxThroughput")
    )
    cosmos_request_ms: float = 6.0  # ASSUMED: a point write in the same region (the emulator here is far slower)
    write_concurrency: int = 16  # backends/cosmos/connection.py WRITE_CONCURRENCY: a batch's records in parallel
    small_request_ms: float = 30.0  # ASSUMED: a close, a status read (a few point operations)
    rate_limit_per_minute: int = 600  # RATE_LIMIT_PER_MINUTE default (core/settings.py), per partner
    autoscale_headroom: float = 1.2
    # TRADE_RECORD_RETENTION_DAYS (core/settings.py; 0: every store-day kept): the hot store then holds the
    # records of the last N days and the EXPIRY_GRACE_DAYS before they expire; closes and results stay.
    retention_days: int = 0

    def pushed(self) -> Chain:
        """The same chain with every partner taking results as webhooks instead of polling."""
        return dataclasses.replace(self, polls_per_close=0, events_per_close=1)


@dataclasses.dataclass(frozen=True)
class Prices:
    """Pay-as-you-go list prices, USD, East US, as published on the Azure pricing pages (stored copies read
    2026-11-24; check the pricing calculator before quoting). Limits from the Cosmos DB and Storage docs."""

    cosmos_serverless_per_million_ru: float = 0.25
    cosmos_autoscale_per_100_rus_hour: float = 0.012  # billed at each hour's highest RU/s, at least 10 % of max
    cosmos_manual_per_100_rus_hour: float = 0.008
    cosmos_storage_per_gb_month: float = 0.25
    flex_per_gb_second: float = 0.000026  # on-demand execution time (free grant ignored)
    flex_per_million_executions: float = 0.40
    queue_per_10k_operations: float = 0.004  # the dearest queue operation class, as an upper bound
    serverless_rus_per_container: int = 5_000  # up to 250 GB; +1,000 per physical partition beyond 5
    serverless_storage_per_container_gb: int = 1_024  # the serverless table's last row (1 TB, 20,000 RU/s)
    rus_per_gb_stored: float = 1.0  # provisioned throughput's floor: 1 RU/s per GB (autoscale: max >= 10 x GB)
    rus_per_physical_partition: int = 10_000
    gb_per_physical_partition: int = 50
    logical_partition_gb: int = 20
    queue_messages_per_second: int = 2_000  # Storage Queue target per queue (1 KB messages)
    hours_per_month: int = 730


@dataclasses.dataclass(frozen=True)
class Costs:
    """Per-request costs, from bench/capacity.py's measurements ("measured") or the cost model ("RU")."""

    accept_cpu_ms_per_record: float  # over the Cosmos DB adapter (the Azure path: SDK requests), measured
    embedded_accept_cpu_ms_per_record: float  # on SQLite, measured
    reconcile_cpu_ms_per_record: float  # over the Cosmos DB adapter (its query pages), measured
    embedded_reconcile_cpu_ms_per_record: float  # on SQLite, measured
    requests_per_record: float  # Cosmos DB requests a new record makes, measured
    ru_new_record: float  # record and version entry, first version
    ru_next_version: float
    ru_moved_version: float
    ru_resend: float
    ru_batch: float  # per batch, whatever its size (markers, batch entry, store and mapping reads)
    ru_reconcile_fixed: float
    ru_reconcile_per_record: float
    ru_close: float
    ru_poll: float
    ru_admission: float  # key, partner, rate-limit count: every authenticated request
    ru_count_request: float
    count_request_ms_cosmos: float
    count_request_ms_sqlite: float
    cosmos_bytes_per_record: float
    sqlite_bytes_per_record: float
    close_bytes: float  # a close with its result, as the reconciliation stores it
    queue_messages_per_close: int

    @classmethod
    def of(cls, measured: dict) -> Costs:
        embedded, cosmos = measured["embedded"], measured["cosmos"]
        batch = cosmos["batch_records"]
        new = cosmos["new"]
        per_record = _record_ru(new)
        per_batch = new["ru"] - per_record

        def changed(step: str) -> float:
            """Everything a batch of changed records costs beyond a batch's own requests, per record: its
            look-ups (the previous versions' payment ids are a query that loads each of them) included."""
            return (cosmos[step]["ru"] - per_batch) / batch

        reconcile = cosmos["reconcile"]
        records_query = reconcile["ru_by_operation"].get("trade-records query_items", 0.0)
        return cls(
            accept_cpu_ms_per_record=new["cpu_ms"] / batch,
            embedded_accept_cpu_ms_per_record=embedded["accept_cpu_ms"] / embedded["batch_records"],
            reconcile_cpu_ms_per_record=reconcile["cpu_ms"] / cosmos["day_records"],
            embedded_reconcile_cpu_ms_per_record=embedded["reconcile_cpu_ms"] / embedded["day_records"],
            requests_per_record=new["record_requests"] / batch,
            ru_new_record=per_record / batch,
            ru_next_version=changed("next_version_same_day"),
            ru_moved_version=changed("next_version_other_day"),
            ru_resend=changed("resend_new_batch_id"),
            ru_batch=per_batch,
            ru_reconcile_fixed=reconcile["ru"] - records_query,
            ru_reconcile_per_record=records_query / cosmos["day_records"],
            ru_close=cosmos["close"]["ru"],
            ru_poll=read_ru(int(cosmos["close"]["stored_bytes"])) + 1.0,  # the close, and the store's registration
            ru_admission=cosmos["key_and_partner"]["ru"] + cosmos["count_request"]["ru_per"],
            ru_count_request=cosmos["count_request"]["ru_per"],
            count_request_ms_cosmos=cosmos["count_request"]["ms"],
            count_request_ms_sqlite=embedded["count_request_ms"],
            cosmos_bytes_per_record=new["stored_bytes_per_record"],
            sqlite_bytes_per_record=embedded["bytes_per_record"],
            close_bytes=max(cosmos["close"]["stored_bytes"], reconcile["reconciled_close_bytes"]),
            queue_messages_per_close=cosmos["close"]["queue_messages"],
        )


def _record_ru(step: dict) -> float:
    """RU of the requests made per record: point reads, writes and transactional batches (priced as their
    operations) in trade-records, but the batch entry (an upsert) and the queries, which are per batch."""
    by = step["ru_by_operation"]
    operations = ("read_item", "create_item", "replace_item", "delete_item", "execute_item_batch")
    return sum(by.get(f"trade-records {operation}", 0.0) for operation in operations)


def plan(costs: Costs, chain: Chain, prices: Prices) -> dict:
    """What the chain needs at its busiest hour and over a month; the parts by how full they are."""
    busiest_share = chain.closing_share / chain.closing_hours
    quiet_share = (1 - chain.closing_share) / (24 - chain.closing_hours)
    day_records = chain.stores * chain.records_per_store_day
    hourly = [busiest_share] * chain.closing_hours + [quiet_share] * (24 - chain.closing_hours)
    ru_per_record = (
        costs.ru_new_record
        + chain.corrections_share * costs.ru_next_version
        + chain.moves_share * costs.ru_moved_version
        + chain.resends_share * costs.ru_resend
    )
    batches_per_store = math.ceil(chain.records_per_store_day / chain.batch_records)
    requests_per_store = batches_per_store + 1 + chain.polls_per_close
    ru_per_reconcile = costs.ru_reconcile_fixed + costs.ru_reconcile_per_record * chain.records_per_store_day
    ru_per_store_day = (
        chain.records_per_store_day * ru_per_record
        + batches_per_store * costs.ru_batch
        + costs.ru_close
        + ru_per_reconcile
        + chain.polls_per_close * costs.ru_poll
        + requests_per_store * costs.ru_admission
        + chain.events_per_close * chain.ru_per_event
    )
    stores_per_second = chain.stores * busiest_share / 3600
    peak_ru_s = stores_per_second * ru_per_store_day
    peak_requests_s = stores_per_second * requests_per_store
    cpu_ms_per_store_day = chain.records_per_store_day * (
        costs.accept_cpu_ms_per_record + costs.reconcile_cpu_ms_per_record
    )
    cpu_cores = stores_per_second * cpu_ms_per_store_day / 1000
    instances_cpu = math.ceil(cpu_cores / (chain.vcpu_per_instance * chain.cpu_utilisation))
    # Latency in Azure of one batch: its CPU, plus its records' requests, WRITE_CONCURRENCY at a time.
    batch_ms = chain.batch_records * (
        costs.accept_cpu_ms_per_record + costs.requests_per_record * chain.cosmos_request_ms / chain.write_concurrency
    )
    in_flight = stores_per_second * batches_per_store * batch_ms / 1000
    instances = max(instances_cpu, math.ceil(in_flight / chain.http_per_instance_concurrency), 1)
    month_ru = ru_per_store_day * chain.stores * chain.days_per_month
    autoscale_max = math.ceil(peak_ru_s * chain.autoscale_headroom / 1000) * 1000
    billed_hours = sum(max(0.1 * autoscale_max, chain.stores * share / 3600 * ru_per_store_day) for share in hourly)
    stored_month_gb = day_records * chain.days_per_month * costs.cosmos_bytes_per_record / GB
    closes_month_gb = chain.stores * chain.days_per_month * costs.close_bytes / GB
    store_closes_gb_per_day = costs.close_bytes / GB
    # + the queue worker, + the webhook deliveries
    executions_month = chain.stores * chain.days_per_month * (requests_per_store + 1 + chain.events_per_close)
    store_day_ms = (
        batches_per_store * batch_ms
        + chain.records_per_store_day * costs.reconcile_cpu_ms_per_record
        + (1 + chain.polls_per_close) * chain.small_request_ms
    )
    busy_seconds_month = chain.stores * chain.days_per_month * store_day_ms / 1000
    queue_ops_month = (
        chain.stores * chain.days_per_month * (costs.queue_messages_per_close + 2 + 3 * chain.events_per_close)
    )  # + get, delete; an event's send, get, delete
    # Storage after a year: every record, or with retention only the store-days still held (decision
    # 0086); closes and results are kept either way.
    year_days = 12 * chain.days_per_month
    held_days = min(year_days, chain.retention_days + 1 + EXPIRY_GRACE_DAYS) if chain.retention_days else year_days
    records_gb_per_day = day_records * costs.cosmos_bytes_per_record / GB
    year_gb = records_gb_per_day * held_days + 12 * closes_month_gb
    held_records_gb = stored_month_gb if not chain.retention_days else records_gb_per_day * held_days
    serverless_fits_stores = int(prices.serverless_rus_per_container / (peak_ru_s / chain.stores))
    partner_partition_ru_s = peak_requests_s * costs.ru_count_request
    costs_month = {
        "Cosmos DB autoscale throughput": billed_hours
        / 100
        * prices.cosmos_autoscale_per_100_rus_hour
        * chain.days_per_month,
        "Cosmos DB storage (month 1, average)": (stored_month_gb + closes_month_gb)
        / 2
        * prices.cosmos_storage_per_gb_month,
        "Functions Flex Consumption (upper bound)": executions_month / 1e6 * prices.flex_per_million_executions
        + busy_seconds_month * chain.instance_memory_gb * prices.flex_per_gb_second,
        "Storage Queue operations": queue_ops_month / 10_000 * prices.queue_per_10k_operations,
    }
    parts = [
        _part(
            "Cosmos DB autoscale max RU/s as infra/ deploys it (production, shared by the database)",
            peak_ru_s,
            chain.autoscale_max_deployed,
            "RU/s",
            f"cosmosAutoscaleMaxThroughput {autoscale_max:,} in main.production.parameters.json",
        ),
        _part(
            "per-partner rate limit (RATE_LIMIT_PER_MINUTE)",
            peak_requests_s * 60,
            chain.rate_limit_per_minute,
            "requests/min",
            "this partner's own limit sized to its stores: hq partner rate-limit PARTNER 1500 (or more)",
        ),
        _part(
            "Cosmos DB serverless, RU/s per container",
            peak_ru_s,
            prices.serverless_rus_per_container,
            "RU/s",
            f"autoscale throughput (max {autoscale_max:,} RU/s); serverless fits ~{serverless_fits_stores:,} stores",
        ),
        _part(
            "Cosmos DB serverless, storage per container",
            held_records_gb,
            prices.serverless_storage_per_container_gb,
            f"GB held with {chain.retention_days} days of retention"
            if chain.retention_days
            else "GB in the first month",
            "provisioned throughput; a shorter TRADE_RECORD_RETENTION_DAYS"
            if chain.retention_days
            else "provisioned throughput; TRADE_RECORD_RETENTION_DAYS (store-days past it expire, after the export)",
        ),
        _part(
            "daily-closes: a store's logical partition (decision 0093), ten years",
            store_closes_gb_per_day * 3650,
            prices.logical_partition_gb,
            "GB",
            "nothing: a store's closes and results grow 0.55 MB a year (bench/partition_model.py)",
        ),
        _part(
            "rate-limit window item (the partner's partition), RU/s",
            partner_partition_ru_s,
            prices.rus_per_physical_partition,
            "RU/s",
            "windows spread over several items (partner and a shard), summed when read",
        ),
        _part(
            "Flex Consumption instances",
            instances,
            chain.maximum_instances,
            "instances",
            "raise maximumInstanceCount (Flex allows 1,000)",
        ),
        _part(
            "Storage Queue (one queue)",
            stores_per_second,
            prices.queue_messages_per_second,
            "messages/s",
            "more queues (by partner), or batch closes per message",
        ),
    ]
    parts.sort(key=lambda part: part["utilisation"], reverse=True)
    return {
        "busiest_hour": {
            "stores closing": round(chain.stores * busiest_share),
            "records/s": stores_per_second * chain.records_per_store_day,
            "requests/s": peak_requests_s,
            "batches/s": stores_per_second * batches_per_store,
            "reconciliations/s": stores_per_second,
            "CPU cores busy": cpu_cores,
            "batch latency in Azure (ms, modelled)": batch_ms,
            "instances": instances,
            "Cosmos DB RU/s": peak_ru_s,
            "queue messages/s": stores_per_second * costs.queue_messages_per_close,
        },
        "month": {
            "records": day_records * chain.days_per_month,
            "RU": month_ru,
            "serverless cost if it fitted (USD)": month_ru / 1e6 * prices.cosmos_serverless_per_million_ru,
            "manual provisioned at the peak (USD)": autoscale_max
            / 100
            * prices.cosmos_manual_per_100_rus_hour
            * prices.hours_per_month,
            "storage growth (GB)": stored_month_gb + closes_month_gb,
            "physical partitions after 12 months": max(
                math.ceil(autoscale_max / prices.rus_per_physical_partition),
                math.ceil(year_gb / prices.gb_per_physical_partition),
            ),
            "store-day partition (MB)": chain.records_per_store_day * costs.cosmos_bytes_per_record / 1024**2,
            "store-days of records held after 12 months": held_days,
            "after 12 months, stored (GB)": year_gb,
            "after 12 months, storage (USD/month)": year_gb * prices.cosmos_storage_per_gb_month,
            "after 12 months, throughput billed at least (RU/s)": year_gb * prices.rus_per_gb_stored,
            "autoscale max RU/s": autoscale_max,
        },
        "cost_per_month_usd": costs_month,
        "parts_by_utilisation": parts,
        "ru_per_store_day": ru_per_store_day,
        "ru_per_record_all_in": ru_per_store_day / chain.records_per_store_day,
    }


def _part(name: str, need: float, limit: float, unit: str, change: str) -> dict:
    return {"part": name, "need": need, "limit": limit, "unit": unit, "utilisation": need / limit, "change": change}


def _number(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 0.1 or value == 0:
        return f"{value:.2f}"
    return f"{value:.4f}"


def render(costs: Costs, plan_: dict, *, markdown: bool = False) -> str:
    """The measured costs, the busiest hour, the month, the monthly bill and the parts by how full they are."""
    rows: list[tuple[str, str]] = [("**per-request costs**" if markdown else "PER-REQUEST COSTS", "")]
    rows += [(name.replace("_", " "), _number(value)) for name, value in dataclasses.asdict(costs).items()]
    rows += [("", ""), ("**busiest hour**" if markdown else "BUSIEST HOUR", "")]
    rows += [(name, _number(value)) for name, value in plan_["busiest_hour"].items()]
    rows += [("", ""), ("**month**" if markdown else "MONTH", "")]
    rows += [(name, _number(value)) for name, value in plan_["month"].items()]
    rows += [("", ""), ("**cost per month, USD**" if markdown else "COST PER MONTH, USD", "")]
    rows += [(name, _number(value)) for name, value in plan_["cost_per_month_usd"].items()]
    rows.append(("total", _number(sum(plan_["cost_per_month_usd"].values()))))
    table = _table(("figure", "value"), rows, markdown)
    parts = [
        (
            part["part"],
            f"{_number(part['need'])} {part['unit']}",
            _number(part["limit"]),
            f"{part['utilisation']:.0%}",
            part["change"],
        )
        for part in plan_["parts_by_utilisation"]
    ]
    header = ("part (first to saturate first)", "need at the busiest hour", "limit", "used", "what to change")
    return table + "\n\n" + _table(header, parts, markdown)


def _table(header: tuple, rows: list[tuple], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows if any(row)]
        return "\n".join(lines)
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)) for row in [header, *rows]
    )
