"""The partner client (client/, pos_partner_client) against the local host over HTTP (decision 0081).

A whole day to MATCHED on both backends; 2,000 records cut into batches of 500, and heavy records cut by the
5 MB rule; a 429 waited out and the rest of the day paced by the RateLimit header; a 503 (the queue stopped,
then started again) retried until the day goes through; a connection cut after the request reached the
service, retried to ALREADY_RECEIVED. Every day ends MATCHED with HQ's counts equal to what was sent once.
"""

from __future__ import annotations

import socket
import threading
import time
import uuid

import pytest
import requests
from pos_partner_client import MAX_BATCH_BYTES, PosApiError, PosClient, RetryPolicy, Wait

from tests.conftest import make_partner, start_azure_host, start_host
from tests.e2e.test_business_day import DIRECTIONS
from tests.payloads import store
from tests.raw_http import read_request
from tests.trade_payloads import Line, totals_of, trade_record

DAY = "2026-11-20"
MAPPINGS = [
    {"source_code": "01", "source_name": "Sale", "standard_code": "SALE"},
    {"source_code": "02", "source_name": "Refund", "standard_code": "REFUND"},
]
QUICK = RetryPolicy(max_attempts=30, max_elapsed_seconds=90, base_delay_seconds=0.2, max_delay_seconds=2)


def records_of_day(store_id: str, count: int, **changes) -> list[dict]:
    return [
        trade_record(
            store_id, DAY, [Line("P-BURGER", 1 + n % 3, 550), Line("P-FRIES", 1, 349)], tax=(n % 7) * 10, **changes
        )
        for n in range(count)
    ]


def close_of(records: list[dict]) -> dict:
    """The POS's control totals of the day: no batch_id, no batch_count (the client's)."""
    return {**totals_of(records, {"01"}, DIRECTIONS), "currency": "USD", "closed_at": "2026-11-21T04:05:00Z"}


def client_of(partner, base_url: str | None = None, waits: list[Wait] | None = None, **options) -> PosClient:
    return PosClient(
        base_url or partner.host.base_url,
        partner.key,
        namespace=uuid.uuid4(),
        on_wait=None if waits is None else waits.append,
        **options,
    )


def set_up(client: PosClient, *store_ids: str) -> None:
    assert client.put_stores([store(store_id) for store_id in store_ids]).status == "ACCEPTED"
    assert client.put_mappings(MAPPINGS).status == "ACCEPTED"


def assert_matched_once(client: PosClient, store_id: str, records: list[dict], batch_count: int) -> None:
    """MATCHED, and HQ counted every record once: nothing lost, nothing doubled."""
    result = client.wait_for_result(store_id, DAY, timeout=60, first_interval=0.2)
    assert result.status == "MATCHED", result
    assert result.actual == result.expected and result.actual is not None
    assert result.actual.trade_record_count == len(records)
    assert result.actual.item_row_count == sum(len(record["items"]) for record in records)
    assert result.details is not None
    assert result.details["batch_seqs_received"] == list(range(1, batch_count + 1))
    assert result.details["batch_count_expected"] == batch_count


def test_a_whole_day_reaches_matched_and_a_resend_doubles_nothing(backend_host):
    partner = make_partner(backend_host, ("S1",))
    client = client_of(partner)
    set_up(client, "S1")
    assert [(m.source_code, m.standard_code) for m in client.get_mappings().mappings] == [
        ("01", "SALE"),
        ("02", "REFUND"),
    ]
    assert "DEPOSIT_APPLIED" in {code.code for code in client.get_code_list("payment-types").codes}
    sale = next(code for code in client.get_code_list("transaction-types").codes if code.code == "SALE")
    assert sale.is_revenue is True and sale.amount_sign == 1
    assert client.get_day_status("S1", DAY).status == "NOT_RECEIVED"

    records = records_of_day("S1", 30)
    sent: list = []
    pushed = client.push_day("S1", DAY, records, close_of(records), on_sent=sent.append)
    assert [(b.batch_seq, b.result.status, b.result.record_count) for b in pushed.batches] == [(1, "ACCEPTED", 30)]
    assert pushed.close.result.status == "ACCEPTED" and pushed.warnings == ()
    assert sent == [*pushed.batches, pushed.close]
    assert_matched_once(client, "S1", records, 1)

    # The same day pushed again: the same batch_ids, so the service answers ALREADY_RECEIVED throughout.
    again = client.push_day("S1", DAY, records, close_of(records))
    assert [b.result.batch_id for b in again.batches] == [b.result.batch_id for b in pushed.batches]
    assert {b.result.status for b in (*again.batches, again.close)} == {"ALREADY_RECEIVED"}
    assert_matched_once(client, "S1", records, 1)


