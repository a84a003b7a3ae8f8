"""What only the Cosmos DB adapter has to prove (the port's behaviour is in test_storage_contract.py):
containers from the one definition file, marker TTL, TLS only relaxed for loopback, an outage as
BackendUnavailable, throttling (429) as BackendUnavailable with Cosmos DB's retry-after and its injection for
tests, and convergence after a crash or a slow concurrent writer between its steps."""

from __future__ import annotations

import threading
import uuid

import orjson
import pytest
from azure.core.pipeline.transport import HttpRequest
from azure.cosmos.exceptions import CosmosHttpResponseError

from backends.cosmos import connection as cosmos_connection
from backends.cosmos import keys, markers, outages, record_items, trade_records
from backends.cosmos.conditional import ETAG_RETRY_LIMIT, ContentionNotSettled, update_item
from backends.cosmos.connection import load_container_definitions
from backends.cosmos.storage import CosmosStorage
from backends.cosmos.transport import CurlResponse, CurlTransport, parse_head
from core.ports import BackendUnavailable
from core.records import BatchMarker
from core.settings import Settings
from core.versions import Version
from devhost import cosmos_throttling
from devhost.cosmos_emulator import EMULATOR_KEY, start_cosmos_emulator
from devhost.cosmos_throttling import ThrottlePlan
from tests.contract.test_storage_contract import (
    DAY,
    NEXT_DAY,
    T0,
    day_rows,
    marker,
    new_id,
    record,
    save_records,
)

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")


@pytest.fixture(scope="module")
def database_name() -> str:
    return f"adapter-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def storage(cosmos_emulator, database_name):
    opened = CosmosStorage(
        cosmos_emulator.endpoint, database_name, key=cosmos_emulator.key, create_containers=True, marker_ttl_days=30
    )
    yield opened
    opened.close()


@pytest.fixture
def partner(storage) -> str:
    partner_id = new_id()
    storage.add_partner(partner_id, "Partner", T0)
    return partner_id


class Crash(Exception):
    pass


def crash_once(monkeypatch, storage, name: str, skip: int = 0) -> None:
    """The adapter step `name` fails once, at its call after `skip` others, as if the process died there."""
    step = getattr(storage, name)
    calls = []

    def failing(*args, **kwargs):
        calls.append(True)
        if len(calls) == skip + 1:
            raise Crash(name)
        return step(*args, **kwargs)

    monkeypatch.setattr(storage, name, failing)


# -- containers and settings ----------------------------------------------------------------------


def test_containers_are_created_as_the_definition_file_says(storage, database_name):
    database = storage.client.get_database_client(database_name)
    for definition in load_container_definitions():
        created = database.get_container_client(definition["id"]).read()
        assert created["partitionKey"]["paths"] == definition["partitionKey"]["paths"]
        policy = created["indexingPolicy"]
        assert policy["includedPaths"] == definition["indexingPolicy"]["includedPaths"]
        assert policy["excludedPaths"] == definition["indexingPolicy"]["excludedPaths"]
        assert created.get("defaultTtl") == definition.get("defaultTtl")


def test_the_definition_file_indexes_only_queried_paths():
    for definition in load_container_definitions():
        policy = definition["indexingPolicy"]
        assert {"path": "/*"} in policy["excludedPaths"], definition["id"]
        assert all(path["path"].endswith("/?") for path in policy["includedPaths"]), definition["id"]


def test_missing_containers_are_reported_at_start(cosmos_emulator):
    with pytest.raises(BackendUnavailable, match="does not exist"):
        CosmosStorage(cosmos_emulator.endpoint, f"missing-{uuid.uuid4().hex[:8]}", key=cosmos_emulator.key)


