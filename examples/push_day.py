#!/usr/bin/env python3
"""Push the example business day with the partner client (client/, pos_partner_client) and wait for its
reconciliation.

    python examples/push_day.py --base-url http://127.0.0.1:7071/pos/v1 [--day-dir examples/day]
                                [--timeout 120] [--fresh-batch-ids]

The key comes from POS_API_KEY (or --key); it is sent only in the x-functions-key header and never printed.

The files in day/ are the exact requests a POS made during that day (NYC-001 sent its first batch at 15:00,
the second at the close), so this script replays them one by one with the client's endpoint methods, which
retry 429, 503 and cut connections with the same bytes. A POS that sends its day at the close lets
`PosClient.push_day` make the batches (client/README.md); `pos-partner push examples/day` does that.

Exit status: 0 every store-day MATCHED; 1 a MISMATCHED store-day or the timeout; 2 a problem answered by the
service (printed with its request_id) or the service could not be reached. Resending is safe: every write
answers ALREADY_RECEIVED and the days keep their results; --fresh-batch-ids gives every request a new
batch_id, so the day is stored and reconciled again (each trade record batch then says BATCH_SEQ_REPEATED).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from pos_partner_client import BatchResult, DayStatus, PosApiError, PosClient, Wait

DAY_DIR = Path(__file__).resolve().parent / "day"
HTTP_STATUS = {"ACCEPTED": 202, "ALREADY_RECEIVED": 200}


def bodies(path: Path) -> list[dict[str, Any]]:
    """A data file holds one request body, or a list of them (several batches of one store-day)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else [data]


def show(label: str, result: BatchResult) -> None:
    print(
        f"{label} -> {HTTP_STATUS.get(result.status, 200)} {result.status} record_count={result.record_count} "
        f"warnings={len(result.warnings)}"
    )
    for warning in result.warnings:
        print(f"    warning {warning.code} at {warning.path}: {warning.message}")


def push(client: PosClient, day_dir: Path, fresh: bool) -> list[tuple[str, str]]:
    """Send every request of the day in the order the interface requires; the store-days closed."""

    def batch_id(body: dict[str, Any]) -> str:
        return str(uuid.uuid4()) if fresh else body["batch_id"]

    for body in bodies(day_dir / "stores.json"):
        show("PUT /stores (stores.json)", client.put_stores(body["stores"], batch_id=batch_id(body)))
    for body in bodies(day_dir / "products.json"):
        show(
            "PUT /products (products.json)",
            client.put_products(body["products"], body.get("modifier_groups", []), batch_id=batch_id(body)),
        )
    for body in bodies(day_dir / "mapping.json"):
        show(
            "PUT /mappings/transaction-types (mapping.json)",
            client.put_mappings(body["mappings"], batch_id=batch_id(body)),
        )
    for file in sorted(day_dir.glob("trade-records-*.json")):
        for body in sorted(bodies(file), key=lambda b: (b["store_id"], b["business_date"], b["batch_seq"])):
            result = client.post_trade_records(
                body["store_id"],
                body["business_date"],
                body["batch_seq"],
                body["trade_records"],
                batch_id=batch_id(body),
            )
            show(
                f"POST /trade-records {body['store_id']} {body['business_date']} batch_seq={body['batch_seq']} "
                f"({file.name})",
                result,
            )
    days = []
    for file in sorted(day_dir.glob("daily-close-*.json")):
        for body in bodies(file):
            result = client.post_daily_close({**body, "batch_id": batch_id(body)})
            show(f"POST /daily-close {body['store_id']} {body['business_date']} ({file.name})", result)
            if result.status == "ALREADY_RECEIVED":
                print(
                    "    this daily close was received before: its earlier result stands "
                    "(run with --fresh-batch-ids to reconcile again)"
                )
            days.append((body["store_id"], body["business_date"]))
    return days


def report(day: DayStatus, timeout: float) -> None:
    if day.final:
        print(f"{day.store_id} {day.business_date}: {day.status} (checked_at {day.checked_at})")
    else:
        print(f"{day.store_id} {day.business_date}: still {day.status} after {timeout:g}s (timeout)")
    if day.expected and day.actual:
        print(f"  {'field':<22} {'expected':>12} {'actual':>12}")
        for name in day.expected.__dataclass_fields__:
            marker = "  <- differs" if name in day.differences else ""
            print(f"  {name:<22} {getattr(day.expected, name)!s:>12} {getattr(day.actual, name)!s:>12}{marker}")
    if day.status == "MISMATCHED" and day.details:
        for name in ("raw_differences", "missing_batch_seqs", "unmapped_source_codes", "unknown_payment_types"):
            if day.details.get(name):
                print(f"  {name}: {json.dumps(day.details[name], ensure_ascii=False)}")


def explain_wait(client: PosClient, waiting: list[DayStatus]) -> None:
    """The service reconciles a day RECONCILE_DELAY_SECONDS after its daily close: say when, and how to hurry."""
    print(
        "\nWhy no result yet: the service reconciles a store-day RECONCILE_DELAY_SECONDS after its daily close "
        "(900 s, 15 minutes, unless the service sets it shorter)."
    )
    for day in waiting:
        if day.reconciliation_due_at:
            print(f"  {day.store_id} {day.business_date} is due at {day.reconciliation_due_at}")
    partner_id = client.get_mappings().partner_id
    print(
        "What to do: wait until then and run this script again (resending is safe), or reconcile now, on the "
        "service's machine, with:"
    )
    for day in waiting:
        print(f"  python -m hq reconcile run {partner_id} {day.store_id} {day.business_date}")
    print("To try a whole day locally, start the service with a short delay: RECONCILE_DELAY_SECONDS=5 make run")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Push the example business day and wait for its reconciliation.")
    parser.add_argument("--base-url", required=True, help="for example http://127.0.0.1:7071/pos/v1")
    parser.add_argument("--key", default=os.environ.get("POS_API_KEY"), help="default: $POS_API_KEY; never printed")
    parser.add_argument("--day-dir", type=Path, default=DAY_DIR)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the results")
    parser.add_argument("--fresh-batch-ids", action="store_true", help="a new batch_id for every request")
    args = parser.parse_args(argv)
    if not args.key:
        parser.error("an API key is required: --key KEY or the environment variable POS_API_KEY")

    def said(wait: Wait) -> None:
        print(f"    {wait.reason}, waiting {wait.seconds:.1f}s")

    client = PosClient(args.base_url, args.key, on_wait=said)
    deadline = time.monotonic() + args.timeout
    try:
        days = push(client, args.day_dir, args.fresh_batch_ids)
        print(f"waiting for the reconciliation of {len(days)} store-day(s) (timeout {args.timeout:g}s)")
        results = [
            client.wait_for_result(store_id, business_date, max(deadline - time.monotonic(), 0))
            for store_id, business_date in days
        ]
        for day in results:
            report(day, args.timeout)
        if waiting := [day for day in results if not day.final]:
            explain_wait(client, waiting)
    except PosApiError as problem:
        print(f"HTTP error: {problem} (request_id {problem.request_id})", file=sys.stderr)
        for item in problem.errors:
            print(f"  {item.path}: {item.message}", file=sys.stderr)
        return 2
    if all(day.status == "MATCHED" for day in results):
        print(f"\nresult: all {len(results)} store-day(s) MATCHED")
        return 0
    print(
        "\nresult: not matched: "
        + ", ".join(f"{d.store_id} {d.business_date} {d.status}" for d in results if d.status != "MATCHED")
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
