"""One contract for the Storage port (core/ports.py), run against every adapter: SQLite, Cosmos DB on the
emulator, and the in-memory storage the use-case tests run on. Each test makes its own partners (unique
ids), so the Cosmos DB adapter shares one database per module while SQLite gets a fresh file per test and
memory a fresh storage; the answers must be the same."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from dataclasses import replace

import pytest

from backends.sqlite.storage import SqliteStorage
from core.clients import ClientInfo, ClientOwner
from core.kept_warnings import KeptWarning
from core.ports import AdminError
from core.records import (
    ApiKeyInfo,
    BatchMarker,
    ClosedDay,
    KeyOwner,
    Mapping,
    ModifierGroupMaster,
    Partner,
    ProductMaster,
    RecordChanges,
    RecordMove,
    SourceTypeTotals,
    StoreDay,
    StoreDayTotals,
    StoredVersion,
    StoreMaster,
    TradeRecordRow,
    UnknownProduct,
    record_changes,
)
from core.versions import Version
from tests.emulators import open_storage_of_kind
from tests.throttled_storage import RetriedAfterThrottling

UTC = dt.UTC
T0 = dt.datetime(2026, 11, 20, 9, 30, 0, 123456, tzinfo=UTC)
DAY = dt.date(2026, 11, 20)
NEXT_DAY = dt.date(2026, 11, 21)
RACERS = 8

# The emulator's self-signed certificate (verification is off for loopback endpoints only).
pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")


@pytest.fixture(params=["sqlite", "cosmos", "memory", "cosmos-429"])
def storage(request, tmp_path):
    """Every adapter, and Cosmos DB meeting injected 429s: each call that meets one is made again as its
    caller would after Retry-After, and the contract must hold all the same (tests/throttled_storage.py)."""
    return open_storage_of_kind(request.param, request, tmp_path)


def new_id(prefix: str = "p") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def partner(storage) -> str:
    partner_id = new_id()
    storage.add_partner(partner_id, "Partner", T0)
    storage.register_stores(partner_id, ["S1", "S2"], T0)
    return partner_id


def marker(
    partner_id: str,
    kind: str,
    count: int = 1,
    *,
    digest: str = "digest",
    batch_id: str | None = None,
    store_id: str | None = None,
    business_date: dt.date | None = None,
    seq: int | None = None,
) -> BatchMarker:
    return BatchMarker(partner_id, batch_id or str(uuid.uuid4()), kind, count, digest, T0, store_id, business_date, seq)


def record(
    trade_record_id: str,
    version: int = 1,
    modified: dt.datetime = T0,
    store_id: str = "S1",
    business_date: dt.date = DAY,
    total: int = 1000,
    **fields,
) -> TradeRecordRow:
    values = {
        "source_transaction_type": "01",
        "item_rows": 2,
        "payment_rows": 1,
        "total_minor": total,
        "tax_minor": 80,
        "tip_minor": 0,
        "payments_minor": {"SALE": total},
        "document_json": f'{{"v": {version}}}',
    }
    values.update(fields)
    return TradeRecordRow(trade_record_id, version, modified, store_id, business_date, **values)


def save_records(storage, partner_id: str, *rows: TradeRecordRow, seq: int = 1) -> BatchMarker | None:
    first = rows[0]
    return storage.save_trade_records(
        marker(
            partner_id, "trade-records", len(rows), store_id=first.store_id, business_date=first.business_date, seq=seq
        ),
        list(rows),
    ).existing


def day_rows(storage, partner_id: str, store_id: str = "S1", business_date: dt.date = DAY) -> dict:
    return {row.trade_record_id: row for row in storage.store_day_rows(partner_id, store_id, business_date)}


def run_together(count: int, work) -> list:
    """Run work(i) on `count` threads released at the same moment; the results in order."""
    barrier = threading.Barrier(count)
    results: list = [None] * count
    failures: list = []

    def run(index: int) -> None:
        barrier.wait()
        try:
            results[index] = work(index)
        except Exception as error:  # reported below, in the test's thread
            failures.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures
    return results


# -- HQ administration ----------------------------------------------------------------------------


def test_partners_are_added_once_listed_and_read(storage):
    partner_id = new_id()
    assert storage.get_partner(partner_id) is None
    assert storage.add_partner(partner_id, "Name", T0) == Partner(partner_id, "Name", True, T0)
    assert storage.get_partner(partner_id) == Partner(partner_id, "Name", True, T0)
    with pytest.raises(AdminError, match=f"^partner {partner_id} already exists$"):
        storage.add_partner(partner_id, "Other", T0)
    assert storage.get_partner(partner_id).name == "Name"
    listed = [p for p in storage.list_partners() if p.partner_id == partner_id]
    assert listed == [Partner(partner_id, "Name", True, T0)]
    ids = [p.partner_id for p in storage.list_partners()]
    assert ids == sorted(ids)


def test_a_partner_is_deactivated_and_reactivated(storage, partner):
    assert storage.set_partner_active(partner, False).active is False
    assert storage.get_partner(partner).active is False
    assert storage.set_partner_active(partner, True) == Partner(partner, "Partner", True, T0)
    with pytest.raises(AdminError, match="^unknown partner nobody$"):
        storage.set_partner_active("nobody", False)


def test_a_partner_has_its_own_rate_limit_or_the_services(storage, partner):
    """Decision 0036: a limit per partner, sized to its stores; None is the service's RATE_LIMIT_PER_MINUTE."""
    assert storage.get_partner(partner).rate_limit_per_minute is None
    assert storage.set_partner_rate_limit(partner, 12_000) == Partner(partner, "Partner", True, T0, 12_000)
    assert storage.get_partner(partner).rate_limit_per_minute == 12_000
    assert [p for p in storage.list_partners() if p.partner_id == partner][0].rate_limit_per_minute == 12_000
    key_hash = uuid.uuid4().hex * 2
    storage.add_key(partner, "key_limit", key_hash, T0)
    assert storage.find_key(key_hash).partner.rate_limit_per_minute == 12_000  # what each request reads
    client_id = f"app-{uuid.uuid4().hex[:8]}"
    storage.add_client(partner, client_id, T0)
    assert storage.find_client(client_id).partner.rate_limit_per_minute == 12_000  # and each bearer token
    assert storage.set_partner_active(partner, False).rate_limit_per_minute == 12_000  # kept by other changes
    assert storage.set_partner_rate_limit(partner, None) == Partner(partner, "Partner", False, T0)
    assert storage.find_key(key_hash).partner.rate_limit_per_minute is None
    with pytest.raises(AdminError, match="^unknown partner nobody$"):
        storage.set_partner_rate_limit("nobody", 10)
    assert storage.get_partner("nobody") is None


def test_a_sqlite_database_made_before_partner_limits_gets_the_column_on_open(tmp_path):
    import sqlite3

    SqliteStorage(tmp_path).add_partner("acme", "Acme", T0)
    with sqlite3.connect(tmp_path / "pos.sqlite3") as db:  # as a database of the previous release
        db.execute("ALTER TABLE partners DROP COLUMN rate_limit_per_minute")
    storage = SqliteStorage(tmp_path)
    assert storage.get_partner("acme") == Partner("acme", "Acme", True, T0)
    assert storage.set_partner_rate_limit("acme", 90).rate_limit_per_minute == 90


def test_keys_are_found_by_hash_listed_and_revoked(storage, partner):
    other = new_id()
    storage.add_partner(other, "Other", T0)
    later = T0 + dt.timedelta(minutes=1)
    hash_a, hash_b = uuid.uuid4().hex * 2, uuid.uuid4().hex * 2
    assert storage.add_key(partner, "key_b", hash_b, later) == ApiKeyInfo("key_b", partner, later, None)
    storage.add_key(partner, "key_a", hash_a, T0)
    assert storage.list_keys(partner) == [
        ApiKeyInfo("key_a", partner, T0, None),
        ApiKeyInfo("key_b", partner, later, None),
    ]
    assert storage.list_keys(other) == []
    owner = Partner(partner, "Partner", True, T0)
    assert storage.find_key(hash_a) == KeyOwner(owner, "key_a", hash_a, False)
    assert storage.find_key(uuid.uuid4().hex * 2) is None

    revoked_at = T0 + dt.timedelta(hours=1)
    assert storage.revoke_key(partner, "key_a", revoked_at) == ApiKeyInfo("key_a", partner, T0, revoked_at)
    assert storage.find_key(hash_a) == KeyOwner(owner, "key_a", hash_a, True)
    assert storage.find_key(hash_b).revoked is False
    assert storage.list_keys(partner)[0] == ApiKeyInfo("key_a", partner, T0, revoked_at)
    with pytest.raises(AdminError, match="^key key_a is already revoked$"):
        storage.revoke_key(partner, "key_a", revoked_at)
    with pytest.raises(AdminError, match=f"^partner {other} has no key key_b$"):
        storage.revoke_key(other, "key_b", revoked_at)
    with pytest.raises(AdminError, match=f"^partner {partner} has no key key_x$"):
        storage.revoke_key(partner, "key_x", revoked_at)

    storage.set_partner_active(partner, False)
    assert storage.find_key(hash_b).partner.active is False


