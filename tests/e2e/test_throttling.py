"""Cosmos DB throttling over real HTTP: the local host on the emulators, with 429s injected at the
adapter's containers by COSMOS_INJECT_THROTTLING (devhost/cosmos_throttling.py; the emulator itself never
throttles). A write that meets a 429 the SDK gave up on answers 503 with Cosmos DB's Retry-After and is not
accepted; the partner's resend completes it. A reconciliation that meets one is retried by the queue, and
after the last attempt the sweep sends it again.

The setting is given to the host process only: the tests' own set-up (hq) and checks are not throttled."""

from __future__ import annotations

import datetime as dt
import time
import uuid

import pytest

from devhost.azurite_emulator import start_azurite
from devhost.cosmos_throttling import SETTING
from tests.backend_storage import storage_of
from tests.conftest import make_partner, start_host
from tests.e2e.test_business_day import DAY, DIRECTIONS, open_store, wait_for_result
from tests.payloads import problem_of
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

pytestmark = pytest.mark.filterwarnings("ignore::urllib3.exceptions.InsecureRequestWarning")

DATE = dt.date.fromisoformat(DAY)
# A marker is one create_item in `batches`: the stores and the mapping of open_store are the first two, the
# day's records the third, its close the fourth.
RECORDS_MARKER = "container=batches;operation=create_item;calls=3;retry_after_ms=2500"
CLOSE_MARKER = "container=batches;operation=create_item;calls=4;retry_after_ms=2500"


@pytest.fixture
def azurite_of_test(tmp_path):
    azurite = start_azurite(tmp_path)
    yield azurite
    azurite.stop()


def start_throttled_host(tmp, cosmos, azurite, database: str, throttling: str, **settings: str):
    """The local host on `database`, its Cosmos DB calls throttled as `throttling` says."""
    tmp.mkdir(parents=True, exist_ok=True)
    host = start_host(
        tmp,
        POS_BACKEND="azure",
        COSMOS_ENDPOINT=cosmos.endpoint,
        COSMOS_KEY=cosmos.key,
        COSMOS_DATABASE=database,
        COSMOS_CREATE_CONTAINERS="true",
        AzureWebJobsStorage=azurite.connection_string,
        **{SETTING: throttling} if throttling else {},
        **settings,
    )
    host.env = {name: value for name, value in host.env.items() if name != SETTING}  # hq and checks: not throttled
    return host


def records_of_a_day() -> list[dict]:
    return [trade_record("S1", DAY, [Line("P-BURGER", n + 1, 550)], tax=44 * (n + 1)) for n in range(5)]