def test_markers_carry_the_configured_time_to_live(storage, cosmos_emulator, database_name, partner):
    batch = marker(partner, "mappings")
    storage.replace_mapping(batch, [])
    item = storage._containers.batches.read_item(
        keys.compound_key(batch.batch_id), partition_key=keys.compound_key(partner, batch.batch_id)
    )
    assert item["ttl"] == 30 * 86_400

    forever = CosmosStorage(cosmos_emulator.endpoint, database_name, key=cosmos_emulator.key, marker_ttl_days=0)
    kept = marker(partner, "mappings")
    forever.replace_mapping(kept, [])
    assert "ttl" not in forever._containers.batches.read_item(
        keys.compound_key(kept.batch_id), partition_key=keys.compound_key(partner, kept.batch_id)
    )
    forever.close()


def test_settings_open_the_adapter(cosmos_emulator, database_name, monkeypatch):
    monkeypatch.setenv("POS_BACKEND", "azure")
    monkeypatch.setenv("COSMOS_ENDPOINT", cosmos_emulator.endpoint)
    monkeypatch.setenv("COSMOS_KEY", cosmos_emulator.key)
    monkeypatch.setenv("COSMOS_DATABASE", database_name)
    monkeypatch.setenv("BATCH_MARKER_TTL_DAYS", "7")
    opened = CosmosStorage.from_settings(Settings.from_env())
    assert opened._markers.ttl_seconds == 7 * 86_400
    opened.ping()
    opened.close()
    monkeypatch.setenv("BATCH_MARKER_TTL_DAYS", "a week")
    with pytest.raises(ValueError, match="BATCH_MARKER_TTL_DAYS"):
        CosmosStorage.from_settings(Settings.from_env())
    monkeypatch.delenv("BATCH_MARKER_TTL_DAYS")
    assert Settings.from_env().batch_marker_ttl_days == markers.DEFAULT_MARKER_TTL_DAYS


@pytest.mark.parametrize(
    "endpoint, verify",
    [
        ("https://pos-prod.documents.azure.com:443/", True),
        ("https://10.0.0.4:8081/", True),
        ("https://127.0.0.1:8081/", False),
        ("https://127.5.0.1:8081/", False),
        ("https://localhost:8081/", False),
        ("https://[::1]:8081/", False),
    ],
)
def test_tls_is_verified_except_on_loopback(endpoint, verify):
    assert cosmos_connection.tls_verification(endpoint, None) is verify
    assert cosmos_connection.tls_verification(endpoint, True) is True


def test_tls_verification_cannot_be_turned_off_for_a_remote_endpoint():
    with pytest.raises(ValueError, match="loopback"):
        CosmosStorage("https://pos-prod.documents.azure.com:443/", key=EMULATOR_KEY, verify_tls=False)


# -- outages --------------------------------------------------------------------------------------


def test_an_unreachable_account_at_start_is_backend_unavailable():
    from devhost.cosmos_emulator import _free_port

    with pytest.raises(BackendUnavailable):
        CosmosStorage(f"https://127.0.0.1:{_free_port()}/", key=EMULATOR_KEY)


def test_an_outage_after_start_is_backend_unavailable(tmp_path):
    emulator = start_cosmos_emulator(tmp_path / "emulator.log")
    try:
        opened = CosmosStorage(emulator.endpoint, "outage", key=emulator.key, create_containers=True)
        opened.ping()
    finally:
        emulator.stop()
    for call in (opened.ping, lambda: save_records(opened, "p", record("T1"))):
        with pytest.raises(BackendUnavailable):
            call()


# -- crashes between steps, and slow writers ------------------------------------------------------


def test_a_crash_before_the_marker_is_completed_by_the_retry(storage, partner, monkeypatch):
    batch = marker(partner, "trade-records", 2, store_id="S1", business_date=DAY, seq=1)
    rows = [record("T1"), record("T2")]
    crash_once(monkeypatch, storage._markers, "commit")
    with pytest.raises(Crash):
        storage.save_trade_records(batch, rows)
    assert storage.find_batch(partner, batch.batch_id) is None
    assert storage.save_trade_records(batch, rows).existing is None
    assert storage.find_batch(partner, batch.batch_id) == batch
    assert day_rows(storage, partner) == {"T1": rows[0], "T2": rows[1]}
    assert storage.batch_seqs(partner, "S1", DAY) == [1]