def test_problems_carry_code_errors_and_request_id_and_warnings_come_back(host):
    partner = make_partner(host, ("S1",))
    client = client_of(partner)
    set_up(client, "S1")
    bad = records_of_day("S1", 3)
    bad[2]["items"][0]["unit_price"] = 5.5  # a JSON number where a decimal string is required
    with pytest.raises(PosApiError) as refused:
        client.push_day("S1", DAY, bad, close_of(bad))
    problem = refused.value
    assert (problem.status, problem.code, problem.retryable) == (400, "INVALID_PAYLOAD", False)
    assert "trade_records[2].items[0].unit_price" in [item.path for item in problem.errors]
    assert problem.request_id and partner.key not in str(problem)
    assert client.get_day_status("S1", DAY).status == "NOT_RECEIVED"  # stopped before the daily close

    with pytest.raises(PosApiError) as not_allowed:
        client.push_day("S2", DAY, [], close_of([]))
    assert (not_allowed.value.status, not_allowed.value.code) == (403, "STORE_NOT_ALLOWED")

    warned = records_of_day("S1", 2)
    warned[1]["items"][0]["line_amount"] = "99.99"
    pushed = client.push_day("S1", DAY, warned, close_of(warned))
    assert [(outcome.batch_seq, warning.code, warning.path) for outcome, warning in pushed.warnings] == [
        (1, "LINE_AMOUNT_MISMATCH", "trade_records[1]")
    ]


def test_a_day_of_2000_records_goes_in_four_batches_of_500(host):
    partner = make_partner(host, ("S1",))
    client = client_of(partner)
    set_up(client, "S1")
    records = records_of_day("S1", 2000)
    planned = client.plan_day("S1", DAY, records)
    assert [(batch.batch_seq, batch.record_count) for batch in planned] == [(1, 500), (2, 500), (3, 500), (4, 500)]
    pushed = client.push_day("S1", DAY, records, close_of(records))
    assert [(b.batch_seq, b.result.status, b.result.record_count) for b in pushed.batches] == [
        (seq, "ACCEPTED", 500) for seq in (1, 2, 3, 4)
    ]
    assert len({b.result.batch_id for b in pushed.batches}) == 4
    assert_matched_once(client, "S1", records, 4)


def test_heavy_records_are_cut_by_the_5_mb_rule_before_500(host):
    partner = make_partner(host, ("S1",))
    client = client_of(partner)
    set_up(client, "S1")
    # About 13 kB of JSON a record (product ids of 100 characters, repeated as product names): 375 fit in 5 MB.
    lines = [Line(f"P-{n:03d}-" + "x" * 100, 1, 100 + n) for n in range(30)]
    records = [trade_record("S1", DAY, lines) for _ in range(600)]
    planned = client.plan_day("S1", DAY, records)
    assert len(planned) == 2 and planned[0].record_count < 500
    assert all(len(batch.body) <= MAX_BATCH_BYTES for batch in planned)
    assert planned[0].record_count + planned[1].record_count == 600
    pushed = client.push_day("S1", DAY, records, close_of(records))
    assert [b.result.record_count for b in pushed.batches] == [batch.record_count for batch in planned]
    assert_matched_once(client, "S1", records, 2)


def test_a_429_is_waited_out_then_the_client_paces_itself(tmp_path):
    limited = start_host(tmp_path, RATE_LIMIT_PER_MINUTE="6")
    try:
        partner = make_partner(limited, ("S1",))
        while partner.get("mappings/transaction-types").status_code != 429:  # another process used the quota
            pass
        waits: list[Wait] = []
        client = client_of(partner, waits=waits)
        set_up(client, "S1")  # the first request draws the 429, and waits out its Retry-After
        records = records_of_day("S1", 1600)
        pushed = client.push_day("S1", DAY, records, close_of(records))  # 4 batches and the close
        assert [b.result.status for b in (*pushed.batches, pushed.close)] == ["ACCEPTED"] * 5
        assert_matched_once(client, "S1", records, 4)
    finally:
        limited.stop()
    reasons = [wait.reason for wait in waits]
    # One 429, then never another: the RateLimit header said when the window was spent.
    assert reasons.count("RATE_LIMITED") == 1 and reasons[0] == "RATE_LIMITED", reasons
    assert "PACING" in reasons and 0 < waits[0].seconds <= 60, waits