def test_the_last_used_hour_of_a_key_only_moves_forward(storage, partner):
    hash_a, hash_b = uuid.uuid4().hex * 2, uuid.uuid4().hex * 2
    storage.add_key(partner, "key_a", hash_a, T0)
    storage.add_key(partner, "key_b", hash_b, T0)
    assert storage.find_key(hash_a).last_used_at is None and storage.list_keys(partner)[0].last_used_at is None

    hour = dt.datetime(2026, 11, 20, 14, tzinfo=UTC)
    storage.record_key_use(hash_a, hour)
    assert storage.find_key(hash_a).last_used_at == hour
    assert [key.last_used_at for key in storage.list_keys(partner)] == [hour, None]  # per key
    storage.record_key_use(hash_a, hour - dt.timedelta(hours=3))  # a late writer never moves it back
    assert storage.find_key(hash_a).last_used_at == hour
    storage.record_key_use(hash_a, hour + dt.timedelta(hours=1))
    assert storage.find_key(hash_a).last_used_at == hour + dt.timedelta(hours=1)

    # Revoking keeps the hour, and the hour never undoes a revocation.
    storage.revoke_key(partner, "key_a", hour + dt.timedelta(hours=2))
    storage.record_key_use(hash_a, hour + dt.timedelta(hours=3))
    found = storage.find_key(hash_a)
    assert found.revoked and found.last_used_at == hour + dt.timedelta(hours=3)
    storage.record_key_use(uuid.uuid4().hex * 2, hour)  # an unknown hash: nothing to note, no error


def test_a_sqlite_database_made_before_last_used_gets_the_column_on_open(tmp_path):
    import sqlite3

    SqliteStorage(tmp_path).add_partner("acme", "Acme", T0)
    with sqlite3.connect(tmp_path / "pos.sqlite3") as db:  # as a database of the previous release
        db.execute("ALTER TABLE api_keys DROP COLUMN last_used_at")
        db.execute(
            "INSERT INTO api_keys VALUES ('key_old', 'acme', ?, '2026-01-01T00:00:00.000000Z', NULL)", ("h" * 64,)
        )
    storage = SqliteStorage(tmp_path)
    assert storage.find_key("h" * 64).last_used_at is None
    storage.record_key_use("h" * 64, T0.replace(minute=0, second=0, microsecond=0))
    assert storage.list_keys("acme")[0].last_used_at == T0.replace(minute=0, second=0, microsecond=0)


def test_key_operations_need_a_known_partner(storage):
    for call in (
        lambda: storage.add_key("nobody", "k", "h" * 64, T0),
        lambda: storage.list_keys("nobody"),
        lambda: storage.revoke_key("nobody", "k", T0),
    ):
        with pytest.raises(AdminError, match="^unknown partner nobody$"):
            call()


def test_oauth_clients_speak_for_one_partner_each(storage, partner):
    other = new_id()
    storage.add_partner(other, "Other", T0)
    later = T0 + dt.timedelta(minutes=1)
    # Shaped like real providers' client ids: an Entra ID application (client) id, a Keycloak client, an
    # Okta one, and ids with a scheme, slashes and non-Latin text (a provider may allow any string).
    entra, keycloak, okta = str(uuid.uuid4()), new_id("acme-pos/"), "0oa" + uuid.uuid4().hex[:17]
    odd = new_id("spiffe://acme.example/pos|客户端 ")
    assert storage.add_client(partner, keycloak, later) == ClientInfo(keycloak, partner, later)
    storage.add_client(partner, entra, T0)
    storage.add_client(partner, odd, later)
    storage.add_client(other, okta, T0)
    assert storage.list_clients(partner) == [
        ClientInfo(entra, partner, T0),
        *sorted([ClientInfo(keycloak, partner, later), ClientInfo(odd, partner, later)], key=lambda c: c.client_id),
    ]
    assert storage.list_clients(other) == [ClientInfo(okta, other, T0)]
    owner = Partner(partner, "Partner", True, T0)
    assert storage.find_client(entra) == ClientOwner(owner, entra)
    assert storage.find_client(odd) == ClientOwner(owner, odd)
    assert storage.find_client(entra.upper()) is None  # compared exactly, as the token carries it
    assert storage.find_client(str(uuid.uuid4())) is None

    with pytest.raises(AdminError, match=f"^client {entra} already speaks for partner {partner}$"):
        storage.add_client(other, entra, later)
    with pytest.raises(AdminError, match=f"^client {entra} already speaks for partner {partner}$"):
        storage.add_client(partner, entra, later)
    with pytest.raises(AdminError, match=f"^partner {other} has no client {entra}$"):
        storage.remove_client(other, entra)
    assert storage.find_client(entra) == ClientOwner(owner, entra)

    storage.set_partner_active(partner, False)
    assert storage.find_client(keycloak).partner.active is False
    storage.remove_client(partner, entra)
    assert storage.find_client(entra) is None
    assert [client.client_id for client in storage.list_clients(partner)] == sorted([keycloak, odd])
    with pytest.raises(AdminError, match=f"^partner {partner} has no client {entra}$"):
        storage.remove_client(partner, entra)
    storage.add_client(other, entra, later)  # removed, it may speak for another partner
    assert storage.find_client(entra).partner.partner_id == other


def test_client_operations_need_a_known_partner(storage):
    for call in (
        lambda: storage.add_client("nobody", "c", T0),
        lambda: storage.list_clients("nobody"),
        lambda: storage.remove_client("nobody", "c"),
    ):
        with pytest.raises(AdminError, match="^unknown partner nobody$"):
            call()


def test_stores_are_registered_and_unregistered_all_or_nothing(storage):
    partner_id = new_id()
    storage.add_partner(partner_id, "P", T0)
    many = [f"S{i:02d}" for i in range(6)]
    storage.register_stores(partner_id, many[::-1], T0)
    assert storage.registered_stores(partner_id) == many
    with pytest.raises(AdminError, match=f"^already registered for {partner_id}: S01, S03$"):
        storage.register_stores(partner_id, ["NEW", "S03", "S01"], T0)
    assert "NEW" not in storage.registered_stores(partner_id)
    with pytest.raises(AdminError, match=f"^not registered for {partner_id}: X, Y$"):
        storage.unregister_stores(partner_id, ["S00", "Y", "X"])
    assert storage.registered_stores(partner_id) == many
    storage.unregister_stores(partner_id, ["S00", "S05"])
    assert storage.registered_stores(partner_id) == many[1:5]
    # a few stores (point reads) and many (one query) give the same answers
    assert storage.unregistered(partner_id, {"S01", "S00"}) == {"S00"}
    assert storage.unregistered(partner_id, set(many) | {"Z"}) == {"S00", "S05", "Z"}
    assert storage.unregistered(partner_id, set()) == set()
    assert storage.unregistered(new_id(), {"S01"}) == {"S01"}
    for call in (
        lambda: storage.register_stores("nobody", ["S"], T0),
        lambda: storage.registered_stores("nobody"),
        lambda: storage.unregister_stores("nobody", ["S"]),
    ):
        with pytest.raises(AdminError, match="^unknown partner nobody$"):
            call()


