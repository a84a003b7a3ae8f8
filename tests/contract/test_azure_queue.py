"""The Azure Storage Queue adapter against Azurite: the message the sender writes is the message the
queue trigger decodes, poisoned messages are listed and replayed by `hq`, outages surface as
BackendUnavailable. The same `hq` commands run on the SQLite queue."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import io
import json
import os
import subprocess
import sys
import threading
import time
import types
import uuid

import orjson
import pytest
from azure.storage.queue import LinearRetry, QueueClient

from backends.azure_queue import MAX_DELAY_SECONDS, AzureQueue, host_message_encoding
from backends.queues import RECONCILE_QUEUE, open_reconcile_queue
from backends.sqlite.delayed_queue import SqliteQueue
from backends.sqlite.storage import SqliteStorage
from core import reconcile_messages
from core.clock import utc_now
from core.ports import BackendUnavailable
from core.records import ReconcileRequest
from core.settings import Settings, host_settings
from devhost.functions import QueueFunction
from devhost.triggers import QueueTriggerRunner
from ingest.daily_close import post_daily_close
from ingest.stores import put_stores
from tests.conftest import ROOT, free_port
from tests.payloads import stores_batch
from tests.trade_payloads import daily_close

DAY = "2026-11-20"
ZERO_TOTALS = {
    "trade_record_count": 0,
    "item_row_count": 0,
    "payment_row_count": 0,
    "net_sales_amount": "0.00",
    "tax_amount": "0.00",
    "tip_amount": "0.00",
    "payment_total_amount": "0.00",
}
HOST_QUEUES = host_settings()["extensions"]["queues"]
MAX_DEQUEUE = int(HOST_QUEUES["maxDequeueCount"])


def dt_date(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def unique_queue() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def queue(azurite) -> AzureQueue:
    return AzureQueue(unique_queue(), connection_string=azurite.connection_string)


@pytest.fixture
def reconcile_queue(azurite) -> AzureQueue:
    """The real queue name, as `hq` opens it; emptied first (one Azurite serves the session)."""
    opened = AzureQueue(RECONCILE_QUEUE, connection_string=azurite.connection_string)
    opened.ensure_queues()
    opened._client.clear_messages()
    opened._poison.clear_messages()
    return opened


def raw_client(azurite, queue_name: str) -> QueueClient:
    """A plain client without encoding policies: the text on the wire."""
    return QueueClient.from_connection_string(azurite.connection_string, queue_name)


def runner(queue, handler, **settings) -> QueueTriggerRunner:
    function = QueueFunction("reconcile_store_day", RECONCILE_QUEUE, handler)
    return QueueTriggerRunner(function, queue, {**HOST_QUEUES, **settings}, threading.Event())


def poison_by_failing(queue, visibility: str) -> int:
    """Let the trigger fail on the queue's one message until it moves to the poison queue; returns
    how many times the function was called."""
    attempts = []

    def fail(msg) -> None:
        attempts.append(msg.id)
        raise RuntimeError("the function fails")

    failing = runner(queue, fail, visibilityTimeout=visibility)
    deadline = time.monotonic() + 60
    while not queue.poison_messages():
        assert time.monotonic() < deadline, "the message never reached the poison queue"
        if not failing.run_once():
            time.sleep(0.1)
    return len(attempts)


def hq(env: dict, *args: str) -> subprocess.CompletedProcess:
    """The real `hq` code, in this process, with the given settings."""
    from hq.cli import main

    saved = dict(os.environ)
    out, err = io.StringIO(), io.StringIO()
    try:
        os.environ.update(env)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return subprocess.CompletedProcess(["hq", *args], code, out.getvalue(), err.getvalue())


def azure_env(azurite, tmp_path) -> dict:
    return {"POS_BACKEND": "azure", "AzureWebJobsStorage": azurite.connection_string, "POS_DATA_DIR": str(tmp_path)}


def listed_ids(listing: str) -> list[str]:
    return [line.split()[0] for line in listing.strip().splitlines()[1:] if not line.startswith("Showing")]


# --- the message the sender writes is the message the trigger decodes ------------------------------


@pytest.fixture
def store_day(tmp_path):
    """SQLite storage with a partner and a store that may send a daily close."""
    storage = SqliteStorage(tmp_path / "data")
    partner = storage.add_partner(f"p-{uuid.uuid4().hex[:8]}", "P", utc_now())
    storage.register_stores(partner.partner_id, ["S1"], utc_now())
    assert put_stores(storage, partner, json.dumps(stores_batch()).encode()).http_status == 202
    return storage, partner


def test_a_daily_close_reaches_the_queue_trigger_as_the_sender_wrote_it(azurite, queue, store_day, monkeypatch):
    storage, partner = store_day
    close = daily_close("S1", DAY, ZERO_TOTALS, batch_count=0)
    assert post_daily_close(storage, queue, partner, json.dumps(close).encode(), delay_seconds=0).http_status == 202
    sent = reconcile_messages.encode(ReconcileRequest(partner.partner_id, "S1", dt_date(DAY), close["batch_id"]))

    # On the wire: base64 of the JSON the sender wrote, as host.json tells the trigger to expect.
    assert host_message_encoding() == HOST_QUEUES["messageEncoding"] == "base64"
    (peeked,) = raw_client(azurite, queue.queue_name).peek_messages()
    assert base64.b64decode(peeked.content, validate=True) == sent.encode()
    assert orjson.loads(base64.b64decode(peeked.content)) == {
        "partner_id": partner.partner_id,
        "store_id": "S1",
        "business_date": DAY,
        "close_batch_id": close["batch_id"],
    }

    # The local host's trigger path hands the app's own function the decoded bytes. (The function is
    # taken from its decorator: app.get_functions() may be called only once per process.)
    from triggers.reconciliation import reconcile_store_day as registered

    monkeypatch.setattr("triggers.reconciliation.current_backend", lambda: types.SimpleNamespace(storage=storage))
    real = registered._function.get_user_function()
    given = []

    def reconcile_store_day(msg, context):
        given.append(msg)
        return real(msg, context)

    assert runner(queue, reconcile_store_day).run_once()
    (msg,) = given
    assert msg.get_body() == sent.encode()
    assert reconcile_messages.decode(msg.get_body()) == ReconcileRequest(
        partner.partner_id, "S1", dt_date(DAY), close["batch_id"]
    )
    assert storage.get_closed_day(partner.partner_id, "S1", dt_date(DAY)).status == "MATCHED"
    assert raw_client(azurite, queue.queue_name).peek_messages() == []  # deleted once processed


def test_the_delay_is_the_visibility_timeout(queue):
    queue.send('{"n": 1}', delay_seconds=2)
    assert queue.receive(30) is None
    deadline = time.monotonic() + 10
    while (message := queue.receive(30)) is None:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert (message.body, message.dequeue_count) == (b'{"n": 1}', 1)


def test_a_delay_beyond_the_service_limit_is_shortened_to_seven_days(queue, azurite):
    queue.send('{"far": true}', delay_seconds=MAX_DELAY_SECONDS + 3600)  # the service refuses more
    assert queue.receive(30) is None
    assert queue._client.get_queue_properties().approximate_message_count == 1


def test_non_ascii_text_survives_the_round_trip(queue):
    queue.send('{"store_id": "台北-01"}', 0)
    assert queue.receive(30).body == '{"store_id": "台北-01"}'.encode()


def test_with_message_encoding_none_the_wire_holds_the_json_itself(azurite):
    plain = AzureQueue(unique_queue(), connection_string=azurite.connection_string, message_encoding="none")
    plain.send('{"a": 1}', 0)
    assert raw_client(azurite, plain.queue_name).peek_messages()[0].content == '{"a": 1}'
    assert plain.receive(30).body == b'{"a": 1}'


def test_a_message_not_in_base64_goes_to_the_poison_queue_at_once(azurite, queue):
    """What a sender that forgot the encoding writes: the JSON itself (the host refuses it too)."""
    queue.ensure_queues()
    raw_client(azurite, queue.queue_name).send_message('{"partner_id": "p1"}')
    assert queue.receive(30) is None
    (poisoned,) = queue.poison_messages()
    assert raw_client(azurite, queue.poison_name).peek_messages()[0].content == '{"partner_id": "p1"}'
    assert not poisoned.decodable

    assert queue.replay_poison(poisoned.message_id)  # put back as it came, so poisoned again at once
    assert raw_client(azurite, queue.queue_name).peek_messages()[0].content == '{"partner_id": "p1"}'
    assert queue.receive(30) is None
    assert len(queue.poison_messages()) == 1


@pytest.mark.parametrize(
    "body",
    [b"\xff\xfe not UTF-8", '{"partner_id": "ÄRZTE-東京", "store_id": 42}'.encode(), b"[]"],
    ids=["bytes", "partial", "not-an-object"],
)
def test_a_message_the_function_cannot_decode_goes_to_the_poison_queue_at_once(azurite, queue, monkeypatch, body):
    """Valid base64, so the host hands it over; but it is no reconciliation request. The app's function
    moves it to the poison queue on its first attempt instead of failing five times."""
    from triggers.reconciliation import reconcile_store_day as registered

    monkeypatch.setattr("triggers.reconciliation.current_backend", lambda: types.SimpleNamespace(queue=queue))
    queue.ensure_queues()
    queue._client.send_message(body)
    trigger = runner(queue, registered._function.get_user_function())
    assert trigger.run_once()
    assert raw_client(azurite, queue.queue_name).peek_messages() == []  # deleted: no retry
    (poisoned,) = queue.poison_messages()
    assert (poisoned.body, poisoned.dequeue_count) == (body, 0)  # as it came, in the agreed encoding
    assert base64.b64decode(raw_client(azurite, queue.poison_name).peek_messages()[0].content) == body
    assert not trigger.run_once()


def test_the_host_settings_overrides_are_read_as_the_host_reads_them(monkeypatch, tmp_path):
    """AzureFunctionsJobHost__ app settings win over host.json (keys without regard to case), for the
    sender's encoding, the trigger's attempts and the route prefix alike."""
    from core.settings import max_dequeue_count, message_encoding, route_prefix

    monkeypatch.setenv("AzureFunctionsJobHost__extensions__queues__maxDequeueCount", "2")
    monkeypatch.setenv("AZUREFUNCTIONSJOBHOST__Extensions__Queues__MessageEncoding", "none")
    monkeypatch.setenv("AzureFunctionsJobHost__extensions__http__routePrefix", "")
    settings = host_settings()
    assert (max_dequeue_count(settings), message_encoding(settings), route_prefix(settings)) == (2, "none", "")
    assert settings["extensions"]["queues"]["visibilityTimeout"] == HOST_QUEUES["visibilityTimeout"]  # the rest stays
    assert host_message_encoding() == "none"
    assert runner(types.SimpleNamespace(), lambda msg: None, **settings["extensions"]["queues"]).max_dequeue == 2
    (tmp_path / "host.json").write_text("{}")
    assert (
        max_dequeue_count(host_settings(tmp_path / "host.json", environ={})),
        route_prefix(host_settings(tmp_path / "host.json", environ={})),
    ) == (5, "api")  # the host's defaults


def test_an_overridden_max_dequeue_count_moves_a_failing_message_after_that_many_attempts(queue, monkeypatch):
    from core.settings import queue_settings

    monkeypatch.setenv("AzureFunctionsJobHost__extensions__queues__maxDequeueCount", "2")
    monkeypatch.setenv("AzureFunctionsJobHost__extensions__queues__visibilityTimeout", "00:00:01")
    queue.send('{"n": 1}')
    attempts = []

    def fail(msg) -> None:
        attempts.append(msg.dequeue_count)
        raise RuntimeError("the function fails")

    trigger = QueueTriggerRunner(
        QueueFunction("f", queue.queue_name, fail), queue, queue_settings(host_settings()), threading.Event()
    )
    deadline = time.monotonic() + 30
    while not queue.poison_messages():
        assert time.monotonic() < deadline, "the message never reached the poison queue"
        if not trigger.run_once():
            time.sleep(0.1)
    assert attempts == [1, 2]


def test_a_stale_receipt_deletes_nothing_and_raises_nothing(queue):
    queue.send("{}", 0)
    first = queue.receive(1)
    time.sleep(1.5)
    second = queue.receive(30)
    assert second.message_id == first.message_id and second.dequeue_count == 2
    queue.delete(first)
    assert queue._client.get_queue_properties().approximate_message_count == 1
    queue.delete(second)
    assert queue._client.get_queue_properties().approximate_message_count == 0


# --- poison and hq ---------------------------------------------------------------------------------


def test_a_poisoned_message_on_azurite_is_listed_and_replayed_by_hq(azurite, reconcile_queue, tmp_path):
    request = ReconcileRequest("p-poison", "S1", dt_date(DAY), "close-1")
    reconcile_queue.send(reconcile_messages.encode(request), 0)
    assert poison_by_failing(reconcile_queue, visibility="00:00:01") == MAX_DEQUEUE
    assert reconcile_queue.receive(1) is None  # gone from the main queue after maxDequeueCount attempts

    env = azure_env(azurite, tmp_path)
    listing = subprocess.run(
        [sys.executable, "-m", "hq", "queue", "poison", "list"],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert listing.returncode == 0, listing.stderr
    header, row = listing.stdout.strip().splitlines()
    assert header.split() == ["MESSAGE_ID", "INSERTED_AT", "PARTNER_ID", "STORE_ID", "BUSINESS_DATE", "CLOSE_BATCH_ID"]
    message_id = row.split()[0]
    assert row.split()[2:] == ["p-poison", "S1", DAY, "close-1"]

    replayed = hq(env, "queue", "poison", "replay", message_id)
    assert replayed.returncode == 0, replayed.stderr
    assert f"Replayed message {message_id} onto {RECONCILE_QUEUE}" in replayed.stdout
    assert "No poisoned messages" in hq(env, "queue", "poison", "list").stdout

    given = []
    assert runner(reconcile_queue, given.append).run_once()
    assert reconcile_messages.decode(given[0].get_body()) == request
    assert reconcile_queue.receive(1) is None  # consumed and deleted


def test_hq_replay_refuses_an_unknown_id_and_replays_all(azurite, reconcile_queue, tmp_path):
    for n in range(3):
        reconcile_queue._poison.send_message(f'{{"n": {n}}}'.encode())
    env = azure_env(azurite, tmp_path)
    unknown = hq(env, "queue", "poison", "replay", "no-such-id")
    assert unknown.returncode == 1 and "no poisoned message no-such-id" in unknown.stderr
    assert len(listed_ids(hq(env, "queue", "poison", "list").stdout)) == 3  # the scan hid none of them

    assert "Replayed 3 poisoned message(s)" in hq(env, "queue", "poison", "replay", "--all").stdout
    bodies = {reconcile_queue.receive(30).body for _ in range(3)}
    assert bodies == {b'{"n": 0}', b'{"n": 1}', b'{"n": 2}'}
    assert reconcile_queue.poison_messages() == []


def test_replaying_one_leaves_the_other_poisoned_messages_visible(reconcile_queue):
    ids = [reconcile_queue._poison.send_message(f'{{"n": {n}}}'.encode()).id for n in range(40)]
    # The last one is on the second page of 32: the first page is hidden while scanned, then shown again.
    assert reconcile_queue.replay_poison(ids[-1])
    assert reconcile_queue.poison_count() == 39
    assert [m.message_id for m in reconcile_queue.poison_messages()] == ids[:32]
    assert reconcile_queue.receive(30).body == b'{"n": 39}'


def test_the_same_hq_commands_work_on_the_sqlite_queue(tmp_path):
    env = {"POS_BACKEND": "sqlite", "POS_DATA_DIR": str(tmp_path / "data")}
    queue = open_reconcile_queue(_settings(env))
    assert isinstance(queue, SqliteQueue)
    request = ReconcileRequest("p-sqlite", "S2", dt_date(DAY), "close-2")
    queue.send(reconcile_messages.encode(request), 0)
    assert poison_by_failing(queue, visibility="00:00:00.01") == MAX_DEQUEUE

    listing = hq(env, "queue", "poison", "list")
    assert listing.returncode == 0, listing.stderr
    (message_id,) = listed_ids(listing.stdout)
    assert listing.stdout.strip().splitlines()[1].split()[2:] == ["p-sqlite", "S2", DAY, "close-2"]
    assert hq(env, "queue", "poison", "replay", message_id).returncode == 0
    assert "No poisoned messages on reconcile-requests-poison." in hq(env, "queue", "poison", "list").stdout

    given = []
    assert runner(queue, given.append).run_once()
    assert reconcile_messages.decode(given[0].get_body()) == request
    assert hq(env, "queue", "poison", "replay", message_id).returncode == 1


def _settings(env: dict) -> Settings:
    saved = dict(os.environ)
    try:
        os.environ.update(env)
        return Settings.from_env()
    finally:
        os.environ.clear()
        os.environ.update(saved)


# --- connection and outage -------------------------------------------------------------------------


def test_an_unreachable_queue_is_backend_unavailable():
    closed = (
        f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;"
        f"QueueEndpoint=http://127.0.0.1:{free_port()}/devstoreaccount1;"
    )
    down = AzureQueue(
        "reconcile-requests",
        connection_string=closed,
        retry_policy=LinearRetry(backoff=0, retry_total=1, random_jitter_range=0),
    )
    with pytest.raises(BackendUnavailable):
        down.ping()
    with pytest.raises(BackendUnavailable):
        down.send("{}", 0)


def test_a_refused_key_is_backend_unavailable(azurite):
    wrong_key = azurite.connection_string.replace("AccountKey=Eby8", "AccountKey=AAAA")
    with pytest.raises(BackendUnavailable, match="ClientAuthenticationError"):
        AzureQueue(unique_queue(), connection_string=wrong_key).ping()


def test_without_a_connection_string_a_managed_identity_signs_in(tmp_path):
    from azure.identity import DefaultAzureCredential

    settings = _settings({"POS_BACKEND": "azure", "AzureWebJobsStorage": "", "POS_DATA_DIR": str(tmp_path)})
    by_uri = AzureQueue.from_settings(
        settings, RECONCILE_QUEUE, {"AzureWebJobsStorage__queueServiceUri": "https://acct.queue.core.windows.net"}
    )
    assert by_uri._client.url.startswith("https://acct.queue.core.windows.net/reconcile-requests")
    assert isinstance(by_uri._client.credential, DefaultAzureCredential)
    by_name = AzureQueue.from_settings(settings, RECONCILE_QUEUE, {"AzureWebJobsStorage__accountName": "other"})
    assert by_name._client.url.startswith("https://other.queue.core.windows.net/")
    with pytest.raises(ValueError, match="AzureWebJobsStorage__queueServiceUri"):
        AzureQueue.from_settings(settings, RECONCILE_QUEUE, {})


def test_the_settings_choose_the_queue(azurite, tmp_path):
    azure = open_reconcile_queue(_settings(azure_env(azurite, tmp_path)))
    assert isinstance(azure, AzureQueue) and azure.queue_name == RECONCILE_QUEUE
    azure.ping()
    with pytest.raises(ValueError, match="POS_BACKEND"):
        open_reconcile_queue(_settings({"POS_BACKEND": "mystery"}))
