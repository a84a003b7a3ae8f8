"""`hq smoke BASE_URL`: after a deployment, prove the environment works end to end as a partner sees it.

It checks `/health`, then takes a throwaway partner (`hq-smoke` unless told otherwise: added the first time,
reactivated later) with one store and a fresh key, sends one business day over HTTP as a partner would
(store, product, mapping, a trade record, the daily close), has the day reconciled (now, as `hq reconcile
run` does, or by the queue worker with --wait-for-queue) and reads `GET /daily-close` until it is MATCHED.
Whatever happens, the key is revoked and the partner deactivated at the end: nothing stays that can
call the service. Its day stays stored (the service has no way to delete a partner's data); the next run
reuses the same partner, store and day, replacing the record by a higher version, so runs add only
their batch markers.

It needs what every `hq` command needs (the same settings, data roles, and an address the accounts'
firewalls allow: docs/operator-guide.md, HQ's way in) and the service's base URL (the deployment's BASE_URL output).
Exit 0 when the day is MATCHED; 1, naming the step, otherwise.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass

from backends.factory import Backend, open_backend
from core.clock import utc_now
from core.ports import AdminError
from core.stored_json import JsonObject
from hq.arguments import Subcommands

DEFAULT_PARTNER = "hq-smoke"
STORE = "SMOKE-001"
PRODUCT = "P-SMOKE"
# Batch ids from the run's id (a UUID), one per kind: a retry of the same run would be a resend.
KINDS = ("stores", "products", "mapping", "trade-records", "daily-close")


def add_group(groups: Subcommands) -> None:
    group = groups.add_parser(
        "smoke",
        help="after a deployment: health, a throwaway partner's day to MATCHED over HTTP, then its key revoked",
    )
    group.add_argument("base_url", help="the service's base URL, e.g. https://<app>.azurewebsites.net/pos/v1")
    group.add_argument(
        "--partner", default=DEFAULT_PARTNER, help=f"the throwaway partner's id (default {DEFAULT_PARTNER})"
    )
    group.add_argument(
        "--wait-for-queue",
        type=int,
        metavar="SECONDS",
        help="let the queue worker reconcile the day (RECONCILE_DELAY_SECONDS after the close) and wait up to "
        "SECONDS for MATCHED, instead of reconciling it now",
    )
    group.set_defaults(opens=open_backend, run=smoke)


@dataclass
class Partner:
    """The service as the smoke partner calls it."""

    base_url: str
    key: str

    def call(self, method: str, path: str, body: JsonObject | None = None) -> tuple[int, JsonObject]:
        return http(method, f"{self.base_url}/{path}", body, {"x-functions-key": self.key})


def http(
    method: str, url: str, body: JsonObject | None = None, headers: dict[str, str] | None = None
) -> tuple[int, JsonObject]:
    """(status, JSON body) of one request; an unreachable service is a refusal naming the URL."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, method=method, headers={**(headers or {})})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, _json(response.read())
    except urllib.error.HTTPError as error:
        return error.code, _json(error.read())
    except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
        raise AdminError(f"smoke: cannot reach {url}: {getattr(error, 'reason', error)}") from None


def _json(raw: bytes) -> JsonObject:
    try:
        value = json.loads(raw or b"{}")
    except ValueError:
        return {"raw": raw[:200].decode("utf-8", "replace")}
    return value if isinstance(value, dict) else {"value": value}


def smoke(backend: Backend, args: argparse.Namespace) -> None:
    base_url = args.base_url.rstrip("/")
    status, body = http("GET", f"{base_url}/health")
    if status != 200:
        raise AdminError(f"smoke: GET /health answered {status} {body}")
    print(f"GET /health: {status} {body.get('status', '')}".rstrip())

    key_id, key = _prepare_partner(backend, args.partner)
    print(f"partner {args.partner}: active, store {STORE}, key {key_id}")
    try:
        day = utc_now().date()
        partner = Partner(base_url, key)
        for kind, path, request_body in _day(day, uuid.uuid4()):
            method = "POST" if kind in ("trade-records", "daily-close") else "PUT"
            status, answer = partner.call(method, path, request_body)
            if status not in (200, 202):
                raise AdminError(f"smoke: {method} /{path} answered {status} {answer}")
            print(f"{method} /{path}: {status} {answer.get('status', '')}".rstrip())
        result = _reconciled(backend, partner, args.partner, day, args.wait_for_queue)
        print(f"GET /daily-close/{STORE}/{day}: {result}")
        if result != "MATCHED":
            raise AdminError(
                f"smoke: the day is {result}, not MATCHED: python -m hq reconcile show {args.partner} {STORE} {day}"
            )
    finally:
        _retire(backend, args.partner, key_id)
    print("smoke: passed")


def _prepare_partner(backend: Backend, partner_id: str) -> tuple[str, str]:
    from ingest.onboarding import add_partner, issue_key

    storage = backend.storage
    if storage.get_partner(partner_id) is None:
        add_partner(storage, partner_id, "HQ smoke test", utc_now())
    else:
        storage.set_partner_active(partner_id, True)
    if STORE not in storage.registered_stores(partner_id):
        storage.register_stores(partner_id, [STORE], utc_now())
    key = issue_key(storage, partner_id, utc_now())
    return key.key_id, key.secret


