"""A storage outage is a 503 with a clear problem body, never a batch lost or half-stored: the
partner is told to retry, and health says what is down."""

from __future__ import annotations

import time

from devhost.azurite_emulator import start_azurite
from devhost.cosmos_emulator import start_cosmos_emulator
from tests.conftest import make_partner, start_azure_host
from tests.e2e.test_business_day import DAY
from tests.payloads import store, stores_batch
from tests.trade_payloads import Line, trade_batch, trade_record
from triggers.health import CHECK_INTERVAL_SECONDS


def health_once_checked_again(partner):
    """Health answers from a check at most CHECK_INTERVAL_SECONDS old (triggers/health.py): the first 503 after
    the outage, within the interval and the time the check takes to give up."""
    deadline = time.monotonic() + CHECK_INTERVAL_SECONDS + 30
    while (health := partner.get("health")).status_code == 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    return health


def test_cosmos_outage_answers_503_and_health_says_so(tmp_path):
    cosmos = start_cosmos_emulator(tmp_path / "cosmos.log")
    azurite = start_azurite(tmp_path)
    host = start_azure_host(tmp_path, cosmos, azurite.connection_string)
    try:
        partner = make_partner(host)
        assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
        cosmos.stop()

        response = partner.post("trade-records", trade_batch("S1", DAY, [trade_record("S1", DAY, [Line("P", 1, 550)])]))
        assert response.status_code == 503
        assert response.headers["Content-Type"].startswith("application/problem+json")
        assert response.headers["Retry-After"].isdigit()
        problem = response.json()
        assert problem["code"] == "SERVICE_UNAVAILABLE" and "nothing was stored" in problem["detail"]
        assert problem["request_id"] == response.headers["x-request-id"]

        health = health_once_checked_again(partner)
        assert health.status_code == 503
        assert health.json() == {"status": "unavailable", "checks": {"storage": "unavailable", "queue": "ok"}}
    finally:
        host.stop()
        cosmos.stop()
        azurite.stop()
    assert partner.key not in host.log()


def test_queue_outage_refuses_the_daily_close_without_storing_it(tmp_path, cosmos_emulator):
    from tests.e2e.test_business_day import DIRECTIONS
    from tests.trade_payloads import daily_close, totals_of

    azurite = start_azurite(tmp_path)
    host = start_azure_host(tmp_path, cosmos_emulator, azurite.connection_string)
    try:
        partner = make_partner(host)
        assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
        azurite.stop()
        close = daily_close("S1", DAY, totals_of([], {"01"}, DIRECTIONS))
        response = partner.post("daily-close", close)
        assert response.status_code == 503 and response.json()["code"] == "SERVICE_UNAVAILABLE"
        # Nothing was stored: the store-day is still NOT_RECEIVED, so the partner's retry starts afresh.
        assert partner.get(f"daily-close/S1/{DAY}").json()["status"] == "NOT_RECEIVED"
        assert health_once_checked_again(partner).json()["checks"] == {"storage": "ok", "queue": "unavailable"}
    finally:
        host.stop()
        azurite.stop()