def test_a_503_is_retried_until_the_queue_is_back(tmp_path, cosmos_emulator):
    from devhost.azurite_emulator import start_azurite

    azurite = start_azurite(tmp_path)
    outage = start_azure_host(tmp_path, cosmos_emulator, azurite.connection_string)
    restarted = []
    try:
        partner = make_partner(outage, ("S1",))
        waits: list[Wait] = []
        client = client_of(partner, waits=waits, retry=QUICK)
        set_up(client, "S1")
        azurite.stop()  # the daily close cannot be enqueued: 503, nothing stored

        def start_again() -> None:
            while not any(wait.reason == "SERVICE_UNAVAILABLE" for wait in waits):
                time.sleep(0.1)
            time.sleep(2)
            restarted.append(restart_azurite(azurite, tmp_path))

        threading.Thread(target=start_again, daemon=True).start()
        records = records_of_day("S1", 40)
        pushed = client.push_day("S1", DAY, records, close_of(records))
        assert pushed.close.result.status == "ACCEPTED"
        assert [wait.reason for wait in waits].count("SERVICE_UNAVAILABLE") >= 1
        assert_matched_once(client, "S1", records, 1)
    finally:
        outage.stop()
        for emulator in restarted:
            emulator.stop()


def restart_azurite(stopped, work_dir):
    """Azurite again on the port it had (in memory: the host's queue is created again on the next send)."""
    import subprocess

    from devhost.azurite_emulator import AZURITE_QUEUE, COMMON_OPTIONS, Azurite

    log_path = work_dir / f"azurite-{stopped.port}-again.log"
    process = subprocess.Popen(
        [str(AZURITE_QUEUE), "--queueHost", "127.0.0.1", "--queuePort", str(stopped.port), *COMMON_OPTIONS],
        cwd=work_dir,
        stdout=log_path.open("wb"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    return Azurite(stopped.port, process, log_path)


class CuttingProxy:
    """A TCP proxy to the host that, on the first POST, passes the request on, waits until the service has
    answered (so it has stored the batch), then closes the partner's connection without the answer."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.cut = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                partner, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(partner,), daemon=True).start()

    def _relay(self, partner: socket.socket) -> None:
        with partner, socket.create_connection(("127.0.0.1", self.upstream_port)) as service:
            request = read_request(partner)
            service.sendall(request)
            answer = service.recv(65536)
            if request.startswith(b"POST") and self.cut == 0:
                self.cut += 1
                return  # the service answered; the partner never hears it
            while answer:
                partner.sendall(answer)
                answer = service.recv(65536)

    def close(self) -> None:
        self.listener.close()


def test_a_connection_cut_after_the_send_is_retried_to_already_received(host):
    partner = make_partner(host, ("S1",))
    set_up(client_of(partner), "S1")
    proxy = CuttingProxy(int(host.base_url.split(":")[2].split("/")[0]))
    try:
        waits: list[Wait] = []
        client = client_of(partner, f"http://127.0.0.1:{proxy.port}/pos/v1", waits, retry=QUICK)
        records = records_of_day("S1", 25)
        pushed = client.push_day("S1", DAY, records, close_of(records))
    finally:
        proxy.close()
    assert proxy.cut == 1 and [wait.reason for wait in waits] == ["CONNECTION"]
    batch = pushed.batches[0].result
    assert (batch.status, batch.record_count) == ("ALREADY_RECEIVED", 25)  # the first send was stored
    assert pushed.close.result.status == "ACCEPTED"
    assert_matched_once(client_of(partner), "S1", records, 1)
    marker = requests.get(host.url(f"daily-close/S1/{DAY}"), headers=partner.headers(), timeout=10).json()
    assert marker["details"]["batch_count_received"] == 1