def _retire(backend: Backend, partner_id: str, key_id: str) -> None:
    """The key revoked and the partner deactivated, whatever happened before."""
    from ingest.onboarding import revoke_key

    revoke_key(backend.storage, partner_id, key_id, utc_now())
    backend.storage.set_partner_active(partner_id, False)
    print(f"cleanup: key {key_id} revoked, partner {partner_id} inactive")


def _reconciled(backend: Backend, partner: Partner, partner_id: str, day: dt.date, wait: int | None) -> str:
    """The day's status over HTTP once reconciled: now (as `hq reconcile run`), or by the queue worker."""
    path = f"daily-close/{STORE}/{day}"
    if wait is None:
        from reconcile import operations

        operations.reconcile_now(backend.storage, partner_id, STORE, day)
    deadline = time.monotonic() + (wait or 0)
    while True:
        status, answer = partner.call("GET", path)
        if status != 200:
            raise AdminError(f"smoke: GET /{path} answered {status} {answer}")
        if answer.get("status") != "RECEIVED" or time.monotonic() >= deadline:
            return str(answer.get("status"))
        time.sleep(2)


def _day(day: dt.date, run: uuid.UUID) -> list[tuple[str, str, JsonObject]]:
    """One business day of one store, as a partner sends it: (kind, path, body) in sending order."""
    batch = {kind: str(uuid.uuid5(run, kind)) for kind in KINDS}
    now = utc_now().replace(microsecond=0)
    stamp = now.isoformat().replace("+00:00", "Z")
    version = int(now.timestamp())  # a later run replaces the record: the day holds one transaction
    opened = stamp  # now, in the store's day (Etc/UTC, workday from midnight)
    store = {
        "store_id": STORE,
        "store_name": "HQ smoke test",
        "country_code": "US",
        "currency": "USD",
        "time_zone": "Etc/UTC",
        "locale": "en-US",
        "workday_start": "00:00",
        "prices_include_tax": False,
        "status": "ACTIVE",
        "last_modified_at": stamp,
    }
    product = {
        "product_id": PRODUCT,
        "name": {"en-US": "Smoke test item"},
        "unit_price": "10.00",
        "currency": "USD",
        "status": "ACTIVE",
        "version": version,
        "product_type": "SINGLE",
        "last_modified_at": stamp,
        "modifier_group_ids": [],
    }
    record = {
        "trade_record_id": f"{STORE}-{day}-T1",
        "version": version,
        "store_id": STORE,
        "business_date": day.isoformat(),
        "source_transaction_type": "S",
        "order_type": "TO_GO",
        "order_source": "POS",
        "status": "COMPLETED",
        "opened_at": opened,
        "closed_at": opened,
        "currency": "USD",
        "prices_include_tax": False,
        "subtotal_amount": "10.00",
        "discount_amount": "0.00",
        "tax_amount": "0.80",
        "service_charge_amount": "0.00",
        "tip_amount": "0.00",
        "rounding_amount": "0.00",
        "total_amount": "10.80",
        "last_modified_at": stamp,
        "items": [
            {
                "line_no": 1,
                "parent_line_no": None,
                "product_id": PRODUCT,
                "product_name": "Smoke test item",
                "product_type": "SINGLE",
                "quantity": "1",
                "unit_price": "10.00",
                "discount_amount": "0.00",
                "line_amount": "10.00",
                "modifiers": [],
                "is_voided": False,
            }
        ],
        "payments": [
            {
                "payment_id": f"{STORE}-{day}-P1",
                "payment_type": "SALE",
                "payment_method": "CASH",
                "amount": "10.80",
                "tip_amount": "0.00",
                "paid_at": opened,
            }
        ],
    }
    close = {
        "batch_id": batch["daily-close"],
        "store_id": STORE,
        "business_date": day.isoformat(),
        "batch_count": 1,
        "trade_record_count": 1,
        "item_row_count": 1,
        "payment_row_count": 1,
        "net_sales_amount": "10.00",
        "tax_amount": "0.80",
        "tip_amount": "0.00",
        "payment_total_amount": "10.80",
        "currency": "USD",
        "closed_at": stamp,
    }
    return [
        ("stores", "stores", {"batch_id": batch["stores"], "stores": [store]}),
        ("products", "products", {"batch_id": batch["products"], "products": [product], "modifier_groups": []}),
        (
            "mapping",
            "mappings/transaction-types",
            {
                "batch_id": batch["mapping"],
                "mappings": [{"source_code": "S", "source_name": "Sale", "standard_code": "SALE"}],
            },
        ),
        (
            "trade-records",
            "trade-records",
            {
                "batch_id": batch["trade-records"],
                "store_id": STORE,
                "business_date": day.isoformat(),
                "batch_seq": 1,
                "trade_records": [record],
            },
        ),
        ("daily-close", "daily-close", close),
    ]