@pytest.mark.parametrize(
    "step, skip", [("_write_with_rule", 0), ("_write_with_rule", 1)], ids=["before-the-tombstone", "before-the-record"]
)
def test_a_crash_while_a_record_moves_is_completed_by_the_retry(storage, partner, monkeypatch, step, skip):
    save_records(storage, partner, record("T1", 1))
    moved = record("T1", 2, store_id="S2", business_date=NEXT_DAY)
    batch = marker(partner, "trade-records", store_id="S2", business_date=NEXT_DAY, seq=1)
    crash_once(monkeypatch, storage._trade_records.writes, step, skip)  # the version entry already says v2 in S2
    with pytest.raises(Crash):
        storage.save_trade_records(batch, [moved])
    saved = storage.save_trade_records(batch, [moved])
    assert saved.existing is None and saved.changes.newer == 1
    assert [(move.left.store_id, move.to.store_id) for move in saved.changes.moves] == [("S1", "S2")]
    assert day_rows(storage, partner) == {}
    assert day_rows(storage, partner, "S2", NEXT_DAY) == {"T1": moved}
    entry = storage._trade_records.index.entries(partner, ["T1"])["T1"]
    # the day it left stays listed: the record of v2 in S2, written after its tombstone, says it is buried
    assert entry["dirty"] == [["S1", DAY.isoformat()]] and entry["version"] == 2 and entry["buried_first"]


def test_a_crash_before_the_old_day_is_cleaned_is_completed_by_the_next_version(storage, partner, monkeypatch):
    save_records(storage, partner, record("T1", 1))
    crash_once(monkeypatch, storage._trade_records.writes, "_write_with_rule", 0)  # v2's entry in S2, v1 in S1
    with pytest.raises(Crash):
        save_records(storage, partner, record("T1", 2, store_id="S2"))
    third = record("T1", 3, store_id="S2")  # not a move any more, yet S1 is cleaned
    save_records(storage, partner, third)
    assert day_rows(storage, partner) == {}
    assert day_rows(storage, partner, "S2") == {"T1": third}


def hold(monkeypatch, storage, version: int) -> tuple[threading.Event, threading.Event]:
    """Make the writer of `version` stop just before it writes its record, until released: a first version
    in the batch path (its entry created, its record not), any other in the item-by-item path."""
    reached, release = threading.Event(), threading.Event()
    writes = storage._trade_records.writes
    put, create = writes.put_record, writes.create_records

    def wait_if_mine(rows):
        if any(row.version == version for row in rows):
            reached.set()
            assert release.wait(30)

    def slow_put(partner_id, row, mine, expected):
        wait_if_mine([row])
        return put(partner_id, row, mine, expected)

    def slow_create(partner_id, rows, rider=None):
        wait_if_mine(rows)
        return create(partner_id, rows, rider)

    monkeypatch.setattr(writes, "put_record", slow_put)
    monkeypatch.setattr(writes, "create_records", slow_create)
    return reached, release


@pytest.mark.parametrize("store_id", ["S1", "S2"], ids=["same-day", "moved"])
def test_a_slow_writer_of_an_older_version_cannot_bring_it_back(storage, partner, monkeypatch, store_id):
    reached, release = hold(monkeypatch, storage, 1)
    slow = threading.Thread(target=save_records, args=(storage, partner, record("T1", 1)))
    slow.start()
    assert reached.wait(30)  # v1 is the latest version now, but not written yet
    newer = record("T1", 2, store_id=store_id)
    save_records(storage, partner, newer)
    release.set()
    slow.join(30)
    assert storage.store_day_rows(partner, store_id, DAY) == [newer]
    if store_id != "S1":
        assert day_rows(storage, partner, "S1") == {}


@pytest.mark.parametrize(
    "identifier, part",
    [
        ("S-001_a.b", "S-001_a.b"),
        ("a|b", "a~7Cb"),
        ("a%2Fb", "a~252Fb"),
        ("~7C", "~7E7C"),
        ("x y ", "x~20y~20"),
        ("店", "~E5~BA~97"),
    ],
)
def test_identifiers_become_safe_key_parts(identifier, part):
    assert keys.key_part(identifier) == part
    assert keys.compound_key("a", identifier) == "a|" + part


