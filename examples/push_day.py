#!/usr/bin/env python3
"""Push an example business day to a running Partner POS Ingestion Service and wait for its reconciliation.

    python examples/push_day.py --base-url http://127.0.0.1:7071/pos/v1 --key KEY [--day-dir examples/day]
                                [--timeout 120] [--fresh-batch-ids]

The key may also come from the environment variable POS_API_KEY (better: it stays out of the shell
history and the process list). It is sent only in the x-functions-key header and never printed.

Order, as the interface requires: PUT /stores, PUT /products, PUT /mappings/transaction-types, every
POST /trade-records batch (trade-records-*.json, each file one request body or a list of them), then
POST /daily-close (daily-close-*.json). Then GET /daily-close/{store_id}/{business_date} every 2 seconds
until every store-day is MATCHED or MISMATCHED, or the timeout passes.

Exit status: 0 every store-day MATCHED; 1 a MISMATCHED store-day or the timeout; 2 an HTTP error (the
problem body is printed) or the service could not be reached. On the timeout it says when each day is
due (the service waits RECONCILE_DELAY_SECONDS after a daily close) and the `hq` command that reconciles
it now.

Resending the same files is safe: every write comes back 200 ALREADY_RECEIVED, and a daily close
already received keeps the result it had. --fresh-batch-ids gives every request a new batch_id, so a
second run is stored again (same trade record versions: nothing changes) and the days are reconciled
again; its trade record batches each get a BATCH_SEQ_REPEATED warning, since their batch_seqs arrive a
second time under new batch_ids.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path

import requests

EXIT_MATCHED, EXIT_NOT_MATCHED, EXIT_HTTP_ERROR = 0, 1, 2
FINAL_STATUSES = ("MATCHED", "MISMATCHED")
TOTAL_FIELDS = (
    "trade_record_count",
    "item_row_count",
    "payment_row_count",
    "net_sales_amount",
    "tax_amount",
    "tip_amount",
    "payment_total_amount",
)
DEFAULT_DAY_DIR = Path(__file__).resolve().parent / "day"
MAX_RATE_LIMIT_RETRIES = 5


class HttpFailure(Exception):
    """The service answered with an error status, or could not be reached."""

    def __init__(self, message: str, body: str = ""):
        super().__init__(message)
        self.body = body


class Client:
    def __init__(self, base_url: str, key: str, request_timeout: float = 60.0):
        self.base_url = base_url.rstrip("/")
        self.session = requests.Session()
        self.session.headers["x-functions-key"] = key
        self.request_timeout = request_timeout

    def call(self, method: str, path: str, body: dict | None = None) -> requests.Response:
        """One request; waits out 429 RATE_LIMITED (Retry-After) a few times; raises HttpFailure on
        any other status of 400 and above."""
        url = f"{self.base_url}/{path}"
        for _ in range(MAX_RATE_LIMIT_RETRIES + 1):
            try:
                response = self.session.request(method, url, json=body, timeout=self.request_timeout)
            except requests.RequestException as error:
                raise HttpFailure(f"{method} {url} failed: {type(error).__name__}: {error}") from None
            if response.status_code != 429:
                break
            wait = _retry_after(response)
            print(f"    429 RATE_LIMITED, retrying in {wait:g}s")
            time.sleep(wait)
        if response.status_code >= 400:
            raise HttpFailure(f"{method} /{path} -> {response.status_code} {response.reason}", _pretty(response))
        return response


def _retry_after(response: requests.Response) -> float:
    try:
        return min(max(float(response.headers.get("Retry-After", "1")), 0.5), 60.0)
    except ValueError:
        return 1.0


def _pretty(response: requests.Response) -> str:
    try:
        return json.dumps(response.json(), indent=2, ensure_ascii=False)
    except ValueError:
        return response.text


# --- the day's requests -----------------------------------------------------------------------------


def load_bodies(path: Path) -> list[dict]:
    """A data file holds one request body, or a list of them (several batches of one store-day)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else [data]