@pytest.mark.parametrize(
    "throttling, kind, resend_status",
    [
        # the 4th call to trade-records: some records of the batch are written, the others and the marker not
        pytest.param("container=trade-records;calls=4;retry_after_ms=2500", "trade-records", 202, id="records"),
        # the marker itself: every record written, the batch not accepted
        pytest.param(RECORDS_MARKER, "trade-records", 202, id="records-marker"),
        # a close's marker: the close and its receipt are stored and its message sent, so the resend finds
        # the receipt and answers from it
        pytest.param(CLOSE_MARKER, "daily-close", 200, id="close-marker"),
    ],
)
def test_a_write_meeting_a_429_answers_503_with_retry_after_and_its_resend_completes(
    tmp_path, cosmos_emulator, azurite_of_test, throttling, kind, resend_status
):
    host = start_throttled_host(
        tmp_path, cosmos_emulator, azurite_of_test, f"e2e-429-{uuid.uuid4().hex[:8]}", throttling
    )
    try:
        assert f"COSMOS DB THROTTLING INJECTION IS ON ({SETTING})" in host.log()
        partner = make_partner(host)
        open_store(partner)
        records = records_of_a_day()
        totals = totals_of(records, {"01", "02"}, DIRECTIONS)
        if kind == "daily-close":
            assert partner.post("trade-records", trade_batch("S1", DAY, records)).status_code == 202
            body = daily_close("S1", DAY, totals)
        else:
            body = trade_batch("S1", DAY, records)
        storage = storage_of(host)

        refused = partner.post(kind, body)
        problem = problem_of(refused, 503, "SERVICE_UNAVAILABLE")
        assert refused.headers["Retry-After"] == "3"  # Cosmos DB's 2,500 ms, in whole seconds
        assert "Storage is busy" in problem["detail"]
        # Nothing partial is acknowledged: no marker; the day is not closed; what rows there are, are whole
        # records of this batch, as sent.
        assert storage.find_batch(partner.partner_id, body["batch_id"]) is None
        stored = {row.trade_record_id: row for row in storage.store_day_rows(partner.partner_id, "S1", DATE)}
        assert set(stored) <= {record["trade_record_id"] for record in records}
        assert all(row.version == 1 and row.total_minor > 0 for row in stored.values())
        if kind == "trade-records":
            assert partner.get(f"daily-close/S1/{DAY}").json()["status"] == "NOT_RECEIVED"

        resent = partner.post(kind, body)
        assert resent.status_code == resend_status, resent.text
        assert resent.json()["record_count"] == (len(records) if kind == "trade-records" else 1)
        assert partner.post(kind, body).status_code == 200  # and from now on: ALREADY_RECEIVED
        if kind == "trade-records":
            assert partner.post("daily-close", daily_close("S1", DAY, totals)).status_code == 202
        result = wait_for_result(partner, "S1", DAY, timeout=60)
        assert result["status"] == "MATCHED", result  # every record counted once
    finally:
        host.stop()


@pytest.mark.parametrize(
    "throttled_attempts, poisoned", [pytest.param(2, False, id="retried"), pytest.param(5, True, id="poisoned")]
)
def test_a_reconciliation_meeting_429s_is_retried_by_the_queue_and_the_sweep(
    tmp_path, cosmos_emulator, azurite_of_test, throttled_attempts, poisoned
):
    """A close is received by a host that is then stopped; a second host on the same data reconciles it,
    its first `throttled_attempts` attempts meeting a 429 on their first read of the store-day (its sums item). After
    five failed attempts the message is in the poison queue, and the sweep sends the close again."""
    database = f"e2e-429-{uuid.uuid4().hex[:8]}"
    receiving = start_throttled_host(
        tmp_path / "a", cosmos_emulator, azurite_of_test, database, "", RECONCILE_DELAY_SECONDS="3"
    )
    try:
        partner = make_partner(receiving)
        open_store(partner)
        records = records_of_a_day()
        assert partner.post("trade-records", trade_batch("S1", DAY, records)).status_code == 202
        close = daily_close("S1", DAY, totals_of(records, {"01", "02"}, DIRECTIONS))
        assert partner.post("daily-close", close).status_code == 202
    finally:
        receiving.stop()  # before the message is due
    reconciling = start_throttled_host(
        tmp_path / "b",
        cosmos_emulator,
        azurite_of_test,
        database,
        f"container=trade-records;operation=read_item;calls=1-{throttled_attempts}",  # the day's sums item (0108)
        AzureFunctionsJobHost__extensions__queues__visibilityTimeout="00:00:01",
        RECONCILE_SWEEP_SCHEDULE="*/2 * * * * *",
        RECONCILE_SWEEP_GRACE_SECONDS="20",
    )
    try:
        partner.host = reconciling
        result = wait_for_result(partner, "S1", DAY, timeout=90)
        assert result["status"] == "MATCHED", result
        log = reconciling.log()
        for attempt in range(1, throttled_attempts + 1):
            assert f"(attempt {attempt} of 5)" in log
        assert ("moved to reconcile-requests-poison" in log) is poisoned
        time.sleep(0.5)
        assert len(storage_of(reconciling).closed_days(partner.partner_id)) == 1  # one result for the close
    finally:
        reconciling.stop()
