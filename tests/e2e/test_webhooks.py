"""Webhooks over real HTTP, on both backends: a partner's endpoint (a loopback receiver) gets each
store-day's result signed as Standard Webhooks defines it (verified by the `standardwebhooks` library),
retried on a schedule of seconds through 500s and timeouts under one event id, nothing lost when the
host is killed with SIGKILL during a delivery; hostile targets refused (decisions 0104-0106)."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal

import pytest

from devhost.azurite_emulator import start_azurite
from tests.conftest import make_partner, start_azure_host, start_host
from tests.e2e.test_business_day import DAY, DIRECTIONS, open_store, wait_for_result
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record
from tests.webhook_receiver import Receiver
from triggers.openapi_webhooks import DailyCloseReconciledEvent

WEBHOOK_SETTINGS = {
    "WEBHOOK_ALLOW_LOOPBACK": "true",
    "WEBHOOK_RETRY_SECONDS": "1,1,1,1",
    "WEBHOOK_TIMEOUT_SECONDS": "1",
    # a message whose run died is seen again after 2 s, not 30
    "AzureFunctionsJobHost__extensions__queues__visibilityTimeout": "00:00:02",
}


@pytest.fixture(params=["sqlite", "azure"])
def start(request, tmp_path):
    """Starts a local host with webhooks allowed to loopback on the backend of the test's parameter; a
    second call starts another on the same data (after a crash)."""
    started = []
    shared: dict = {}

    def starting(**settings):
        tmp = tmp_path / f"host{len(started)}"
        tmp.mkdir()
        if request.param == "sqlite":
            host = start_host(tmp, data_dir=tmp_path / "data", **{**WEBHOOK_SETTINGS, **settings})
        else:
            if not shared:
                cosmos = request.getfixturevalue("cosmos_emulator")
                (tmp_path / "azurite").mkdir()
                shared["azurite"] = start_azurite(tmp_path / "azurite")
                shared["cosmos"] = cosmos
                shared["database"] = f"webhooks-{os.urandom(4).hex()}"
            host = start_azure_host(
                tmp,
                shared["cosmos"],
                shared["azurite"].connection_string,
                shared["database"],
                **{**WEBHOOK_SETTINGS, **settings},
            )
        started.append(host)
        return host

    yield starting
    for host in started:
        host.stop()
    if shared:
        shared["azurite"].stop()


def subscribe(host, partner_id: str, url: str) -> str:
    added = host.hq_in_process("partner", "webhook", "add", partner_id, url, "--format", "json")
    assert added.returncode == 0, added.stderr
    answer = json.loads(added.stdout)
    assert answer["secret"].startswith("whsec_")
    return answer["secret"]


def close_a_day(partner) -> None:
    open_store(partner)
    records = [trade_record("S1", DAY, [Line("P-BURGER", 2, 550)], tax=88, tip=100)]
    assert partner.post("trade-records", trade_batch("S1", DAY, records)).status_code == 202
    close = partner.post("daily-close", daily_close("S1", DAY, totals_of(records, {"01", "02"}, DIRECTIONS)))
    assert close.status_code == 202, close.text


def deliveries(host, partner_id: str) -> list[dict]:
    listed = host.hq_in_process("partner", "webhook", "deliveries", partner_id, "--format", "json")
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


def test_a_result_is_retried_through_a_500_and_a_timeout_under_one_signed_event_id(start):
    host = start()
    receiver = Receiver(["500", "timeout", "200"])
    try:
        partner = make_partner(host)
        secret = subscribe(host, partner.partner_id, receiver.url)
        close_a_day(partner)
        received = receiver.wait_for(3)
        assert [r.answer for r in received] == ["500", "timeout", "200"]
        assert len({r.headers["webhook-id"] for r in received}) == 1
        events = [r.verified(secret) for r in received]  # raises unless standardwebhooks accepts each
        assert all(event == events[0] for event in events)
        event = events[0]
        assert event["type"] == "daily_close.reconciled"
        assert event["data"] == wait_for_result(partner, "S1", DAY)  # as GET /daily-close answers it
        assert event["data"]["status"] == "MATCHED"
        DailyCloseReconciledEvent.model_validate_json(
            received[-1].body
        )  # as the OpenAPI document's webhooks describe it
        [delivery] = deliveries(host, partner.partner_id)
        assert delivery["event_id"] == received[0].headers["webhook-id"]
        assert delivery["state"] == "DELIVERED" and delivery["next_attempt_at"] is None
        assert [a["status_code"] for a in delivery["attempts"]] == [500, None, 200]
        assert delivery["attempts"][1]["outcome"] == "timeout"
    finally:
        receiver.close()


def test_a_sigkill_during_a_delivery_loses_nothing(start):
    host = start()
    receiver = Receiver(["hold"])
    try:
        partner = make_partner(host)
        secret = subscribe(host, partner.partner_id, receiver.url)
        close_a_day(partner)
        assert receiver.holding.wait(60), "the delivery never reached the receiver"
        os.kill(host.process.pid, signal.SIGKILL)  # the host dies while the partner has the request
        host.process.wait(10)
        receiver.release.set()
        again = start()
        received = receiver.wait_for(2)
        assert len(received) == 2
        assert received[0].headers["webhook-id"] == received[1].headers["webhook-id"]
        assert received[0].verified(secret) == received[1].verified(secret)
        [delivery] = deliveries(again, partner.partner_id)
        assert delivery["state"] == "DELIVERED"
    finally:
        receiver.close()


def test_a_sigkill_after_the_result_is_saved_still_publishes_it(start):
    """Killed between saving the result and queueing its event: the reconciliation message comes back,
    finds the result saved and publishes it (the fault point's kill mode, decision 0071)."""
    host = start(POS_FAULTS_KILL="reconcile.saved:1")
    receiver = Receiver([])
    try:
        partner = make_partner(host)
        secret = subscribe(host, partner.partner_id, receiver.url)
        close_a_day(partner)
        host.process.wait(60)  # killed at the fault point
        start()
        [first] = receiver.wait_for(1)
        assert first.verified(secret)["data"]["status"] == "MATCHED"
    finally:
        receiver.close()


@pytest.mark.parametrize(
    "url",
    [
        "https://10.0.0.5/hook",
        "https://192.168.1.10/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[fe80::1]/hook",
        "https://[::ffff:10.0.0.1]/hook",
        "https://168.63.129.16/hook",
        "http://example.com/hook",
        "https://user:pass@example.com/hook",
    ],
)
def test_hostile_targets_are_refused_at_registration(host, url):
    partner = make_partner(host)
    added = host.hq_in_process("partner", "webhook", "add", partner.partner_id, url)
    assert added.returncode == 1
    assert "whsec_" not in added.stdout + added.stderr


def test_loopback_is_refused_unless_allowed(host):
    partner = make_partner(host)  # the session's host: WEBHOOK_ALLOW_LOOPBACK is not set
    for url in ("https://127.0.0.1/hook", "https://localhost/hook", "https://[::1]/hook"):
        added = host.hq_in_process("partner", "webhook", "add", partner.partner_id, url)
        assert added.returncode == 1 and "loopback" in added.stderr, added.stderr


def test_hq_lists_rotates_tests_redelivers_and_removes_an_endpoint(start):
    host = start()
    receiver = Receiver([])
    try:
        partner = make_partner(host)
        old = subscribe(host, partner.partner_id, receiver.url)
        [listed] = json.loads(
            host.hq_in_process("partner", "webhook", "list", partner.partner_id, "--format", "json").stdout
        )
        assert listed["url"] == receiver.url and listed["active"] and "whsec_" not in json.dumps(listed)
        endpoint_id = listed["endpoint_id"]
        rotated = host.hq_in_process(
            "partner", "webhook", "rotate", partner.partner_id, endpoint_id, "--format", "json"
        )
        new = json.loads(rotated.stdout)["secret"]
        assert host.hq_in_process("partner", "webhook", "test", partner.partner_id, endpoint_id).returncode == 0
        [ping] = receiver.wait_for(1)
        assert ping.verified(old)["type"] == ping.verified(new)["type"] == "webhook.ping"  # both sign in the overlap
        event_id = ping.headers["webhook-id"]
        again = host.hq_in_process("partner", "webhook", "redeliver", partner.partner_id, event_id)
        assert again.returncode == 0, again.stderr
        assert [r.headers["webhook-id"] for r in receiver.wait_for(2)] == [event_id, event_id]
        [delivery] = deliveries(host, partner.partner_id)
        assert [a["status_code"] for a in delivery["attempts"]] == [200, 200]
        shown = host.hq_in_process("partner", "webhook", "deliveries", partner.partner_id).stdout
        assert event_id in shown and "DELIVERED" in shown
        assert host.hq_in_process("partner", "webhook", "remove", partner.partner_id, endpoint_id).returncode == 0
        assert host.hq_in_process("partner", "webhook", "test", partner.partner_id, endpoint_id).returncode == 1
    finally:
        receiver.close()


@pytest.mark.parametrize("start", ["sqlite"], indirect=True)
def test_pos_partner_listen_prints_verified_events_and_their_duplicates(start, tmp_path):
    import subprocess
    import sys
    import time

    from devhost.processes import free_port, stop_process

    host = start()
    partner = make_partner(host)
    port = free_port()
    secret = subscribe(host, partner.partner_id, f"http://127.0.0.1:{port}/")
    output = tmp_path / "listen.out"
    listening = subprocess.Popen(
        [sys.executable, "-m", "pos_partner_client", "listen", "--port", str(port), "--format", "json"],
        env={**os.environ, "POS_WEBHOOK_SECRET": secret},
        stdout=output.open("wb"),
        stderr=subprocess.DEVNULL,
    )
    try:
        [listed] = json.loads(
            host.hq_in_process("partner", "webhook", "list", partner.partner_id, "--format", "json").stdout
        )
        deadline = time.monotonic() + 60
        while "webhook.ping" not in output.read_text() and time.monotonic() < deadline:
            host.hq_in_process("partner", "webhook", "test", partner.partner_id, listed["endpoint_id"])
            time.sleep(1)  # until the listener is up
        lines = [json.loads(line) for line in output.read_text().splitlines()]
        event_id = lines[0]["id"]
        assert host.hq_in_process("partner", "webhook", "redeliver", partner.partner_id, event_id).returncode == 0
        while time.monotonic() < deadline and not any(
            json.loads(x)["duplicate"] for x in output.read_text().splitlines()
        ):
            time.sleep(0.2)
        again = [json.loads(line) for line in output.read_text().splitlines() if json.loads(line)["id"] == event_id]
        assert [event["duplicate"] for event in again] == [False, True]
        assert again[0]["type"] == "webhook.ping"
    finally:
        stop_process(listening)


@pytest.mark.parametrize("start", ["sqlite"], indirect=True)
def test_hq_sees_attempts_status_codes_and_the_next_retry_on_the_partner_page(start):
    from backends.sqlite.storage import SqliteStorage
    from backends.sqlite.webhooks import SqliteWebhookStore
    from hq.dashboard.server import Dashboard

    host = start(WEBHOOK_RETRY_SECONDS="3600")
    receiver = Receiver([], then="503")
    try:
        partner = make_partner(host)
        subscribe(host, partner.partner_id, receiver.url)
        endpoint_id = json.loads(
            host.hq_in_process("partner", "webhook", "list", partner.partner_id, "--format", "json").stdout
        )[0]["endpoint_id"]
        host.hq_in_process("partner", "webhook", "test", partner.partner_id, endpoint_id)
        receiver.wait_for(1)
        [delivery] = deliveries(host, partner.partner_id)
        while not delivery["attempts"]:  # the attempt is recorded just after the answer
            [delivery] = deliveries(host, partner.partner_id)
        assert delivery["state"] == "PENDING" and delivery["next_attempt_at"] is not None
        assert [a["status_code"] for a in delivery["attempts"]] == [503]
        dashboard = Dashboard(SqliteStorage(host.data_dir), webhooks=SqliteWebhookStore(host.data_dir))
        page = dashboard.get(f"/partners/{partner.partner_id}/profile")
        assert page.status == 200
        assert delivery["event_id"] in page.body and "503" in page.body and "PENDING" in page.body
        next_retry = dt.datetime.fromisoformat(delivery["next_attempt_at"]).strftime("%Y-%m-%d %H:%M:%S UTC")
        assert next_retry in page.body
    finally:
        receiver.close()


@pytest.mark.parametrize("start", ["sqlite"], indirect=True)
def test_hq_reconcile_run_pushes_the_result_it_saves(start):
    host = start(RECONCILE_DELAY_SECONDS="3600")  # the queue worker would run it an hour later
    receiver = Receiver([])
    try:
        partner = make_partner(host)
        secret = subscribe(host, partner.partner_id, receiver.url)
        close_a_day(partner)
        ran = host.hq_in_process("reconcile", "run", partner.partner_id, "S1", DAY)
        assert ran.returncode == 0, ran.stderr
        [pushed] = receiver.wait_for(1)
        event = pushed.verified(secret)
        assert event["type"] == "daily_close.reconciled" and event["data"]["status"] == "MATCHED"
    finally:
        receiver.close()