def test_overlong_keys_are_hashed_within_the_id_limit():
    key = keys.compound_key("product", "店" * 100, "店|" * 50)
    assert key.startswith("sha256|") and len(key.encode()) <= 1023
    assert key == keys.compound_key("product", "店" * 100, "店|" * 50)
    assert key != keys.compound_key("product", "店" * 100, "店|" * 49)


def test_records_keep_narrow_fields_on_top_and_the_document_below(storage, partner):
    row = record("T1", payments_minor={"SALE": 700, "DEPOSIT": 300}, total=1000)
    save_records(storage, partner, row)
    item = storage._containers.trade_records.read_item(
        keys.record_id("T1"), partition_key=keys.day_key(partner, "S1", DAY.isoformat())
    )
    assert {
        name: item[name]
        for name in (
            "type",
            "version",
            "item_rows",
            "payment_rows",
            "total_minor",
            "tax_minor",
            "tip_minor",
            "payments",
        )
    } == {
        "type": "record",
        "version": 1,
        "item_rows": 2,
        "payment_rows": 1,
        "total_minor": 1000,
        "tax_minor": 80,
        "tip_minor": 0,
        "payments": {"SALE": 700, "DEPOSIT": 300},
    }
    assert item["document"] == {"v": 1}


def test_a_batch_id_reused_for_another_store_day_by_a_concurrent_twin_is_not_counted(storage, partner):
    winner = marker(partner, "trade-records", store_id="S1", business_date=DAY, seq=1)
    assert storage.save_trade_records(winner, [record("T1")]).existing is None
    # the loser got past find_batch before the winner's marker existed: simulate by calling the steps
    loser = BatchMarker(partner, winner.batch_id, "trade-records", 1, "other", T0, "S2", DAY, 4)
    storage._containers.trade_records.upsert_item(trade_records.batch_entry(loser))
    assert storage._markers.commit(loser) == winner
    storage._trade_records._settle_batch_entry(trade_records.batch_entry(loser), winner)
    assert storage.batch_seqs(partner, "S2", DAY) == []
    assert storage.batch_seqs(partner, "S1", DAY) == [1]


def test_a_conditional_update_gives_up_when_contention_does_not_settle(storage):
    container = storage._containers.partners
    attempts = []

    def meddled(current):  # another writer changes the item between every read and write of ours
        attempts.append(current)
        container.upsert_item({"id": "contended", "pk": "contended", "writer": uuid.uuid4().hex})
        return {"id": "contended", "pk": "contended", "writer": "us"}

    with pytest.raises(ContentionNotSettled, match="'contended' of partners"):
        update_item(container, "contended", "contended", meddled)
    assert len(attempts) == ETAG_RETRY_LIMIT
    assert container.read_item("contended", partition_key="contended")["writer"] != "us"


def test_an_answers_headers_take_the_counts_the_sdk_writes_from_another_thread():
    """The SDK writes its throttle counts (ints) into the last answer's headers, which may be another
    thread's answer still being read: urllib3's header dict failed on them (TypeError: a 500)."""
    status, reason, headers = parse_head(b"HTTP/1.1 200 OK\r\nx-ms-continuation: c1\r\nETag: e\r\n\r\n")
    response = CurlResponse(HttpRequest("POST", "https://127.0.0.1/docs"), status, reason, headers, b"[]")
    response.headers["x-ms-throttle-retry-count"] = 0  # as azure/cosmos/_retry_utility.py does
    copied: dict = {}
    copied.update(response.headers)  # as the SDK's query copies them (_cosmos_client_connection.__QueryFeed)
    assert copied["x-ms-throttle-retry-count"] == 0 and response.headers["etag"] == "e"
    assert response.headers.get("X-MS-Continuation") == "c1"


# -- throttling (429) -----------------------------------------------------------------------------