def test_identifiers_with_unusual_characters_are_kept_apart(storage):
    first, second = new_id("a|b"), new_id("a")
    for partner_id in (first, second):
        storage.add_partner(partner_id, partner_id, T0)
    storage.register_stores(first, ["c"], T0)
    odd = ["b|c", "%7C", "~7C", "a%2Fb", "x y ", "店 1", "+=&"]
    storage.register_stores(second, odd, T0)
    assert storage.registered_stores(first) == ["c"]
    assert storage.registered_stores(second) == sorted(odd)
    assert storage.unregistered(first, {"b|c", "c"}) == {"b|c"}
    assert storage.unregistered(second, {"a%2Fb", "a/b"}) == {"a/b"}
    store = StoreMaster("a%2Fb", "JPY", "JP", "Asia/Tokyo", "04:00", True, T0, {"store_id": "a%2Fb"})
    storage.save_stores(marker(second, "stores"), [store])
    assert storage.get_store(second, "a%2Fb") == store
    row = record("t%25 1~", store_id="店 1")
    save_records(storage, second, row)
    assert storage.store_day_rows(second, "店 1", DAY) == [row]
    storage.save_products(marker(second, "products"), [ProductMaster("p|1", "x y ", 1, T0, {"n": 1})], [])
    assert storage.get_product(second, "p|1", "x y ") == ProductMaster("p|1", "x y ", 1, T0, {"n": 1})
    assert storage.get_product(second, "p", "1|x y ") is None


def test_a_batch_of_trade_records_reads_its_stores_master_data_together_as_stored_now(storage, partner):
    from core.trade_inputs import TradeInputs

    odd = "店 1|a%2F"  # a code that is escaped in ids: the read finds it as the point reads do
    assert storage.trade_inputs(partner, odd) == TradeInputs(odd, False, None, Mapping(None, None, []), {})
    storage.register_stores(partner, [odd], T0)
    store = StoreMaster(odd, "JPY", "JP", "Asia/Tokyo", "04:00", True, T0, {"store_id": odd})
    storage.save_stores(marker(partner, "stores"), [store])
    mapping = marker(partner, "mappings")
    entries = [{"source_code": "01", "standard_code": "SALE"}]
    storage.replace_mapping(mapping, entries)
    storage.set_payment_direction(partner, "GIFT", -1)
    assert storage.trade_inputs(partner, odd) == TradeInputs(
        odd, True, store, Mapping(mapping.batch_id, T0, entries), {"GIFT": -1}
    )
    changed = [{"source_code": "01", "standard_code": "REFUND"}]
    storage.replace_mapping(marker(partner, "mappings"), changed)  # the next batch reads the new mapping
    assert storage.trade_inputs(partner, odd).mapping.entries == changed
    assert storage.trade_inputs(partner, "S3") == TradeInputs(
        "S3", False, None, storage.get_mapping(partner), {"GIFT": -1}
    )


def test_what_the_checks_read_of_stored_records_is_read_together_as_alone(storage, partner):
    from core.trade_inputs import StoredForChecks

    first = save_records(storage, partner, record("T1", payment_ids=("P/1", "P 2")), seq=3)
    save_records(storage, partner, record("T2", payment_ids=("P 2",)), seq=3)
    assert first is None
    day = StoreDay("S1", DAY)
    stored = storage.stored_for_checks(partner, day, 3, ["P 2", "P/1", "P9"], 10)
    assert stored == StoredForChecks(
        storage.trade_records_by_payment_id(partner, ["P 2", "P/1", "P9"]),
        storage.batches_with_seq(partner, "S1", DAY, 3, 10),
    )
    assert stored.payment_id_users == {"P 2": {"T1", "T2"}, "P/1": {"T1"}} and len(stored.batch_seq_twins) == 2
    assert len(storage.stored_for_checks(partner, day, 3, [], 1).batch_seq_twins) == 1
    assert storage.stored_for_checks(partner, StoreDay("S2", NEXT_DAY), 3, ["P9"], 10) == StoredForChecks({}, [])


def test_payment_directions_are_set_per_partner(storage, partner):
    assert storage.payment_directions(partner) == {}
    storage.set_payment_direction(partner, "GIFT", 1)
    storage.set_payment_direction(partner, "PAYOUT", -1)
    storage.set_payment_direction(partner, "GIFT", 0)
    assert storage.payment_directions(partner) == {"GIFT": 0, "PAYOUT": -1}
    assert storage.payment_directions(new_id()) == {}
    with pytest.raises(AdminError, match="^unknown partner nobody$"):
        storage.set_payment_direction("nobody", "GIFT", 1)


def test_a_payment_direction_is_deleted_for_its_partner_only(storage, partner):
    other = new_id()
    storage.add_partner(other, "Other", T0)
    for partner_id in (partner, other):
        storage.set_payment_direction(partner_id, "GIFT", 1)
    storage.set_payment_direction(partner, "gift card/€ 1", -1)
    assert storage.delete_payment_direction(partner, "GIFT") is True
    assert storage.payment_directions(partner) == {"gift card/€ 1": -1}
    assert storage.payment_directions(other) == {"GIFT": 1}
    assert storage.delete_payment_direction(partner, "GIFT") is False  # already gone
    assert storage.delete_payment_direction(partner, "NEVER_SET") is False
    assert storage.delete_payment_direction(partner, "gift card/€ 1") is True
    assert storage.payment_directions(partner) == {}
    assert storage.delete_payment_direction(partner, "GIFT") is False  # none left at all
    storage.set_payment_direction(partner, "GIFT", 0)  # and it can be set again
    assert storage.payment_directions(partner) == {"GIFT": 0}
    with pytest.raises(AdminError, match="^unknown partner nobody$"):
        storage.delete_payment_direction("nobody", "GIFT")


