"""Retention over real HTTP on both backends (decision 0086): the local host keeps
RETENTION days; a write for an older store-day is refused whole, and a retired day's close and result are
still answered, over HTTP and by `hq`, after `hq retention run` (run with a shorter retention, as time
passing would make it) deleted its records on SQLite. On Cosmos DB its items would expire by their ttl,
which the emulator does not do (tests/contract/test_cosmos_retention.py): there the run deletes nothing
and the answers are the same."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from core.clock import utc_now
from tests.conftest import make_partner, start_azure_host, start_host
from tests.e2e.test_business_day import DIRECTIONS, close_and_wait, push
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, daily_close, totals_of, trade_batch, trade_record

RETENTION = 30
STORE = "0042"
PRODUCT = "4901234567894"


@pytest.fixture(scope="module", params=["sqlite", "azure"])
def retention_host(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"retention-{request.param}")
    if request.param == "sqlite":
        host = start_host(tmp, TRADE_RECORD_RETENTION_DAYS=str(RETENTION))
        yield host
        host.stop()
        return
    from devhost.azurite_emulator import start_azurite

    azurite = start_azurite(tmp)
    cosmos = request.getfixturevalue("cosmos_emulator")
    host = start_azure_host(tmp, cosmos, azurite.connection_string, TRADE_RECORD_RETENTION_DAYS=str(RETENTION))
    yield host
    host.stop()
    azurite.stop()


@pytest.fixture
def partner(retention_host):
    partner = make_partner(retention_host, (STORE,))
    assert partner.put("stores", stores_batch(store(STORE))).status_code == 202
    assert partner.put("mappings/transaction-types", mapping_batch(("01", "SALE"))).status_code == 202
    return partner


def days_ago(days: int) -> str:
    return (utc_now().date() - dt.timedelta(days=days)).isoformat()


def record(date: str, amount: int = 1200) -> dict:
    return trade_record(STORE, date, [Line(PRODUCT, 1, amount)], tax=96)


def retention_problem(response) -> dict:
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["code"] == "INVALID_PAYLOAD"
    assert [error["path"] for error in problem["errors"]] == ["business_date"], problem["errors"]
    [error] = problem["errors"]
    assert f"past HQ's retention of {RETENTION} days" in error["message"]
    return error


def test_writes_for_a_retired_day_are_refused_and_store_nothing(partner):
    retired = days_ago(RETENTION + 1)
    records = [record(retired)]
    batch = trade_batch(STORE, retired, records)
    retention_problem(partner.post("trade-records", batch))
    retention_problem(partner.post("trade-records?validate_only=true", batch))
    close = daily_close(STORE, retired, totals_of(records, {"01"}, DIRECTIONS))
    retention_problem(partner.post("daily-close", close))
    assert partner.get(f"daily-close/{STORE}/{retired}").json()["status"] == "NOT_RECEIVED"
    assert partner.post("trade-records", trade_batch(STORE, retired, records)).status_code == 400  # not stored
    assert push(partner, STORE, [record(days_ago(RETENTION))], business_date=days_ago(RETENTION))["status"]


def test_a_retired_days_result_is_still_answered_after_retention_runs(partner):
    date = days_ago(10)
    records = [record(date), record(date, 880)]
    push(partner, STORE, records, business_date=date)
    totals = totals_of(records, {"01"}, DIRECTIONS)
    result = close_and_wait(partner, STORE, totals, business_date=date)
    assert result["status"] == "MATCHED", result

    shorter = dataclasses.replace(partner.host, env={**partner.host.env, "TRADE_RECORD_RETENTION_DAYS": "7"})
    ran = shorter.hq_in_process("retention", "run", "--without-export", "--max-rows", "1")
    assert ran.returncode == 0, ran.stderr
    if partner.host.env.get("POS_BACKEND") == "azure":
        assert "expire by their ttl" in ran.stdout
    else:
        assert "store-days retired" in ran.stdout and f"{partner.partner_id} {STORE} {date}" in ran.stderr
        rows = partner.host.storage().store_day_rows(partner.partner_id, STORE, dt.date.fromisoformat(date))
        assert rows == []

    assert partner.get(f"daily-close/{STORE}/{date}").json() == result
    rerun = shorter.hq_in_process("reconcile", "run", partner.partner_id, STORE, date)
    assert rerun.returncode == 0, rerun.stderr
    assert "MATCHED" in rerun.stdout
    assert partner.get(f"daily-close/{STORE}/{date}").json() == result  # kept, not computed from nothing