class ThrottlingTransport(CurlTransport):
    """The adapter's own transport, answering document writes 429 with a retry-after of 1 ms, as an
    account whose partition is out of request units does: the request never reaches the database."""

    def __init__(self) -> None:
        super().__init__(verify=False)
        self.throttled = 0

    def send(self, request, **kwargs):
        if request.method == "POST" and request.url.rstrip("/").endswith("/docs"):
            self.throttled += 1
            status, reason, headers = parse_head(
                b"HTTP/1.1 429 Too Many Requests\r\nx-ms-retry-after-ms: 1\r\nx-ms-substatus: 3200\r\n"
                b"Content-Type: application/json\r\n\r\n"
            )
            body = b'{"code": "TooManyRequests", "message": "Request rate is large"}'
            return CurlResponse(request, status, reason, headers, body)
        return super().send(request, **kwargs)


def test_the_sdk_retries_a_429_nine_times_then_the_adapter_answers_unavailable_with_its_retry_after(
    storage, cosmos_emulator, database_name, monkeypatch
):
    transport = ThrottlingTransport()
    monkeypatch.setattr(cosmos_connection, "_transport", lambda endpoint, verify: transport)
    throttled = CosmosStorage(cosmos_emulator.endpoint, database_name, key=cosmos_emulator.key)
    partner_id = new_id()
    with pytest.raises(BackendUnavailable) as raised:
        throttled.add_partner(partner_id, "Partner", T0)
    assert transport.throttled == 10  # the SDK's default: the request and 9 retries, each after the retry-after
    cause = raised.value.__cause__
    assert isinstance(cause, CosmosHttpResponseError) and cause.status_code == 429
    assert raised.value.retry_after_seconds == 1  # 1 ms, rounded up to HTTP's whole seconds
    throttled.close()
    assert storage.get_partner(partner_id) is None  # a 429 never writes anything


@pytest.mark.parametrize(
    "headers, seconds",
    [
        ({"x-ms-retry-after-ms": "1"}, 1),
        ({"x-ms-retry-after-ms": "1000"}, 1),
        ({"x-ms-retry-after-ms": "1001"}, 2),
        ({"x-ms-retry-after-ms": "2500.5"}, 3),
        ({"x-ms-retry-after-ms": "0"}, 1),
        ({}, None),
        ({"x-ms-retry-after-ms": "soon"}, None),
    ],
)
def test_a_429s_retry_after_becomes_whole_seconds_at_least_one(headers, seconds):
    error = CosmosHttpResponseError(status_code=429, message="throttled")
    error.headers = headers
    assert outages.retry_after_seconds(error) == seconds
    other = CosmosHttpResponseError(status_code=503, message="unavailable")
    other.headers = headers
    assert outages.retry_after_seconds(other) is None


def test_a_throttle_plan_is_read_from_its_setting():
    plan = ThrottlePlan.parse(" calls=2,5-7 ; container=trade-records; retry_after_ms=1500;seed=3 ")
    assert plan is not None
    assert (plan.calls_throttled, plan.container, plan.retry_after_ms, plan.fraction) == (
        frozenset({2, 5, 6, 7}),
        "trade-records",
        1500,
        0.0,
    )
    assert ThrottlePlan.parse("") is None and ThrottlePlan.parse(" ; ") is None
    for wrong in (
        "calls=0",
        "calls=3-1",
        "fraction=2",
        "fraction=x",
        "every=3",
        "retry_after_ms=-1",
        "container=",
        "operation=drop",
    ):
        with pytest.raises(ValueError, match="COSMOS_INJECT_THROTTLING"):
            ThrottlePlan.parse(wrong)
    throttled = [plan.throttles("trade-records", "read_item") for _ in range(8)]
    assert throttled == [False, True, False, False, True, True, True, False]
    assert not plan.throttles("partners", "read_item") and (plan.counted, plan.injected) == (8, 4)
    with plan.paused():
        assert not plan.throttles("trade-records", "read_item")
    assert plan.counted == 8
    markers = ThrottlePlan.parse("container=batches;operation=create_item;calls=1")
    assert markers is not None and not markers.throttles("batches", "read_item")
    assert markers.throttles("batches", "create_item") and markers.counted == 1


