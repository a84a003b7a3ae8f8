"""Structured logs and counters (decision 0073): a whole business day's log has the fields support
needs and never a key, a member_id or a card number; the counters count what happened."""

from __future__ import annotations

import json

import pytest
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from tests.conftest import make_partner, start_host
from tests.e2e.test_business_day import DAY, DIRECTIONS, wait_for_result
from tests.payloads import mapping_batch, store, stores_batch
from tests.trade_payloads import Line, Pay, daily_close, totals_of, trade_batch, trade_record
from triggers import telemetry

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
        sale = trade_record(
            "S1", DAY, [Line("P-BURGER", 2, 550)], member_id=MEMBER_ID, payments=[Pay(1100, "SALE", "CREDIT_CARD")]
        )
        odd = trade_record("S1", DAY, [Line("P-COLA", 1, 199)], payments=[Pay(199, "STORE_CREDIT")])
        batch = trade_batch("S1", DAY, [sale, odd])
        assert partner.post("trade-records", batch).status_code == 202
        refused = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], member_id="jane@example.com")
        refused["payments"][0]["payment_method_detail"] = f"card {CARD}"
        assert partner.post("trade-records", trade_batch("S1", DAY, [refused])).status_code == 400
        assert (
            partner.get("mappings/transaction-types", headers={"x-functions-key": partner.key + "x"}).status_code == 401
        )
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
    before = {
        name: counted(reader, name)
        for name in ("pos.records.accepted", "pos.warnings", "pos.requests.rejected", "pos.reconciliations")
    }
    body = {
        "batch_id": "b",
        "status": "ACCEPTED",
        "record_count": 3,
        "warnings": [{"code": "AMOUNT_MISMATCH"}, {"code": "AMOUNT_MISMATCH"}, {"code": "LINE_AMOUNT_MISMATCH"}],
    }
    common = dict(
        invocation_id="i", request_id="r", method="POST", path="pos/v1/trade-records", duration_ms=1.0, partner_id="p"
    )
    telemetry.record_request(function="post_trade_records", status=202, body=body, error_code=None, **common)
    telemetry.record_request(
        function="post_trade_records",
        status=200,
        body={**body, "status": "ALREADY_RECEIVED", "warnings": []},
        error_code=None,
        **common,
    )
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


def captured_json_log(logger_name: str):
    """The lines `logger_name` writes, formatted as the local host formats them (JSON, one per line)."""
    import io
    import logging

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(telemetry.JsonFormatter())
    logger = logging.getLogger(logger_name)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)

    def detach() -> None:
        logger.removeHandler(handler)
        logger.setLevel(level)

    return stream, detach


def test_a_path_holding_a_unicode_line_break_stays_one_log_line_in_any_reader():
    """JSON may leave U+0085, U+2028 and U+2029 raw, but splitlines and log viewers break lines there."""
    import logging

    stream, detach = captured_json_log("pos.api")
    try:
        logging.getLogger("pos.api").info("GET pos/v1/reference/a\x85b\u2028c\u2029d 台北")
    finally:
        detach()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0])["message"] == "GET pos/v1/reference/a\x85b\u2028c\u2029d 台北"
    assert "台北" in lines[0]  # other scripts stay readable


def test_an_unexpected_error_is_logged_with_its_type_frames_and_request_id_but_no_message(monkeypatch):
    """Exception messages can quote a partner's input (pydantic quotes input values): the log keeps
    the type, the chain of causes and the frames, and the request id the partner was answered with."""
    import azure.functions as func
    import pydantic

    from triggers import http

    monkeypatch.setattr(http, "current_backend", lambda: None)

    def look_up_member(call):
        try:
            pydantic.TypeAdapter(int).validate_python(f"member {MEMBER_ID} card {CARD}")
        except pydantic.ValidationError as error:
            raise RuntimeError(f"no member {MEMBER_ID}") from error

    stream, detach = captured_json_log("pos.api")
    try:
        request = func.HttpRequest(
            "POST", "http://x/pos/v1/trade-records", headers={"x-request-id": "support-7"}, body=b"{}"
        )
        response = http.handle(request, look_up_member, authenticated=False)
    finally:
        detach()
    assert response.status_code == 500 and response.headers["x-request-id"] == "support-7"
    text = stream.getvalue()
    for secret in (MEMBER_ID, CARD, "input_value"):
        assert secret not in text
    (error,) = [e for e in log_entries(text) if e.get("event") == "http_error"]
    assert error["request_id"] == "support-7" and error["path"] == "pos/v1/trade-records"
    assert error["exception_type"] == "RuntimeError"
    assert error["exception_chain"] == ["RuntimeError", "pydantic_core._pydantic_core.ValidationError"]
    assert "in look_up_member" in error["exception"] and 'File "triggers/http.py"' in error["exception"]
    assert "message not logged" in error["exception"]
    (logged,) = [e for e in log_entries(text) if e.get("event") == "http_request"]
    assert logged["request_id"] == "support-7" and logged["code"] == "INTERNAL_ERROR"


def test_a_failure_over_http_is_logged_by_type_and_request_id_without_its_message(tmp_path):
    """The same over real HTTP: a step of a batch fails (POS_FAULTS, armed once); the partner gets a
    request id, and the host's log has the failure under that id, with no exception message or input."""
    host = start_host(tmp_path, POS_FAULTS="batch.validated:1")
    try:
        partner = make_partner(host)
        sale = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], member_id=MEMBER_ID)
        failed = partner.put("stores", stores_batch(store("S1")), headers={**partner.headers(), "x-request-id": "s-8"})
        assert failed.status_code == 500 and failed.json()["request_id"] == "s-8"
        assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
        assert partner.post("trade-records", trade_batch("S1", DAY, [sale])).status_code == 202
    finally:
        host.stop()
    text = host.log()
    assert "injected fault at" not in text and MEMBER_ID not in text and partner.key not in text
    (error,) = [e for e in log_entries(text) if e.get("event") == "http_error"]
    assert error["request_id"] == "s-8" and error["function"] == "put_stores"
    assert error["exception_type"] == "devhost.fault_injection.InjectedFault"
    assert 'File "ingest/batches.py"' in error["exception"]