def plan_requests(day_dir: Path) -> list[tuple[str, str, str, dict]]:
    """(method, path, label, body) of every write, in the order the interface requires."""
    if not day_dir.is_dir():
        raise SystemExit(f"error: day directory not found: {day_dir}")
    steps: list[tuple[str, str, str, dict]] = []
    for name, path in (
        ("stores.json", "stores"),
        ("products.json", "products"),
        ("mapping.json", "mappings/transaction-types"),
    ):
        file = day_dir / name
        if not file.exists():
            raise SystemExit(f"error: {file} is missing")
        steps += [("PUT", path, f"PUT /{path} ({name})", body) for body in load_bodies(file)]
    for file in sorted(day_dir.glob("trade-records-*.json")):
        for body in sorted(load_bodies(file), key=lambda b: (b["store_id"], b["business_date"], b["batch_seq"])):
            label = (
                f"POST /trade-records {body['store_id']} {body['business_date']} "
                f"batch_seq={body['batch_seq']} ({file.name})"
            )
            steps.append(("POST", "trade-records", label, body))
    closes = sorted(day_dir.glob("daily-close-*.json"))
    if not closes:
        raise SystemExit(f"error: no daily-close-*.json in {day_dir}")
    for file in closes:
        for body in load_bodies(file):
            label = f"POST /daily-close {body['store_id']} {body['business_date']} ({file.name})"
            steps.append(("POST", "daily-close", label, body))
    return steps


def push(client: Client, steps: list[tuple[str, str, str, dict]]) -> list[tuple[str, str]]:
    """Send every write; print each response; return the (store_id, business_date) of the closes."""
    closed_days = []
    for method, path, label, body in steps:
        response = client.call(method, path, body)
        result = response.json()
        warnings = result.get("warnings") or []
        print(
            f"{label} -> {response.status_code} {result.get('status')} "
            f"record_count={result.get('record_count')} warnings={len(warnings)}"
        )
        for warning in warnings:
            print(f"    warning {warning.get('code')} at {warning.get('path')}: {warning.get('message')}")
        if path == "daily-close":
            closed_days.append((body["store_id"], body["business_date"]))
            if result.get("status") == "ALREADY_RECEIVED":
                print(
                    "    this daily close was received before: its earlier result stands "
                    "(run with --fresh-batch-ids to reconcile again)"
                )
    return closed_days


# --- waiting for the reconciliation -------------------------------------------------------------------


def wait_for_results(
    client: Client, days: list[tuple[str, str]], timeout: float, interval: float
) -> dict[tuple[str, str], dict]:
    started = time.monotonic()
    results: dict[tuple[str, str], dict] = {}
    print(f"waiting for reconciliation of {len(days)} store-day(s), polling every {interval:g}s (timeout {timeout:g}s)")
    while True:
        for store_id, business_date in days:
            if results.get((store_id, business_date), {}).get("status") not in FINAL_STATUSES:
                response = client.call("GET", f"daily-close/{store_id}/{business_date}")
                results[(store_id, business_date)] = response.json()
        elapsed = time.monotonic() - started
        states = "; ".join(
            f"{store_id} {business_date} {results[(store_id, business_date)].get('status')}"
            for store_id, business_date in days
        )
        print(f"  [{elapsed:5.0f}s] {states}")
        if all(result.get("status") in FINAL_STATUSES for result in results.values()):
            return results
        if elapsed + interval > timeout:
            return results
        time.sleep(interval)


def report(day: tuple[str, str], result: dict, timeout: float) -> bool:
    """Print one store-day's result side by side; True when it MATCHED."""
    store_id, business_date = day
    status = result.get("status")
    expected = result.get("expected") or {}
    actual = result.get("actual") or {}
    print()
    if status in FINAL_STATUSES:
        print(f"{store_id} {business_date}: {status} (checked_at {result.get('checked_at')})")
    else:
        print(f"{store_id} {business_date}: still {status} after {timeout:g}s (timeout)")
    differences = result.get("differences") or []
    print(f"  {'field':<22} {'expected':>12} {'actual':>12}")
    for name in TOTAL_FIELDS:
        marker = "  <- differs" if name in differences else ""
        print(f"  {name:<22} {_cell(expected.get(name)):>12} {_cell(actual.get(name)):>12}{marker}")
    if status in FINAL_STATUSES:
        print(f"  differences: {', '.join(differences) if differences else 'none'}")
    details = result.get("details") or {}
    if status == "MISMATCHED" and details:
        for name in ("raw_differences", "missing_batch_seqs", "unmapped_source_codes", "unknown_payment_types"):
            if details.get(name):
                print(f"  {name}: {json.dumps(details[name], ensure_ascii=False)}")
    return status == "MATCHED"