def test_throttling_is_refused_for_an_account_that_is_not_on_this_machine():
    hook = cosmos_throttling.containers_hook(ThrottlePlan(fraction=1))
    with pytest.raises(ValueError, match="COSMOS_INJECT_THROTTLING is for tests on a local emulator"):
        hook("https://pos-prod.documents.azure.com:443/", cosmos_connection.Containers(None, None, None, None))


def test_the_local_host_installs_the_setting_and_it_throttles_the_calls_it_names_reads_and_queries_included(
    storage, cosmos_emulator, database_name, monkeypatch, caplog
):
    monkeypatch.setenv("POS_BACKEND", "azure")
    monkeypatch.setenv("COSMOS_ENDPOINT", cosmos_emulator.endpoint)
    monkeypatch.setenv("COSMOS_KEY", cosmos_emulator.key)
    monkeypatch.setenv("COSMOS_DATABASE", database_name)
    monkeypatch.delenv("COSMOS_INJECT_THROTTLING", raising=False)
    assert cosmos_throttling.install_from_environment() is None  # off unless set
    monkeypatch.setenv("COSMOS_INJECT_THROTTLING", "container=trade-records;calls=1,4;retry_after_ms=2500")
    try:
        assert cosmos_throttling.install_from_environment() is not None
        with caplog.at_level("WARNING", logger="pos.cosmos"):
            throttled = CosmosStorage.from_settings(Settings.from_env())
    finally:
        cosmos_throttling.install(None)
    assert "COSMOS DB THROTTLING INJECTION IS ON" in caplog.text
    throttled.ping()  # the partners container: not throttled
    with pytest.raises(BackendUnavailable) as raised:
        throttled.store_day_totals("p", "S1", DAY)  # a point read of the day's sums item
    assert raised.value.retry_after_seconds == 3
    assert throttled.store_day_totals("p", "S1", DAY).by_source_type == {}  # none: the read, then a query
    with pytest.raises(BackendUnavailable):
        throttled.trade_record_versions("p", ["T1"])
    throttled.close()


# -- new records in transactional batches (trade_records._save_rows, record_index.py) ----------------
# The emulator rolls back a batch an operation refuses, as Cosmos DB does (devhost/cosmosdb_server_fixes.js);
# the records' path would not need it (a refused batch's rows are decided again one by one on what is stored),
# the day's sums item does (test_cosmos_day_sums.py).


def batch_of(partner: str, rows: list, batch_id: str | None = None):
    first = rows[0]
    return marker(
        partner,
        "trade-records",
        len(rows),
        batch_id=batch_id,
        store_id=first.store_id,
        business_date=first.business_date,
        seq=1,
    )


def test_new_records_are_written_in_transactional_batches(storage, partner, monkeypatch):
    rows = [record(f"T{n}", payment_ids=(f"P{n}",)) for n in range(250)]
    calls = []
    batch = storage._containers.trade_records.execute_item_batch

    def counted(operations, **kwargs):
        calls.append(len(operations))
        return batch(operations, **kwargs)

    monkeypatch.setattr(storage._containers.trade_records, "execute_item_batch", counted)
    saved = storage.save_trade_records(batch_of(partner, rows), rows)
    assert saved.existing is None and saved.changes.newer == 250
    # An entry and a record each, at most 100 a batch; each batch of entries counts them in its partition's
    # head (decision 0092); each batch of records with the day's sums item (decision 0108), the last with the
    # batch entry (decision 0121).
    assert max(calls) <= 100 and sum(calls) == 500 + keys.INDEX_BUCKETS + 3 + 1
    assert len(calls) <= keys.INDEX_BUCKETS + 3  # entries: a batch per bucket; records: 250 in 3
    assert day_rows(storage, partner) == {row.trade_record_id: row for row in rows}
    assert storage.trade_record_versions(partner, ["T0", "T249", "T250"]).keys() == {"T0", "T249"}
    assert storage.trade_records_by_payment_id(partner, ["P7", "P8", "P999"]) == {"P7": {"T7"}, "P8": {"T8"}}


