"""PosClient: one method per endpoint of the service, push_day for a whole store-day, wait_for_result.

    client = PosClient("https://pos.example.com/pos/v1", key=os.environ["POS_API_KEY"])
    # or, once HQ moved the partner to OAuth 2.0: PosClient(base_url, credentials=ClientCredentials(...))
    pushed = client.push_day("NYC-001", "2026-11-20", records, close)
    result = client.wait_for_result("NYC-001", "2026-11-20", timeout=1200)

Every method returns a typed result or raises PosApiError; retries and pacing are the transport's
(transport.py).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pos_partner_client.batching import DEFAULT_NAMESPACE, Batch, close_body, encode, plan_batches, write_body
from pos_partner_client.explain import CountedDay, Explanation, explain
from pos_partner_client.models import BatchOutcome, BatchResult, CodeList, DayPush, DayStatus, MappingSet
from pos_partner_client.tokens import TokenSource
from pos_partner_client.transport import RetryPolicy, Transport, Wait

REFERENCE_LISTS = ("order-types", "order-sources", "payment-methods", "payment-types", "tax-categories")
CODE_LISTS = ("transaction-types", *REFERENCE_LISTS)


class PosClient:
    """The service at `base_url` (ending in /pos/v1) as one partner, by its key or by the access tokens of its
    `credentials` (tokens.ClientCredentials, or any TokenSource); given both, every request carries both.

    `namespace`: the partner's own UUID namespace for the batch_ids the client derives (keep it; change it only
    to have the same data stored again as new batches). `on_wait` hears of every pause (429, 503, pacing).
    `validate_only`: every write is sent with `?validate_only=true`: HQ runs all its checks and stores nothing
    (the answer says VALID, with the warnings and problems a real send would get).
    """

    def __init__(
        self,
        base_url: str,
        key: str | None = None,
        *,
        credentials: TokenSource | None = None,
        namespace: uuid.UUID = DEFAULT_NAMESPACE,
        retry: RetryPolicy | None = None,
        timeout_seconds: float = 60.0,
        on_wait: Callable[[Wait], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        validate_only: bool = False,
    ) -> None:
        self.namespace = namespace
        self.validate_only = validate_only
        self.sleep = sleep
        if not key and credentials is None:
            raise ValueError("give the partner's key or its OAuth client credentials")
        self.transport = Transport(
            base_url, key or None, retry or RetryPolicy(), timeout_seconds, on_wait, sleep, credentials=credentials
        )

    # --- reads -----------------------------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """GET /health (no key needed): `{"status": "ok", "checks": {...}}`; a 503 raises after the retries."""
        answer: dict[str, Any] = self.transport.request("GET", "health").json()
        return answer

    def get_day_status(self, store_id: str, business_date: str) -> DayStatus:
        path = f"daily-close/{urllib.parse.quote(store_id, safe='')}/{business_date}"
        return DayStatus.from_json(self.transport.request("GET", path).json())

    def get_mappings(self) -> MappingSet:
        """GET /mappings/transaction-types: the mapping in effect."""
        return MappingSet.from_json(self.transport.request("GET", "mappings/transaction-types").json())

    def get_code_list(self, code_type: str) -> CodeList:
        """GET /reference/transaction-types or /reference/{order-types|order-sources|payment-methods|
        payment-types|tax-categories}."""
        if code_type not in CODE_LISTS:
            raise ValueError(f"unknown code list {code_type!r}: one of {', '.join(CODE_LISTS)}")
        return CodeList.from_json(self.transport.request("GET", f"reference/{code_type}").json())

    def get_counted_records(
        self, store_id: str, business_date: str, *, transaction_type: str | None = None, page_size: int = 500
    ) -> CountedDay:
        """GET /trade-records, every page: the store-day's records as HQ counted them, with the records HQ
        moved to another store-day and the counting rules in effect."""
        records: list[dict[str, Any]] = []
        first: dict[str, Any] | None = None
        continuation: str | None = None
        while True:
            query = {"store_id": store_id, "business_date": business_date, "limit": str(page_size)}
            if transaction_type is not None:
                query["transaction_type"] = transaction_type
            if continuation is not None:
                query["continuation"] = continuation
            page: dict[str, Any] = self.transport.request(
                "GET", "trade-records?" + urllib.parse.urlencode(query)
            ).json()
            first = first or page
            records += page["trade_records"]
            continuation = page.get("continuation")
            if not continuation:
                break
        return CountedDay(
            store_id, business_date, first.get("currency"), records, first["moved_out"], first["counting"]
        )

    def explain_day(
        self, store_id: str, business_date: str, records: Iterable[Mapping[str, Any]], close: Mapping[str, Any]
    ) -> Explanation:
        """The transactions that make the store-day differ: `records` and `close` as pushed (push_day's),
        compared with what HQ counted (see explain.py)."""
        status = self.get_day_status(store_id, business_date)
        counted = self.get_counted_records(store_id, business_date)
        result = (
            {"expected": dataclasses.asdict(status.expected), "actual": dataclasses.asdict(status.actual)}
            if (status.final and status.expected and status.actual)
            else None
        )
        return explain(records, close, counted, status.status, result)

    # --- writes ----------------------------------------------------------------------------------------------

    def put_stores(self, stores: Sequence[Mapping[str, Any]], *, batch_id: str | None = None) -> BatchResult:
        return self._write("PUT", "stores", write_body(self.namespace, "stores", batch_id, {"stores": stores}))

    def put_products(
        self,
        products: Sequence[Mapping[str, Any]],
        modifier_groups: Sequence[Mapping[str, Any]] = (),
        *,
        batch_id: str | None = None,
    ) -> BatchResult:
        members = {"products": products, "modifier_groups": modifier_groups}
        return self._write("PUT", "products", write_body(self.namespace, "products", batch_id, members))

    def put_mappings(self, mappings: Sequence[Mapping[str, Any]], *, batch_id: str | None = None) -> BatchResult:
        """PUT /mappings/transaction-types: the partner's codes and the HQ standard types they stand for."""
        body = write_body(self.namespace, "mappings", batch_id, {"mappings": mappings})
        return self._write("PUT", "mappings/transaction-types", body)

    def post_trade_records(
        self, store_id: str, business_date: str, batch_seq: int, records: Sequence[Mapping[str, Any]], *, batch_id: str
    ) -> BatchResult:
        """One batch as the partner made it (at most 500 records); push_day makes the batches itself."""
        body = encode(
            {
                "batch_id": batch_id,
                "store_id": store_id,
                "business_date": business_date,
                "batch_seq": batch_seq,
                "trade_records": records,
            }
        )
        return self._write("POST", "trade-records", body)

    def post_daily_close(self, close: Mapping[str, Any]) -> BatchResult:
        """One daily close as the partner made it (batch_id and batch_count included)."""
        return self._write("POST", "daily-close", encode(close))

    def _write(self, method: str, path: str, body: bytes) -> BatchResult:
        query = "?validate_only=true" if self.validate_only else ""
        return BatchResult.from_json(self.transport.request(method, path + query, body).json())

    # --- a whole store-day ---------------------------------------------------------------------------------

    def push_day(
        self,
        store_id: str,
        business_date: str,
        records: Iterable[Mapping[str, Any]],
        close: Mapping[str, Any],
        *,
        on_sent: Callable[[BatchOutcome], None] | None = None,
    ) -> DayPush:
        """Send a store-day: its trade records in batches of at most 500 records and 5 MB (batch_seq 1, 2, ...,
        batch_ids derived from the content, see batching.py), then the daily close with that batch_count.

        `close` holds the POS's control totals (trade_record_count ... payment_total_amount, currency,
        closed_at); its batch_id and batch_count are the client's. `on_sent` hears of each request's outcome.
        A problem stops the push (PosApiError) before the daily close: fix it and call push_day again, the
        batches already received then answer ALREADY_RECEIVED.
        """
        planned = self.plan_day(store_id, business_date, records)
        outcomes = []
        for batch in planned:
            outcome = BatchOutcome("trade-records", batch.batch_seq, self._write("POST", "trade-records", batch.body))
            outcomes.append(outcome)
            if on_sent is not None:
                on_sent(outcome)
        _, body = close_body(self.namespace, store_id, business_date, len(planned), close)
        closed = BatchOutcome("daily-close", 0, self._write("POST", "daily-close", body))
        if on_sent is not None:
            on_sent(closed)
        return DayPush(store_id, business_date, tuple(outcomes), closed)

    def plan_day(self, store_id: str, business_date: str, records: Iterable[Mapping[str, Any]]) -> list[Batch]:
        """The batches push_day would send, without sending anything."""
        return plan_batches(self.namespace, store_id, business_date, records)

    def wait_for_result(
        self,
        store_id: str,
        business_date: str,
        timeout: float = 1200.0,
        *,
        first_interval: float = 1.0,
        max_interval: float = 30.0,
    ) -> DayStatus:
        """Poll the store-day until MATCHED or MISMATCHED, the interval doubling from `first_interval` up to
        `max_interval`, with jitter; while the service gives the day's reconciliation_due_at, it sleeps until
        just after it instead. At the timeout, the last status (RECEIVED or NOT_RECEIVED): check `.final`.
        """
        deadline = time.monotonic() + timeout
        interval = first_interval
        rng = random.Random()
        while True:
            status = self.get_day_status(store_id, business_date)
            left = deadline - time.monotonic()
            if status.final or left <= 0:
                return status
            due = _seconds_until(status.reconciliation_due_at)
            if due is not None and due > 0:  # nothing to see before then: one poll just after it
                pause = due + 0.5
            else:
                pause = rng.uniform(interval / 2, interval)
                interval = min(interval * 2, max_interval)
            self.sleep(max(min(pause, left), 0.05))


def _seconds_until(moment: str | None) -> float | None:
    if not moment:
        return None
    try:
        when = dt.datetime.fromisoformat(moment)  # Python 3.11 reads a trailing Z
    except ValueError:
        return None
    return (when - dt.datetime.now(dt.UTC)).total_seconds()