def test_concurrent_payment_direction_changes_are_all_kept(storage, partner):
    codes = [f"T{i}" for i in range(RACERS)]
    for code in codes[: RACERS // 2]:
        storage.set_payment_direction(partner, code, 1)
    # Half the threads delete a code set above while the other half set new ones: none may be lost.
    run_together(
        RACERS,
        lambda i: (
            storage.delete_payment_direction(partner, codes[i])
            if i < RACERS // 2
            else storage.set_payment_direction(partner, codes[i], -1)
        ),
    )
    assert storage.payment_directions(partner) == {code: -1 for code in codes[RACERS // 2 :]}


# -- request admission ----------------------------------------------------------------------------


def test_requests_are_counted_per_partner_and_window(storage, partner):
    other = new_id()
    assert [storage.count_request(partner, 600) for _ in range(3)] == [1, 2, 3]
    assert storage.count_request(other, 600) == 1
    assert storage.count_request(partner, 660) == 1
    assert storage.count_request(partner, 660) == 2


def test_concurrent_requests_are_all_counted(storage, partner):
    counts = run_together(RACERS, lambda _: storage.count_request(partner, 1200))
    assert sorted(counts) == list(range(1, RACERS + 1))


def test_ping_answers(storage):
    storage.ping()


# -- batches and their markers --------------------------------------------------------------------


def test_a_batch_is_accepted_once_and_a_resend_gets_the_stored_marker(storage, partner):
    assert storage.find_batch(partner, "unknown") is None
    first = marker(partner, "stores", digest="first")
    store = StoreMaster("S1", "USD", "US", "America/New_York", "05:00", False, T0, {"store_id": "S1", "n": 1})
    assert storage.save_stores(first, [store]) is None
    assert storage.find_batch(partner, first.batch_id) == first
    assert storage.find_batch(new_id(), first.batch_id) is None

    resend = replace(first, body_digest="second", received_at=T0 + dt.timedelta(hours=1))
    changed = replace(store, last_modified_at=T0 + dt.timedelta(days=1), document={"store_id": "S1", "n": 2})
    assert storage.save_stores(resend, [changed]) == first  # the stored marker; the body is ignored
    assert storage.get_store(partner, "S1") == store
    # a batch_id first used on another endpoint answers with the marker of that endpoint
    assert storage.replace_mapping(replace(first, kind="mappings"), [{"source_code": "x"}]) == first
    assert storage.get_mapping(partner) == Mapping(None, None, [])


def test_markers_keep_every_field(storage, partner):
    full = marker(partner, "trade-records", 3, store_id="S2", business_date=NEXT_DAY, seq=7)
    assert storage.save_trade_records(full, [record("T1", store_id="S2", business_date=NEXT_DAY)]).existing is None
    assert storage.find_batch(partner, full.batch_id) == full


def test_markers_keep_the_first_answer_and_what_the_body_said(storage, partner):
    """Decision 0030: a resend answers the first answer's warnings, and tells a body written otherwise by what it
    says; both are kept with the marker on every adapter (None for a marker stored before)."""
    answer = (
        KeptWarning("AMOUNT_MISMATCH", "trade_records[0]", "total_amount is 5.99 but ...", "total_amount"),
        KeptWarning("UNKNOWN_MEMBER_IGNORED", "$", "a member of this request ... 「」 ignored"),
    )
    counted = {"AMOUNT_MISMATCH": 1, "UNKNOWN_MEMBER_IGNORED": 1}
    full = replace(
        marker(partner, "trade-records", 1, store_id="S1", business_date=DAY, seq=1),
        warnings=counted,
        answer=answer,
        meaning_digest="c0ffee",
    )
    assert storage.save_trade_records(full, [record("T1")]).existing is None
    found = storage.find_batch(partner, full.batch_id)
    assert (found.answer, found.meaning_digest, found.warnings) == (answer, "c0ffee", counted)
    quiet = replace(marker(partner, "stores"), answer=(), meaning_digest="d1")
    assert storage.save_stores(quiet, []) is None
    assert storage.find_batch(partner, quiet.batch_id).answer == ()
    before = marker(partner, "mappings")  # as a release before decision 0030 stored it
    assert storage.replace_mapping(before, [{"source_code": "x", "standard_code": "SALE"}]) is None
    assert (
        storage.find_batch(partner, before.batch_id).answer,
        storage.find_batch(partner, before.batch_id).meaning_digest,
    ) == (None, None)


def test_stores_keep_the_latest_modification(storage, partner):
    assert storage.get_store(partner, "S1") is None
    base = StoreMaster("S1", "USD", "US", "America/New_York", "05:00", True, T0, {"v": "base"})
    storage.save_stores(marker(partner, "stores"), [base])
    older = replace(base, currency="EUR", last_modified_at=T0 - dt.timedelta(seconds=1), document={"v": "older"})
    storage.save_stores(marker(partner, "stores"), [older])
    assert storage.get_store(partner, "S1") == base
    same_time = replace(base, time_zone="America/Chicago", document={"v": "same time"})
    storage.save_stores(marker(partner, "stores"), [same_time])
    assert storage.get_store(partner, "S1") == same_time  # equal: the newer request wins
    newer = replace(
        base,
        country_code="CA",
        prices_include_tax=False,
        last_modified_at=T0 + dt.timedelta(days=1),
        document={"v": "newer"},
    )
    other_store = replace(base, store_id="S2", document={"v": "S2"})
    storage.save_stores(marker(partner, "stores", 2), [newer, other_store])
    assert storage.get_store(partner, "S1") == newer
    assert storage.get_store(partner, "S2") == other_store
    assert storage.get_store(new_id(), "S1") is None


def test_products_keep_the_highest_version_per_store_scope(storage, partner):
    assert storage.get_product(partner, "P1", None) is None
    everywhere = ProductMaster("P1", None, 2, T0, {"name": "v2"})
    in_s1 = ProductMaster("P1", "S1", 1, T0, {"name": "S1 v1"})
    group = ModifierGroupMaster("G1", {"group_id": "G1"})
    assert storage.save_products(marker(partner, "products", 2), [everywhere, in_s1], [group]) is None
    assert storage.get_product(partner, "P1", None) == everywhere
    assert storage.get_product(partner, "P1", "S1") == in_s1
    assert storage.get_product(partner, "P1", "S2") is None

    lower = ProductMaster("P1", None, 1, T0 + dt.timedelta(days=1), {"name": "v1 later"})
    equal_earlier = ProductMaster("P1", None, 2, T0 - dt.timedelta(seconds=1), {"name": "v2 earlier"})
    storage.save_products(marker(partner, "products", 2), [lower, equal_earlier], [])
    assert storage.get_product(partner, "P1", None) == everywhere
    equal_later = ProductMaster("P1", None, 2, T0 + dt.timedelta(seconds=1), {"name": "v2 later"})
    storage.save_products(marker(partner, "products"), [equal_later], [replace(group, document={"changed": True})])
    assert storage.get_product(partner, "P1", None) == equal_later
    higher_earlier = ProductMaster("P1", None, 3, T0 - dt.timedelta(days=1), {"name": "v3"})
    storage.save_products(marker(partner, "products"), [higher_earlier], [])
    assert storage.get_product(partner, "P1", None) == higher_earlier
    assert storage.get_product(partner, "P1", "S1") == in_s1


def test_the_mapping_is_replaced_by_each_batch(storage, partner):
    assert storage.get_mapping(partner) == Mapping(None, None, [])
    first = marker(partner, "mappings", 1)
    entries = [{"source_code": "01", "standard_code": "SALE"}]
    assert storage.replace_mapping(first, entries) is None
    assert storage.get_mapping(partner) == Mapping(first.batch_id, T0, entries)
    second = replace(marker(partner, "mappings", 2), received_at=T0 + dt.timedelta(hours=2))
    new_entries = [{"source_code": "01", "standard_code": "REFUND"}, {"source_code": "02", "standard_code": "SALE"}]
    assert storage.replace_mapping(second, new_entries) is None
    assert storage.get_mapping(partner) == Mapping(second.batch_id, second.received_at, new_entries)
    assert storage.get_mapping(partner).standard_code_of() == {"01": "REFUND", "02": "SALE"}
    assert storage.replace_mapping(first, entries) == first
    assert storage.get_mapping(partner).batch_id == second.batch_id


# -- trade records: the latest version for the whole partner --------------------------------------


def test_trade_records_are_stored_with_their_narrow_fields(storage, partner):
    huge = 2**60 + 1  # beyond a double's exact integers
    far = dt.datetime(9000, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)  # epoch microseconds beyond 2**53
    rows = [
        record("T1"),
        record(
            "T2",
            total=-250,
            tax_minor=-20,
            tip_minor=5,
            item_rows=0,
            payment_rows=2,
            payments_minor={"REFUND": -200, "ADJUSTMENT": -50},
            source_transaction_type="R",
        ),
        record("T3", 4, far, total=huge, payments_minor={"SALE": huge}),
    ]
    assert save_records(storage, partner, *rows) is None
    assert day_rows(storage, partner) == {row.trade_record_id: row for row in rows}
    assert storage.store_day_rows(partner, "S2", DAY) == []
    assert storage.store_day_rows(partner, "S1", NEXT_DAY) == []
    assert storage.store_day_rows(new_id(), "S1", DAY) == []


def test_the_higher_version_wins_and_an_older_one_sent_later_changes_nothing(storage, partner):
    save_records(storage, partner, record("T1", 2, total=200))
    save_records(storage, partner, record("T1", 1, T0 + dt.timedelta(days=1), total=100))
    assert day_rows(storage, partner)["T1"] == record("T1", 2, total=200)
    save_records(storage, partner, record("T1", 3, T0 - dt.timedelta(days=1), total=300))
    assert day_rows(storage, partner) == {"T1": record("T1", 3, T0 - dt.timedelta(days=1), total=300)}


def test_equal_versions_need_a_strictly_later_modification(storage, partner):
    save_records(storage, partner, record("T1", 1, total=100))
    save_records(storage, partner, record("T1", 1, total=999))  # the same version resent: no change
    save_records(storage, partner, record("T1", 1, T0 - dt.timedelta(microseconds=1), total=998))
    assert day_rows(storage, partner)["T1"].total_minor == 100
    later = record("T1", 1, T0 + dt.timedelta(microseconds=1), total=101)
    save_records(storage, partner, later)
    assert day_rows(storage, partner) == {"T1": later}


def test_a_later_version_moves_the_record_to_another_store_day(storage, partner):
    save_records(storage, partner, record("T1", 1), record("T2", 1))
    moved = record("T1", 2, store_id="S2", business_date=NEXT_DAY, total=222)
    save_records(storage, partner, moved)
    assert set(day_rows(storage, partner)) == {"T2"}
    assert day_rows(storage, partner, "S2", NEXT_DAY) == {"T1": moved}
    # the old version resent to its old day does not come back
    save_records(storage, partner, record("T1", 1))
    assert set(day_rows(storage, partner)) == {"T2"}
    # the same version and time claimed for another day: the first one received stays
    save_records(storage, partner, record("T1", 2, store_id="S1", business_date=DAY, total=333))
    assert set(day_rows(storage, partner)) == {"T2"}
    back = record("T1", 3, total=333)
    save_records(storage, partner, back)
    assert day_rows(storage, partner) == {"T1": back, "T2": record("T2", 1)}
    assert day_rows(storage, partner, "S2", NEXT_DAY) == {}


def test_versions_are_per_partner(storage, partner):
    other = new_id()
    storage.add_partner(other, "Other", T0)
    save_records(storage, partner, record("T1", 5))
    save_records(storage, other, record("T1", 1))
    assert day_rows(storage, other)["T1"].version == 1
    assert day_rows(storage, partner)["T1"].version == 5


def test_batch_seqs_list_the_trade_record_batches_of_a_store_day(storage, partner):
    assert storage.batch_seqs(partner, "S1", DAY) == []
    save_records(storage, partner, record("T1"), seq=2)
    first = marker(partner, "trade-records", store_id="S1", business_date=DAY, seq=1)
    storage.save_trade_records(first, [record("T2")])
    storage.save_trade_records(replace(first, body_digest="resent"), [record("T3")])  # a resend: not counted
    save_records(storage, partner, record("T4", store_id="S2"), seq=9)
    close = ClosedDay("S1", DAY, "c1", "USD", {}, T0, T0, "RECEIVED")
    storage.save_daily_close(marker(partner, "daily-close", batch_id="c1", store_id="S1", business_date=DAY), close)
    assert storage.batch_seqs(partner, "S1", DAY) == [1, 2]
    assert storage.batch_seqs(partner, "S2", DAY) == [9]
    assert set(day_rows(storage, partner)) == {"T1", "T2"}


def test_batches_with_seq_are_the_store_days_batches_with_that_batch_seq(storage, partner):
    """Read before each batch of trade records is accepted (BATCH_SEQ_REPEATED, decision 0024)."""
    assert storage.batches_with_seq(partner, "S1", DAY, 1, 10) == []
    twins = [save_records(storage, partner, record(f"T{n}"), seq=1) for n in range(3)]
    save_records(storage, partner, record("T9"), seq=2)
    save_records(storage, partner, record("T8", store_id="S2"), seq=1)
    save_records(storage, partner, record("T7", business_date=NEXT_DAY), seq=1)
    storage.save_daily_close(
        marker(partner, "daily-close", store_id="S1", business_date=DAY),
        ClosedDay("S1", DAY, "c1", "USD", {}, T0, T0, "RECEIVED"),
    )
    assert all(twin is None for twin in twins)
    found = storage.batches_with_seq(partner, "S1", DAY, 1, 10)
    assert len(found) == 3 and len(set(found)) == 3
    assert len(storage.batches_with_seq(partner, "S1", DAY, 1, 2)) == 2  # at most the limit
    assert len(storage.batches_with_seq(partner, "S1", DAY, 2, 10)) == 1
    assert storage.batches_with_seq(partner, "S1", DAY, 3, 10) == []
    assert len(storage.batches_with_seq(partner, "S2", DAY, 1, 10)) == 1


# -- partner-wide payment ids and products not (yet) in the master (decisions 0025, 0026) ----------------


def test_payment_ids_are_found_across_the_partners_stores_and_dates(storage, partner):
    save_records(
        storage,
        partner,
        record("FT A/123", payment_ids=("FT A/123#1", "4411")),
        record("R/2024/77", payment_ids=("4411",)),
    )
    save_records(
        storage, partner, record("收据-0007", store_id="S2", business_date=NEXT_DAY, payment_ids=("支付/0007", "💳 #9"))
    )
    save_records(storage, partner, record("VOID-1", payment_ids=()))
    other_partner = new_id()
    storage.add_partner(other_partner, "Other", T0)
    save_records(storage, other_partner, record("FT A/123", payment_ids=("4411", "only-theirs")))

    found = storage.trade_records_by_payment_id(
        partner, ["FT A/123#1", "4411", "支付/0007", "💳 #9", "only-theirs", "never-used", "4411"]
    )
    assert found == {
        "FT A/123#1": {"FT A/123"},
        "4411": {"FT A/123", "R/2024/77"},
        "支付/0007": {"收据-0007"},
        "💳 #9": {"收据-0007"},
    }
    assert storage.trade_records_by_payment_id(other_partner, ["4411", "FT A/123#1"]) == {"4411": {"FT A/123"}}
    assert storage.trade_records_by_payment_id(partner, []) == {}


def test_payment_ids_are_those_of_each_records_latest_version(storage, partner):
    save_records(storage, partner, record("T1", version=2, payment_ids=("PAY-2",)))
    save_records(storage, partner, record("T1", version=1, payment_ids=("PAY-1",)))  # older, sent later
    assert storage.trade_records_by_payment_id(partner, ["PAY-1", "PAY-2"]) == {"PAY-2": {"T1"}}
    # A new version that moves the record to another store-day and changes its payments.
    save_records(
        storage,
        partner,
        record("T1", version=3, store_id="S2", business_date=NEXT_DAY, payment_ids=("PAY-3", "PAY-2/b")),
    )
    assert storage.trade_records_by_payment_id(partner, ["PAY-1", "PAY-2", "PAY-3", "PAY-2/b"]) == {
        "PAY-3": {"T1"},
        "PAY-2/b": {"T1"},
    }
    save_records(storage, partner, record("T1", version=4, store_id="S2", business_date=NEXT_DAY, payment_ids=()))
    assert storage.trade_records_by_payment_id(partner, ["PAY-3", "PAY-2/b"]) == {}


def test_payment_ids_of_versions_sent_in_one_batch_are_those_of_the_version_that_wins(storage, partner):
    later = T0 + dt.timedelta(seconds=1)
    save_records(
        storage,
        partner,
        record("T1", version=1, payment_ids=("A-1",)),
        record("T1", version=2, payment_ids=("A-2",)),  # wins: higher
        record("T2", version=2, payment_ids=("B-2",)),  # wins: T2's lower version comes after it
        record("T2", version=1, payment_ids=("B-1",)),
        record("T3", version=1, payment_ids=("C-1",)),
        record("T3", version=1, modified=later, payment_ids=("C-1b",)),  # wins: same version, later
        record("T4", version=1, payment_ids=("D-1",)),  # stays: same version and time
        record("T4", version=1, payment_ids=("D-1b",)),
    )
    asked = ["A-1", "A-2", "B-1", "B-2", "C-1", "C-1b", "D-1", "D-1b"]
    expected = {"A-2": {"T1"}, "B-2": {"T2"}, "C-1b": {"T3"}, "D-1": {"T4"}}
    assert storage.trade_records_by_payment_id(partner, asked) == expected


def test_a_lower_version_resent_after_a_move_keeps_the_moved_versions_payment_ids(storage, partner):
    save_records(storage, partner, record("T1", version=1, payment_ids=("PAY-1",)))
    save_records(storage, partner, record("T1", version=2, store_id="S2", payment_ids=("PAY-2",)))  # moved
    save_records(storage, partner, record("T1", version=1, payment_ids=("PAY-1",)))  # resent under a new batch
    save_records(storage, partner, record("T2", payment_ids=("PAY-1",)), record("T1", version=1, payment_ids=()))
    assert storage.trade_records_by_payment_id(partner, ["PAY-1", "PAY-2"]) == {"PAY-1": {"T2"}, "PAY-2": {"T1"}}


def test_a_batch_of_many_payment_ids_is_looked_up_at_once(storage, partner):
    rows = [record(f"T{i:04}", payment_ids=(f"{i:08}", f"{i:08}-tip")) for i in range(600)]
    save_records(storage, partner, *rows)
    asked = [f"{i:08}" for i in range(0, 1200, 2)]  # half used (0..598), half not
    found = storage.trade_records_by_payment_id(partner, asked)
    assert found == {f"{i:08}": {f"T{i:04}"} for i in range(0, 600, 2)}


def test_unknown_products_are_those_no_master_holds_for_the_store_or_all_stores(storage, partner):
    assert storage.unknown_products(partner, "S1", DAY) == []
    save_records(
        storage,
        partner,
        record("T1", product_lines={"P-BURGER": 2, "ABC/12-XL": 1, "饮料 #1": 1}),
        record("T2", product_lines={"ABC/12-XL": 3, "S2-ONLY": 1}),
        record("T3", product_lines={"OLD-ONLY": 1}),
    )
    save_records(storage, partner, record("T3", version=2, product_lines={"P-BURGER": 1}))  # OLD-ONLY gone
    save_records(storage, partner, record("T4", store_id="S2", product_lines={"OTHER-DAY": 1}))
    save_records(storage, partner, record("T5", business_date=NEXT_DAY, product_lines={"OTHER-DAY": 1}))
    storage.save_products(
        marker(partner, "products"),
        [ProductMaster("P-BURGER", None, 1, T0, {}), ProductMaster("S2-ONLY", "S2", 1, T0, {})],
        [],
    )
    assert storage.unknown_products(partner, "S1", DAY) == [
        UnknownProduct("ABC/12-XL", 4, 2),
        UnknownProduct("S2-ONLY", 1, 1),
        UnknownProduct("饮料 #1", 1, 1),
    ]

    # The products arrive (for this store, and for all stores): the day's lines match them.
    storage.save_products(
        marker(partner, "products", 2),
        [ProductMaster("ABC/12-XL", "S1", 1, T0, {}), ProductMaster("饮料 #1", None, 1, T0, {})],
        [],
    )
    assert storage.unknown_products(partner, "S1", DAY) == [UnknownProduct("S2-ONLY", 1, 1)]
    storage.save_products(marker(partner, "products"), [ProductMaster("S2-ONLY", None, 1, T0, {})], [])
    assert storage.unknown_products(partner, "S1", DAY) == []
    assert storage.unknown_products(partner, "S2", DAY) == [UnknownProduct("OTHER-DAY", 1, 1)]
    assert storage.unknown_products(new_id(), "S1", DAY) == []


# -- store-day totals: what reconciliation reads --------------------------------------------------


def test_store_day_totals_sum_the_records_of_the_day_per_source_code_and_payment_type(storage, partner):
    custom = 'VOUCHER "Ω" \\ 券'  # a custom payment type: any free string, JSON escapes included
    huge = 2**60 + 1
    save_records(
        storage,
        partner,
        record("T1", total=1000, item_rows=3),
        record(
            "T2",
            total=-250,
            tax_minor=-20,
            tip_minor=5,
            payment_rows=2,
            source_transaction_type="R",
            payments_minor={"REFUND": 200, "ADJUSTMENT": -50},
        ),
        record(
            "T3",
            total=huge,
            tip_minor=7,
            payment_rows=3,
            payments_minor={"SALE": huge - 300, custom: 300, "DEPOSIT_APPLIED": 0},
        ),
        record(
            "T4",
            total=0,
            tax_minor=0,
            item_rows=1,
            payment_rows=0,
            source_transaction_type="未 mapped",
            payments_minor={},
        ),
    )
    save_records(storage, partner, record("T5", store_id="S2"), record("T6", store_id="S2"))
    save_records(storage, partner, record("T7", business_date=NEXT_DAY))
    other = new_id()
    storage.add_partner(other, "Other", T0)
    save_records(storage, other, record("T8"))

    totals = storage.store_day_totals(partner, "S1", DAY)
    assert totals == StoreDayTotals(
        {
            "01": SourceTypeTotals(2, 5, 4, 1000 + huge, 160, 7),
            "R": SourceTypeTotals(1, 2, 2, -250, -20, 5),
            "未 mapped": SourceTypeTotals(1, 1, 0, 0, 0, 0),
        },
        {"SALE": 1000 + huge - 300, "REFUND": 200, "ADJUSTMENT": -50, custom: 300, "DEPOSIT_APPLIED": 0},
    )
    rows = storage.store_day_rows(partner, "S1", DAY)  # the same sums as the records one by one
    assert totals == StoreDayTotals.of_records(
        (
            r.source_transaction_type,
            r.item_rows,
            r.payment_rows,
            r.total_minor,
            r.tax_minor,
            r.tip_minor,
            r.payments_minor,
        )
        for r in rows
    )
    assert storage.store_day_totals(partner, "S2", DAY) == StoreDayTotals(
        {"01": SourceTypeTotals(2, 4, 2, 2000, 160, 0)}, {"SALE": 2000}
    )
    assert storage.store_day_totals(other, "S1", DAY) == StoreDayTotals(
        {"01": SourceTypeTotals(1, 2, 1, 1000, 80, 0)}, {"SALE": 1000}
    )
    assert storage.store_day_totals(partner, "S2", NEXT_DAY) == StoreDayTotals({}, {})


def test_store_day_totals_count_only_the_latest_version_of_each_record(storage, partner):
    save_records(storage, partner, record("T1", 1, total=100), record("T2", 1, total=200))
    save_records(
        storage, partner, record("T1", 2, total=150, source_transaction_type="R", payments_minor={"REFUND": 150})
    )
    save_records(storage, partner, record("T2", 1, T0 - dt.timedelta(seconds=1), total=999))  # older: ignored
    save_records(storage, partner, record("T1", 1, T0 + dt.timedelta(days=1), total=999))  # lower version: ignored
    assert storage.store_day_totals(partner, "S1", DAY) == StoreDayTotals(
        {"01": SourceTypeTotals(1, 2, 1, 200, 80, 0), "R": SourceTypeTotals(1, 2, 1, 150, 80, 0)},
        {"SALE": 200, "REFUND": 150},
    )


def test_store_day_totals_follow_a_record_that_a_later_version_moved(storage, partner):
    save_records(storage, partner, record("T1", 1, total=100), record("T2", 1, total=200))
    save_records(storage, partner, record("T1", 2, store_id="S2", business_date=NEXT_DAY, total=111))
    assert storage.store_day_totals(partner, "S1", DAY) == StoreDayTotals(
        {"01": SourceTypeTotals(1, 2, 1, 200, 80, 0)}, {"SALE": 200}
    )
    assert storage.store_day_totals(partner, "S2", NEXT_DAY) == StoreDayTotals(
        {"01": SourceTypeTotals(1, 2, 1, 111, 80, 0)}, {"SALE": 111}
    )
    save_records(storage, partner, record("T1", 1, total=100))  # the old version resent: stays moved
    save_records(storage, partner, record("T2", 2, store_id="S2", business_date=NEXT_DAY, total=222))
    assert storage.store_day_totals(partner, "S1", DAY) == StoreDayTotals({}, {})
    assert storage.store_day_totals(partner, "S2", NEXT_DAY) == StoreDayTotals(
        {"01": SourceTypeTotals(2, 4, 2, 333, 160, 0)}, {"SALE": 333}
    )


def test_store_day_totals_are_exact_beyond_64_bits(storage, partner):
    big = 2**62  # each fits a 64-bit integer; their sum does not
    save_records(
        storage, partner, *(record(f"T{i}", total=big, tax_minor=-big, payments_minor={"SALE": big}) for i in range(3))
    )
    assert storage.store_day_totals(partner, "S1", DAY) == StoreDayTotals(
        {"01": SourceTypeTotals(3, 6, 3, 3 * big, -3 * big, 0)}, {"SALE": 3 * big}
    )


# -- daily closes and reconciliation results ------------------------------------------------------


def close_day(
    storage,
    partner_id: str,
    batch_id: str,
    store_id: str = "S1",
    business_date: dt.date = DAY,
    due_at: dt.datetime = T0,
    expected: dict | None = None,
) -> ClosedDay:
    day = ClosedDay(
        store_id, business_date, batch_id, "USD", expected or {"trade_record_count": 1}, T0, due_at, "RECEIVED"
    )
    saved = storage.save_daily_close(
        marker(partner_id, "daily-close", batch_id=batch_id, store_id=store_id, business_date=business_date), day
    )
    assert saved is None
    return day


def result_of(day: ClosedDay, status: str = "MATCHED") -> ClosedDay:
    return replace(
        day,
        status=status,
        checked_at=T0 + dt.timedelta(minutes=20),
        actual={"trade_record_count": 1, "net_sales_amount": "9.20"},
        differences=[] if status == "MATCHED" else ["net_sales_amount"],
        details={"batch_seqs_received": [1], "source_codes": ["01"]},
    )


def test_a_result_is_saved_only_for_the_latest_close(storage, partner):
    assert storage.get_closed_day(partner, "S1", DAY) is None
    first = close_day(storage, partner, "close-1")
    assert storage.get_closed_day(partner, "S1", DAY) == first
    checked = result_of(first, "MISMATCHED")
    assert storage.save_result(partner, checked) is True
    assert storage.get_closed_day(partner, "S1", DAY) == checked

    second = close_day(storage, partner, "close-2", expected={"trade_record_count": 2})
    assert storage.get_closed_day(partner, "S1", DAY) == second  # the result is reset with the new close
    assert storage.save_result(partner, result_of(first)) is False
    assert storage.get_closed_day(partner, "S1", DAY) == second
    assert storage.save_result(partner, result_of(second)) is True
    assert storage.get_closed_day(partner, "S1", DAY) == result_of(second)
    assert storage.save_result(partner, result_of(replace(second, business_date=NEXT_DAY))) is False


def test_of_two_runs_of_one_close_that_read_it_alike_one_saves_its_result(storage, partner):
    """Two instances' workers take duplicate messages of one close at once: both read it RECEIVED, the
    first result saved wins, and a later run that read that result replaces it (a mapping re-run)."""
    read = close_day(storage, partner, "close-1")
    first, second = result_of(read, "MISMATCHED"), replace(result_of(read), checked_at=T0 + dt.timedelta(minutes=21))
    assert storage.save_result(partner, first, replacing=read) is True
    assert storage.save_result(partner, second, replacing=read) is False
    assert storage.get_closed_day(partner, "S1", DAY) == first
    assert storage.save_result(partner, second, replacing=first) is True
    assert storage.get_closed_day(partner, "S1", DAY) == second


def test_a_resent_close_changes_nothing(storage, partner):
    first = close_day(storage, partner, "close-1")
    storage.save_result(partner, result_of(first))
    resend = marker(partner, "daily-close", batch_id="close-1", store_id="S1", business_date=DAY, digest="other")
    stored = storage.save_daily_close(resend, replace(first, expected={"changed": True}))
    assert stored == replace(resend, body_digest="digest")
    assert storage.get_closed_day(partner, "S1", DAY) == result_of(first)


# -- records that change a checked day (decision 0048) ---------------------------------------------


def save_batch(storage, partner_id: str, *rows: TradeRecordRow, seq: int = 1):
    first = rows[0]
    batch = marker(
        partner_id, "trade-records", len(rows), store_id=first.store_id, business_date=first.business_date, seq=seq
    )
    return batch, storage.save_trade_records(batch, list(rows))


S1_DAY, S2_NEXT = StoreDay("S1", DAY), StoreDay("S2", NEXT_DAY)


def test_saving_records_says_which_were_newer_and_from_which_store_day_they_moved(storage, partner):
    batch, saved = save_batch(storage, partner, record("NYC1-T0003"), record("收据-7"))
    assert saved.existing is None and saved.changes == RecordChanges(2, ())
    assert storage.find_batch(partner, batch.batch_id).changes == RecordChanges(2, ())  # kept with its marker
    assert save_batch(storage, partner, record("NYC1-T0003"))[1].changes == RecordChanges(0, ())  # same version
    older = record("NYC1-T0003", 1, T0 - dt.timedelta(seconds=1), store_id="S2", business_date=NEXT_DAY)
    assert save_batch(storage, partner, older)[1].changes == RecordChanges(0, ())
    moved = record("NYC1-T0003", 2, store_id="S2", business_date=NEXT_DAY)
    batch, saved = save_batch(storage, partner, moved, record("FT A/9", store_id="S2", business_date=NEXT_DAY))
    assert saved.changes == RecordChanges(2, (RecordMove("NYC1-T0003", S1_DAY, S2_NEXT),))
    assert storage.find_batch(partner, batch.batch_id).changes == saved.changes
    assert saved.changes.days(S2_NEXT) == [S2_NEXT, S1_DAY]
    assert storage.save_trade_records(batch, [moved]).existing == batch  # a resend: nothing written


def test_reopening_a_day_puts_a_result_back_to_received_once(storage, partner):
    due = T0 + dt.timedelta(hours=1)
    assert storage.reopen_day(partner, S1_DAY, due, []) is None  # no close: nothing to reopen
    first = close_day(storage, partner, "close-1")
    assert storage.reopen_day(partner, S1_DAY, due, []) is None  # RECEIVED: already due
    received = storage.get_closed_day(partner, "S1", DAY)
    assert (received.status, received.revision) == ("RECEIVED", 1)
    assert storage.save_result(partner, result_of(first)) is False  # its records changed during the run
    assert storage.save_result(partner, result_of(received)) is True
    reopened = storage.reopen_day(partner, S1_DAY, due, [])
    assert reopened == replace(received, due_at=due, revision=2) == storage.get_closed_day(partner, "S1", DAY)
    assert storage.reopen_day(partner, S1_DAY, due, []) is None  # the next batch: already due
    assert storage.days_due(due + dt.timedelta(seconds=1)) != []


def test_the_days_a_batch_changed_are_reopened_together_each_as_alone(storage, partner):
    """A move's two days of one store (their closes read in one request on Cosmos DB), a day of another store
    and a day without a close, in order."""
    due = T0 + dt.timedelta(hours=1)
    s1_next, s2_day = StoreDay("S1", NEXT_DAY), StoreDay("S2", DAY)
    for store_id, business_date in ((S1_DAY.store_id, DAY), ("S1", NEXT_DAY), ("S2", DAY)):
        close_day(storage, partner, new_id("close"), store_id, business_date)
        assert storage.save_result(partner, result_of(storage.get_closed_day(partner, store_id, business_date)))
    moved = RecordMove("T1", S1_DAY, s1_next)
    days = [(s1_next, [moved]), (S1_DAY, [moved]), (s2_day, []), (S2_NEXT, [])]
    reopened = storage.reopen_days(partner, days, due)
    stored = [storage.get_closed_day(partner, day.store_id, day.business_date) for day, _ in days]
    assert [(day.status, day.due_at) for day in stored[:3]] == [("RECEIVED", due)] * 3 and stored[3] is None
    if not isinstance(storage, RetriedAfterThrottling):  # under 429s a day reopened before one is due on the retry
        assert [(day.store_id, day.business_date) for day in reopened[:3]] == [
            (day.store_id, day.business_date) for day, _ in days[:3]
        ]
    assert reopened[3] is None  # no close
    assert storage.get_closed_day(partner, "S1", DAY).moved_out == [
        {"trade_record_id": "T1", "to_store_id": "S1", "to_business_date": "2026-11-21"}
    ]
    assert storage.reopen_days(partner, days, due) == [None] * 4  # already due


def test_a_retry_reopens_only_a_result_checked_before_its_batch(storage, partner):
    close_day(storage, partner, "close-1")
    checked = result_of(storage.get_closed_day(partner, "S1", DAY))  # checked at T0 + 20 minutes
    assert storage.save_result(partner, checked)
    assert storage.reopen_day(partner, S1_DAY, T0, [], checked_before=T0 + dt.timedelta(minutes=20)) is None
    assert storage.get_closed_day(partner, "S1", DAY).status == "MATCHED"
    assert storage.reopen_day(partner, S1_DAY, T0, [], checked_before=T0 + dt.timedelta(minutes=21)) is not None


def test_a_day_keeps_the_records_that_moved_out_of_it_until_they_come_back(storage, partner):
    close_day(storage, partner, "close-1")
    out = RecordMove("NYC1-T0003", S1_DAY, S2_NEXT)
    storage.reopen_day(partner, S1_DAY, T0, [out, RecordMove("#12", S1_DAY, StoreDay("S1", NEXT_DAY))])
    assert storage.get_closed_day(partner, "S1", DAY).moved_out == [
        {"trade_record_id": "NYC1-T0003", "to_store_id": "S2", "to_business_date": "2026-11-21"},
        {"trade_record_id": "#12", "to_store_id": "S1", "to_business_date": "2026-11-21"},
    ]
    close_day(storage, partner, "close-2")  # a new close keeps them: they are about the records
    storage.reopen_day(partner, S1_DAY, T0, [RecordMove("NYC1-T0003", S2_NEXT, S1_DAY)])  # back again
    assert storage.get_closed_day(partner, "S1", DAY).moved_out == [
        {"trade_record_id": "#12", "to_store_id": "S1", "to_business_date": "2026-11-21"}
    ]


def test_closed_days_are_listed_by_date_and_store_and_filtered_by_status(storage, partner):
    later = close_day(storage, partner, "c-a", "S1", NEXT_DAY)
    s2 = close_day(storage, partner, "c-b", "S2", DAY)
    s1 = close_day(storage, partner, "c-c", "S1", DAY)
    storage.save_result(partner, result_of(s2))
    assert storage.closed_days(partner) == [s1, result_of(s2), later]
    assert storage.closed_days(partner, "RECEIVED") == [s1, later]
    assert storage.closed_days(partner, "MATCHED") == [result_of(s2)]
    assert storage.closed_days(partner, "MISMATCHED") == []
    assert storage.closed_days(new_id()) == []


def test_days_due_are_the_received_closes_past_their_due_time_and_postpone_moves_them(storage, partner):
    other = new_id()
    storage.add_partner(other, "Other", T0)
    now = T0 + dt.timedelta(hours=1)
    overdue = close_day(storage, partner, "c-1", "S1", DAY, due_at=now - dt.timedelta(seconds=1))
    not_yet = close_day(storage, partner, "c-2", "S2", DAY, due_at=now)
    checked = close_day(storage, partner, "c-3", "S1", NEXT_DAY, due_at=now - dt.timedelta(hours=1))
    storage.save_result(partner, result_of(checked))
    elsewhere = close_day(storage, other, "c-4", "S9", DAY, due_at=now - dt.timedelta(minutes=5))

    def due() -> set:
        return {
            (p, day.store_id, day.business_date, day.close_batch_id)
            for p, day in storage.days_due(now)
            if p in (partner, other)
        }

    assert due() == {(partner, "S1", DAY, "c-1"), (other, "S9", DAY, "c-4")}
    assert dict(storage.days_due(now))[partner] == overdue
    storage.postpone(partner, "S1", DAY, now + dt.timedelta(minutes=5))
    assert storage.get_closed_day(partner, "S1", DAY) == replace(overdue, due_at=now + dt.timedelta(minutes=5))
    assert due() == {(other, "S9", DAY, "c-4")}
    storage.postpone(partner, "S9", DAY, now)  # no close there: nothing happens
    assert storage.get_closed_day(partner, "S9", DAY) is None
    assert elsewhere.status == not_yet.status == "RECEIVED"


# -- races ----------------------------------------------------------------------------------------


def accepted_once(storage, outcomes: list, batch: BatchMarker) -> bool:
    """One racer stored the batch (None) and the others were answered from its marker. Under injected 429s
    the one that stored it may have met a 429 on its marker and been answered from it on its retry, like
    the others: then none is accepted (docs/reliability.md, "Cosmos DB throttling (429)")."""
    accepted = outcomes.count(None)
    allowed = (0, 1) if isinstance(storage, RetriedAfterThrottling) else (1,)
    return accepted in allowed and outcomes.count(batch) == len(outcomes) - accepted


def test_concurrent_duplicates_of_a_batch_store_it_once(storage, partner):
    batch = marker(partner, "trade-records", 5, store_id="S1", business_date=DAY, seq=1)
    rows = [record(f"T{i}") for i in range(5)]
    outcomes = run_together(RACERS, lambda _: storage.save_trade_records(batch, rows).existing)
    assert accepted_once(storage, outcomes, batch)
    assert sorted(storage.store_day_rows(partner, "S1", DAY), key=lambda row: row.trade_record_id) == rows
    assert storage.batch_seqs(partner, "S1", DAY) == [1]


def test_records_saved_after_their_batch_was_looked_up_are_answered_by_a_twin_stored_meanwhile(storage, partner):
    """`looked_up`: the caller found no marker, so the adapter may write without looking again; a twin that
    stored the batch in between still answers it (the marker's create-if-absent), and the records stay as the
    version rule keeps them."""
    batch = marker(partner, "trade-records", 2, store_id="S1", business_date=DAY, seq=1)
    rows = [record("T1"), record("T2")]
    assert storage.save_trade_records(batch, rows, looked_up=True).existing is None
    assert storage.save_trade_records(batch, rows, looked_up=True).existing == batch
    assert sorted(storage.store_day_rows(partner, "S1", DAY), key=lambda row: row.trade_record_id) == rows
    assert storage.batch_seqs(partner, "S1", DAY) == [1]


def test_concurrent_duplicates_of_a_close_store_it_once(storage, partner):
    day = ClosedDay("S1", DAY, "close-x", "USD", {"n": 1}, T0, T0, "RECEIVED")
    batch = marker(partner, "daily-close", batch_id="close-x", store_id="S1", business_date=DAY)
    outcomes = run_together(RACERS, lambda _: storage.save_daily_close(batch, day))
    assert accepted_once(storage, outcomes, batch)
    assert storage.get_closed_day(partner, "S1", DAY) == day


def test_concurrent_versions_of_a_record_leave_the_highest(storage, partner):
    versions = run_together(RACERS, lambda i: save_records(storage, partner, record("T1", i + 1, total=i + 1)))
    assert versions == [None] * RACERS
    assert day_rows(storage, partner) == {"T1": record("T1", RACERS, total=RACERS)}


def test_concurrent_versions_moving_between_days_leave_the_highest_in_its_day_only(storage, partner):
    days = [("S1", DAY), ("S2", DAY), ("S1", NEXT_DAY)]
    for round_ in range(3):
        trade_record_id = f"M{round_}"

        def write(i: int, trade_record_id: str = trade_record_id):
            store_id, business_date = days[i % len(days)]
            return save_records(
                storage,
                partner,
                record(trade_record_id, i + 1, store_id=store_id, business_date=business_date, total=i + 1),
            )

        run_together(RACERS, write)
        final_store, final_day = days[(RACERS - 1) % len(days)]
        for store_id, business_date in days:
            found = day_rows(storage, partner, store_id, business_date).get(trade_record_id)
            if (store_id, business_date) == (final_store, final_day):
                assert found == record(
                    trade_record_id, RACERS, store_id=store_id, business_date=business_date, total=RACERS
                )
            else:
                assert found is None, (store_id, business_date, found)


def test_a_result_saved_while_a_new_close_arrives_is_dropped(storage, partner):
    first = close_day(storage, partner, "close-1")
    second = ClosedDay("S1", DAY, "close-2", "USD", {"n": 2}, T0, T0, "RECEIVED")
    second_marker = marker(partner, "daily-close", batch_id="close-2", store_id="S1", business_date=DAY)

    def work(i: int):
        if i % 2:
            return storage.save_result(partner, result_of(first))
        return storage.save_daily_close(second_marker, second)

    run_together(4, work)
    assert storage.get_closed_day(partner, "S1", DAY) == second


def test_trade_record_versions_are_the_latest_stored_and_where_they_live(storage, partner):
    save_records(storage, partner, record("T1", 1), record("T2", 1))
    save_records(storage, partner, record("T1", 2, store_id="S2", business_date=NEXT_DAY))
    other = new_id()
    storage.add_partner(other, "Other", T0)
    assert storage.trade_record_versions(partner, ["T1", "T2", "T3"]) == {
        "T1": StoredVersion(Version.of(2, T0), StoreDay("S2", NEXT_DAY)),
        "T2": StoredVersion(Version.of(1, T0), StoreDay("S1", DAY)),
    }
    assert storage.trade_record_versions(other, ["T1"]) == {}
    assert storage.trade_record_versions(partner, []) == {}
    # what a batch would change, read instead of written, is what writing it changes
    batch = [record("T1", 3), record("T2", 1), record("T3", 1)]
    predicted = record_changes(batch, storage.trade_record_versions(partner, ["T1", "T2", "T3"]))
    assert predicted == RecordChanges(2, (RecordMove("T1", StoreDay("S2", NEXT_DAY), StoreDay("S1", DAY)),))
    saved = storage.save_trade_records(
        marker(partner, "trade-records", 3, store_id="S1", business_date=DAY, seq=2), batch
    )
    assert saved.changes == predicted


def test_a_client_is_mapped_per_issuer_and_one_mapped_for_any_issuer_still_speaks(storage, partner):
    other = new_id()
    storage.add_partner(other, "Other", T0)
    entra, keycloak = "https://login.microsoftonline.com/tenant/v2.0", "https://sso.acme.example/realms/pos"
    shared, legacy = str(uuid.uuid4()), str(uuid.uuid4())
    assert storage.add_client(partner, shared, T0, entra) == ClientInfo(shared, partner, T0, entra)
    storage.add_client(other, shared, T0, keycloak)  # the same id at another issuer: another client
    storage.add_client(partner, legacy, T0)  # as mapped before mappings named an issuer: any issuer
    assert storage.find_client(shared, entra).partner.partner_id == partner
    assert storage.find_client(shared, keycloak).partner.partner_id == other
    assert storage.find_client(shared, "https://elsewhere.example") is None
    assert storage.find_client(legacy, entra).partner.partner_id == partner
    assert storage.find_client(legacy, keycloak).partner.partner_id == partner
    with pytest.raises(AdminError, match=f"^client {shared} already speaks for partner {other}$"):
        storage.add_client(partner, shared, T0, keycloak)
    assert {(c.client_id, c.issuer) for c in storage.list_clients(partner)} == {(shared, entra), (legacy, "")}
    with pytest.raises(AdminError, match=f"^partner {partner} has no client {shared}$"):
        storage.remove_client(partner, shared, keycloak)
    storage.remove_client(partner, shared, entra)
    assert storage.find_client(shared, entra) is None
    assert storage.find_client(shared, keycloak).partner.partner_id == other