def test_a_batch_mixing_stored_and_new_first_versions_counts_only_the_new(storage, partner):
    stored = [record(f"T{n}") for n in range(0, 150, 10)]  # one in most buckets
    storage.save_trade_records(batch_of(partner, stored), stored)
    rows = [record(f"T{n}", total=2000 if n % 10 else 1000) for n in range(150)]
    saved = storage.save_trade_records(batch_of(partner, rows), rows)
    assert saved.changes.newer == 135 and saved.changes.moves == ()
    assert day_rows(storage, partner) == {row.trade_record_id: row for row in rows}


def test_a_record_stored_where_a_batch_creates_keeps_the_version_rule(storage, partner):
    # T5 version 2 lives in S2; a batch of first versions in S1 includes T5: its entry is found (refused),
    # and the rest of the batch is written.
    storage.save_trade_records(batch_of(partner, [record("T5", 2, store_id="S2")]), [record("T5", 2, store_id="S2")])
    rows = [record(f"T{n}") for n in range(10)]
    saved = storage.save_trade_records(batch_of(partner, rows), rows)
    assert saved.changes.newer == 9
    assert set(day_rows(storage, partner)) == {f"T{n}" for n in range(10) if n != 5}
    assert set(day_rows(storage, partner, "S2")) == {"T5"}


def test_a_record_item_found_by_a_records_batch_is_decided_one_by_one(storage, partner):
    # A tombstone of version 3 (the record moved away, and a writer of its entry is behind): the records
    # batch that creates T3 is refused, and T3 version 1 must not come back; the others are written.
    storage._trade_records.writes.bury(partner, "T3", "S1", DAY.isoformat(), Version(3, 0))
    rows = [record(f"T{n}") for n in range(6)]
    saved = storage.save_trade_records(batch_of(partner, rows), rows)
    assert saved.changes.newer == 6  # every entry was this batch's to create
    assert set(day_rows(storage, partner)) == {"T0", "T1", "T2", "T4", "T5"}


def test_a_crash_between_the_entries_and_the_records_is_completed_by_the_retry(storage, partner, monkeypatch):
    rows = [record(f"T{n}", payment_ids=(f"P{n}",)) for n in range(120)]
    batch = batch_of(partner, rows)
    crash_once(monkeypatch, storage._trade_records.writes, "create_records")
    with pytest.raises(Crash):
        storage.save_trade_records(batch, rows)
    assert day_rows(storage, partner) == {}  # entries written, records not, no marker
    saved = storage.save_trade_records(batch, rows)
    assert saved.existing is None and saved.changes.newer == 120
    assert day_rows(storage, partner) == {row.trade_record_id: row for row in rows}
    assert storage.find_batch(partner, batch.batch_id) is not None


def test_the_payment_id_look_up_reads_only_the_partners_own_index(storage, partner):
    other = new_id()
    storage.add_partner(other, "Other", T0)
    storage.save_trade_records(
        batch_of(other, [record("T1", payment_ids=("1001",))]), [record("T1", payment_ids=("1001",))]
    )
    assert storage.trade_records_by_payment_id(partner, ["1001"]) == {}
    mine = record("T9", payment_ids=("1001", "1002"))
    storage.save_trade_records(batch_of(partner, [mine]), [mine])
    assert storage.trade_records_by_payment_id(partner, ["1001", "1002"]) == {"1001": {"T9"}, "1002": {"T9"}}
    # a next version that drops a payment_id is no longer found by it
    newer = record("T9", 2, payment_ids=("1002",))
    storage.save_trade_records(batch_of(partner, [newer]), [newer])
    assert storage.trade_records_by_payment_id(partner, ["1001", "1002"]) == {"1002": {"T9"}}


def test_the_proxy_is_read_once_for_the_endpoint(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "cosmos.internal")
    assert cosmos_connection._transport("https://account.documents.azure.com:443/", True).proxy_url == (
        "http://proxy.example:3128"
    )
    assert cosmos_connection._transport("https://cosmos.internal/", True).proxy_url == ""  # libcurl reads none


