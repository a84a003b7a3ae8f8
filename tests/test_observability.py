"""Structured logs and counters (issue 5 item 3): a whole business day's log has the fields support
needs and never a key, a member_id or a card number; the counters count what happened."""

from __future__ import annotations

import json

import pytest
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from api import telemetry
from tests.conftest import make_partner, start_host
from tests.payloads import mapping_batch, store, stores_batch
from tests.test_business_day import DAY, DIRECTIONS, wait_for_result
from tests.trade_payloads import Line, Pay, daily_close, totals_of, trade_batch, trade_record

MEMBER_ID = "M-7F3A9C11"
CARD = "4000 0566 5566 5556"  # a test card number that passes the Luhn check


def log_entries(text: str) -> list[dict]:
    entries = []
    for line in text.splitlines():
        if line.startswith("{"):
            entries.append(json.loads(line))
    return entries


def test_a_business_day_is_logged_with_its_fields_and_without_secrets(tmp_path):
    host = start_host(tmp_path)
    try:
        partner = make_partner(host)
        assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
        assert partner.put("mappings/transaction-types", mapping_batch()).status_code == 202
        sale = trade_record("S1", DAY, [Line("P-BURGER", 2, 550)], member_id=MEMBER_ID,
                            payments=[Pay(1100, "SALE", "CREDIT_CARD")])
        odd = trade_record("S1", DAY, [Line("P-COLA", 1, 199)], payments=[Pay(199, "STORE_CREDIT")])
        batch = trade_batch("S1", DAY, [sale, odd])
        assert partner.post("trade-records", batch).status_code == 202
        refused = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], member_id="jane@example.com")
        refused["payments"][0]["payment_method_detail"] = f"card {CARD}"
        assert partner.post("trade-records", trade_batch("S1", DAY, [refused])).status_code == 400
        assert partner.get("mappings/transaction-types", headers={"x-functions-key": partner.key + "x"}).status_code == 401
        totals = totals_of([sale, odd], {"01"}, {**DIRECTIONS, "STORE_CREDIT": 1})
        assert partner.post("daily-close", daily_close("S1", DAY, totals)).status_code == 202
        assert wait_for_result(partner, "S1", DAY)["status"] == "MISMATCHED"  # STORE_CREDIT has no direction yet
    finally:
        host.stop()

    text = host.log()
    for secret in (partner.key, MEMBER_ID, "jane@example.com", CARD, CARD.replace(" ", "")):
        assert secret not in text
    entries = log_entries(text)
    requests = [e for e in entries if e.get("event") == "http_request"]
    accepted = next(e for e in requests if e.get("batch_id") == batch["batch_id"])
    assert accepted["function"] == "post_trade_records"
    assert accepted["partner_id"] == partner.partner_id
    assert accepted["record_count"] == 2 and accepted["batch_status"] == "ACCEPTED"
    assert accepted["warnings"] == {"PAYMENT_TYPE_UNKNOWN_DIRECTION": 1}
    assert accepted["invocation_id"] and accepted["duration_ms"] >= 0 and accepted["status"] == 202
    rejected = [e for e in requests if e.get("code") == "INVALID_PAYLOAD"]
    assert rejected and rejected[0]["function"] == "post_trade_records"
    assert any(e.get("code") == "UNAUTHORIZED" and e["partner_id"] is None for e in requests)
    (run,) = [e for e in entries if e.get("event") == "reconciliation"]
    assert run["status"] == "MISMATCHED" and run["partner_id"] == partner.partner_id
    assert run["differences"] == ["payment_total_amount"] and run["trade_record_count"] == 2
    assert len({e["invocation_id"] for e in requests}) == len(requests)


@pytest.fixture(scope="module")
def reader():
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    return reader


def counted(reader, name: str) -> dict:
    found = {}
    data = reader.get_metrics_data()  # None until something was counted
    for resource in data.resource_metrics if data else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    for point in metric.data.data_points:
                        found[tuple(sorted(point.attributes.items()))] = point.value
    return found


def test_counters_count_records_warnings_rejections_and_outcomes(reader):
    before = {name: counted(reader, name) for name in
              ("pos.records.accepted", "pos.warnings", "pos.requests.rejected", "pos.reconciliations")}
    body = {"batch_id": "b", "status": "ACCEPTED", "record_count": 3,
            "warnings": [{"code": "AMOUNT_MISMATCH"}, {"code": "AMOUNT_MISMATCH"}, {"code": "LINE_AMOUNT_MISMATCH"}]}
    common = dict(invocation_id="i", request_id="r", method="POST", path="pos/v1/trade-records", duration_ms=1.0,
                  partner_id="p")
    telemetry.record_request(function="post_trade_records", status=202, body=body, error_code=None, **common)
    telemetry.record_request(function="post_trade_records", status=200, body={**body, "status": "ALREADY_RECEIVED",
                                                                             "warnings": []}, error_code=None, **common)
    telemetry.record_request(function="put_stores", status=403, body=None, error_code="STORE_NOT_ALLOWED", **common)
    telemetry.record_reconciliation(None, invocation_id="i", partner_id="p", duration_ms=1.0)

    def delta(name, attributes):
        key = tuple(sorted(attributes.items()))
        return counted(reader, name).get(key, 0) - before[name].get(key, 0)

    assert delta("pos.records.accepted", {"function": "post_trade_records"}) == 3  # the replay adds nothing
    assert delta("pos.warnings", {"code": "AMOUNT_MISMATCH"}) == 2
    assert delta("pos.warnings", {"code": "LINE_AMOUNT_MISMATCH"}) == 1
    assert delta("pos.requests.rejected", {"code": "STORE_NOT_ALLOWED", "function": "put_stores"}) == 1
    assert delta("pos.reconciliations", {"status": "SKIPPED"}) == 1