def explain_wait(client: Client, days: list[tuple[str, str]], results: dict[tuple[str, str], dict]) -> None:
    """Why a day has no result yet, and what to do: the service reconciles a day only after a delay."""
    print()
    print(
        "Why no result yet: the service reconciles a store-day RECONCILE_DELAY_SECONDS after its daily close "
        "(900 s, 15 minutes, unless the service sets it shorter)."
    )
    for store_id, business_date in days:
        due = results[(store_id, business_date)].get("reconciliation_due_at")
        if due:
            print(f"  {store_id} {business_date} is due at {due}")
    partner_id = _partner_id(client) or "PARTNER_ID"
    print(
        "What to do: wait until then and run this script again (resending is safe: the results are read "
        "again), or reconcile now, on the service's machine, with:"
    )
    for store_id, business_date in days:
        print(f"  python -m hq reconcile run {partner_id} {store_id} {business_date}")
    print("To try a whole day locally, start the service with a short delay: RECONCILE_DELAY_SECONDS=5 make run")


def _partner_id(client: Client) -> str | None:
    """The partner the key belongs to, as the mapping read names it; None if it cannot be read."""
    try:
        return client.call("GET", "mappings/transaction-types").json().get("partner_id")
    except (HttpFailure, ValueError):
        return None


def _cell(value) -> str:
    return "-" if value is None else str(value)


# --- command line --------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Push an example business day and wait for its reconciliation.")
    parser.add_argument(
        "--base-url", required=True, help="service address with its prefix, for example http://127.0.0.1:7071/pos/v1"
    )
    parser.add_argument(
        "--key", default=os.environ.get("POS_API_KEY"), help="partner API key (default: $POS_API_KEY); never printed"
    )
    parser.add_argument(
        "--day-dir",
        type=Path,
        default=DEFAULT_DAY_DIR,
        help="directory of the day's request bodies (default: examples/day)",
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="seconds to wait for the reconciliation results (default 120)"
    )
    parser.add_argument("--poll-interval", type=float, default=2.0, help=argparse.SUPPRESS)
    parser.add_argument(
        "--fresh-batch-ids",
        action="store_true",
        help="give every request a new batch_id (uuid4) so that a re-run is stored and "
        "reconciled again instead of answered ALREADY_RECEIVED",
    )
    args = parser.parse_args(argv)
    if not args.key:
        parser.error("an API key is required: --key KEY or the environment variable POS_API_KEY")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    steps = plan_requests(args.day_dir)
    if args.fresh_batch_ids:
        for _, _, _, body in steps:
            body["batch_id"] = str(uuid.uuid4())
        print(f"--fresh-batch-ids: every one of the {len(steps)} requests has a new batch_id")
    client = Client(args.base_url, args.key)
    try:
        days = push(client, steps)
        results = wait_for_results(client, days, args.timeout, args.poll_interval)
    except HttpFailure as failure:
        print(f"HTTP error: {failure}", file=sys.stderr)
        if failure.body:
            print(failure.body, file=sys.stderr)
        return EXIT_HTTP_ERROR
    matched = [report(day, results[day], args.timeout) for day in days]
    waiting = [day for day in days if results[day].get("status") not in FINAL_STATUSES]
    if waiting:
        explain_wait(client, waiting, results)
    print()
    if all(matched):
        print(f"result: all {len(days)} store-day(s) MATCHED")
        return EXIT_MATCHED
    failed = [
        f"{store_id} {business_date} {results[(store_id, business_date)].get('status')}"
        for (store_id, business_date), ok in zip(days, matched, strict=True)
        if not ok
    ]
    print(f"result: not matched: {', '.join(failed)}")
    return EXIT_NOT_MATCHED


if __name__ == "__main__":
    sys.exit(main())