# -- the layout before the record index (index_migration.py, `hq cosmos migrate-index`) ----------------


def write_old_layout(storage, partner: str, row) -> None:
    """A record and its version entry as the adapter wrote them before the record index."""
    mine = Version.of(row.version, row.last_modified_at)
    item = record_items.record_item(partner, row, mine)
    storage._containers.trade_records.create_item({**item, "document": {"payments": [{"payment_id": "PAY-1"}]}})
    storage._containers.trade_records.create_item(
        {
            "id": "version",
            "pk": keys.version_key(partner, row.trade_record_id),
            "partner_id": partner,
            "trade_record_id": row.trade_record_id,
            "version": row.version,
            "last_modified_us": mine.modified_us,
            "store_id": row.store_id,
            "business_date": row.business_date.isoformat(),
            "batch_id": "old",
            "previous": None,
            "dirty": [],
        }
    )


def test_the_migration_copies_the_earlier_layout_into_the_record_index(storage, partner):
    write_old_layout(storage, partner, record("OLD-1", 2))
    reported = []
    done = storage.migrate_record_index(reported.append)
    assert done.created >= 1 and reported[-1] is done  # other tests' old entries may be there too
    assert storage.trade_record_versions(partner, ["OLD-1"])["OLD-1"].version.number == 2
    assert storage.trade_records_by_payment_id(partner, ["PAY-1"]) == {"PAY-1": {"OLD-1"}}
    again = storage.migrate_record_index(lambda _done: None)
    assert again.created == 0 and again.updated == 0 and again.kept == again.seen
    # the version rule holds across the two layouts: an older version stays out, a newer one moves the record
    assert save_records(storage, partner, record("OLD-1", 1)) is None
    assert day_rows(storage, partner)["OLD-1"].version == 2
    moved = record("OLD-1", 3, store_id="S2")
    save_records(storage, partner, moved)
    assert day_rows(storage, partner) == {} and day_rows(storage, partner, "S2") == {"OLD-1": moved}


def test_large_records_are_split_into_batches_a_request_can_carry(storage, partner, monkeypatch):
    # 0.9 MB each as UTF-8, though 0.3 million characters: measured in characters, three would have gone in one
    # request of 2.7 MB
    text = "店" * 300_000
    rows = [record(f"BIG-{n}", document_json=orjson.dumps({"note": text, "n": n}).decode()) for n in range(3)]
    sizes = []
    batch = storage._containers.trade_records.execute_item_batch

    def measured(operations, **kwargs):
        sizes.append(sum(len(orjson.dumps(operation[1][-1])) for operation in operations))
        return batch(operations, **kwargs)

    monkeypatch.setattr(storage._containers.trade_records, "execute_item_batch", measured)
    saved = storage.save_trade_records(batch_of(partner, rows), rows)
    assert saved.changes.newer == 3 and set(day_rows(storage, partner)) == {"BIG-0", "BIG-1", "BIG-2"}
    assert max(sizes) < 2_000_000


def test_a_transactional_batch_asked_without_items_answers_their_etags_only(storage):
    # Emulator fix 7 (devhost/cosmosdb_server_fixes.js): Cosmos DB leaves the items out of a batch's answer
    # when the SDK asks so (no_response); every adapter's batch reads only each answer's eTag.
    container, pk = storage._containers.batches, f"fix7|{uuid.uuid4()}"
    items = [{"id": f"i{n}", "pk": pk, "name": "名前"} for n in range(3)]
    creates = [("create", (item,)) for item in items[:2]]
    minimal = container.execute_item_batch(creates, partition_key=pk, no_response=True)
    assert [sorted(answer) for answer in minimal] == [["eTag", "requestCharge", "statusCode"]] * 2
    full = container.execute_item_batch([("create", (items[2],))], partition_key=pk)
    assert full[0]["resourceBody"]["name"] == "名前" and full[0]["eTag"] == full[0]["resourceBody"]["_etag"]
    assert container.read_item("i1", partition_key=pk)["_etag"] == minimal[1]["eTag"]
