"""The local host (`python -m devhost`): concurrency, routing, demo partner, local settings."""

import dataclasses
import json
import threading

import pytest
import requests

from core.settings import Settings, load_local_settings
from tests.concurrency import all_at_once
from tests.conftest import start_host
from tests.payloads import mapping_batch, problem_of, store, stores_batch

# --- concurrency --------------------------------------------------------------------------------


def test_twenty_concurrent_writes_all_succeed(new_partner):
    store_ids = [f"S{number:02d}" for number in range(20)]
    partner = new_partner(stores=store_ids)
    statuses = all_at_once(20, lambda i: partner.put("stores", stores_batch(store(store_ids[i]))).status_code)
    assert statuses == [202] * 20
    storage = partner.host.storage()
    assert all(storage.get_store(partner.partner_id, store_id) is not None for store_id in store_ids)


def test_concurrent_reads_and_writes_of_several_partners(new_partner):
    partners = [new_partner() for _ in range(4)]

    def work(index):
        partner = partners[index % 4]
        if index % 2:
            return partner.get("mappings/transaction-types").status_code
        return partner.put("mappings/transaction-types", mapping_batch(("01", "SALE"))).status_code

    assert sorted(all_at_once(20, work)) == [200] * 10 + [202] * 10


def test_the_same_batch_sent_concurrently_is_accepted_once(partner):
    body = stores_batch(store("S1"))
    responses = all_at_once(20, lambda i: partner.put("stores", body))
    assert sorted(response.status_code for response in responses) == [200] * 19 + [202]
    for response in responses:
        answer = response.json()
        assert answer["record_count"] == 1 and answer["warnings"] == []
        assert answer["status"] == ("ACCEPTED" if response.status_code == 202 else "ALREADY_RECEIVED")


def test_a_connection_stays_usable_after_an_error(partner):
    with requests.Session() as session:
        session.headers.update(partner.headers())
        refused = session.put(
            partner.host.url("stores"),
            data=b"x" * (5 * 1024 * 1024 + 1),
            headers={"Content-Type": "application/json"},
            timeout=60,
        )
        problem_of(refused, 413, "PAYLOAD_TOO_LARGE")
        assert (
            session.put(
                partner.host.url("stores"), data=b"{", headers={"Content-Type": "application/json"}, timeout=10
            ).status_code
            == 400
        )
        assert session.get(partner.host.url("mappings/transaction-types"), timeout=10).status_code == 200


# --- routing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "/pos/v1/nothing",
        "/pos/v1/stores/S1",
        "/pos/v1/reference",
        "/pos/v1",
        "/pos/v2/stores",
        "/api/stores",
        "/",
        "/pos/v1/mappings",
    ],
)
def test_an_unknown_route_is_a_not_found_problem(host, path):
    base = host.base_url.removesuffix("/pos/v1")
    problem_of(requests.get(base + path, timeout=10), 404, "NOT_FOUND")


@pytest.mark.parametrize(
    "method, path",
    [
        ("DELETE", "stores"),
        ("POST", "stores"),
        ("GET", "stores"),
        ("GET", "products"),
        ("PATCH", "products"),
        ("POST", "health"),
        ("DELETE", "mappings/transaction-types"),
        ("PUT", "reference/order-types"),
    ],
)
def test_a_method_a_route_does_not_serve_is_a_405_with_allow(partner, method, path):
    # The app's own 405 functions (decision 0101), which the local host routes as the Functions host does.
    response = requests.request(method, partner.host.url(path), headers=partner.headers(), timeout=10)
    problem = problem_of(response, 405, "METHOD_NOT_ALLOWED")
    assert method in problem["detail"] and response.headers["Allow"] in problem["detail"]


# --- demo partner -------------------------------------------------------------------------------


def test_a_fresh_host_creates_the_demo_partner_but_prints_no_key(tmp_path):
    demo_host = start_host(tmp_path, POS_CREATE_DEMO_PARTNER="true")
    try:
        log = demo_host.log()
        storage = demo_host.storage()
        assert storage.get_partner("demo").active
        assert storage.registered_stores("demo") == ["DEMO-001"]
        assert storage.list_keys("demo") == []  # only `hq key issue` makes a key
        assert "hq key issue demo" in log
        assert "posk_" not in log
    finally:
        demo_host.stop()
    again = start_host(tmp_path, POS_CREATE_DEMO_PARTNER="true")  # same data directory
    try:
        assert "demo partner" not in again.log()
        assert [partner.partner_id for partner in again.storage().list_partners()] == ["demo"]
    finally:
        again.stop()


def test_no_demo_partner_when_it_is_turned_off(host):
    assert host.env["POS_CREATE_DEMO_PARTNER"] == "false"
    assert host.storage().get_partner("demo") is None
    assert "demo partner" not in host.log()


# --- local.settings.json ------------------------------------------------------------------------


def unset(monkeypatch, *names: str) -> None:
    """Remove environment variables for this test, restoring them (or their absence) afterwards."""
    for name in names:
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)


def test_local_settings_values_are_read_and_the_environment_wins(tmp_path, monkeypatch):
    path = tmp_path / "local.settings.json"
    path.write_text(
        json.dumps(
            {
                "IsEncrypted": False,
                "Values": {
                    "RATE_LIMIT_PER_MINUTE": 7,
                    "POS_BACKEND": "sqlite",
                    "POS_DATA_DIR": "from-file",
                    "POS_CREATE_DEMO_PARTNER": "false",
                    "LOG_LEVEL": "DEBUG",
                },
            }
        )
    )
    unset(
        monkeypatch,
        "RATE_LIMIT_PER_MINUTE",
        "POS_BACKEND",
        "POS_CREATE_DEMO_PARTNER",
        "LOG_LEVEL",
        "RECONCILE_SWEEP_SCHEDULE",
    )
    monkeypatch.setenv("POS_DATA_DIR", str(tmp_path / "from-env"))
    load_local_settings(path)
    settings = Settings.from_env()
    assert settings.rate_limit_per_minute == 7  # a JSON number in the file is read too
    assert settings.create_demo_partner is False
    assert settings.log_level == "DEBUG"
    assert settings.data_dir == tmp_path / "from-env"


def test_without_local_settings_the_defaults_apply(tmp_path, monkeypatch):
    unset(
        monkeypatch,
        "RATE_LIMIT_PER_MINUTE",
        "POS_BACKEND",
        "POS_CREATE_DEMO_PARTNER",
        "POS_DATA_DIR",
        "RECONCILE_SWEEP_SCHEDULE",
    )
    load_local_settings(tmp_path / "missing.json")
    monkeypatch.chdir(tmp_path)
    settings = Settings.from_env()
    assert (settings.backend, settings.rate_limit_per_minute, settings.create_demo_partner) == ("sqlite", 600, True)
    assert settings.data_dir == tmp_path / ".data"


def test_a_setting_that_is_not_a_number_is_named_in_the_error(monkeypatch):
    monkeypatch.setenv("RATE_LIMIT_PER_MINUTE", "lots")
    with pytest.raises(ValueError, match="RATE_LIMIT_PER_MINUTE"):
        Settings.from_env()


# --- the body on its way in -----------------------------------------------------------------------


def test_a_body_reaches_the_function_as_the_one_object_the_host_read(monkeypatch):
    """A 5 MB body costs its size once in the host: read in one piece (Content-Length), then handed to
    func.HttpRequest and through triggers/http.py's json_body without a copy (decision 0005)."""
    import http.client
    import re

    import azure.functions as func

    from devhost import server as devserver
    from devhost.functions import FunctionTable, HttpFunction
    from triggers.http import Call

    read: list[bytes] = []
    original = devserver._Handler._read_body
    monkeypatch.setattr(
        devserver._Handler, "_read_body", lambda self, headers: read.append(original(self, headers)) or read[-1]
    )
    seen: dict = {}

    def handler(req: func.HttpRequest) -> func.HttpResponse:
        seen["same"] = req.get_body() is read[-1] and Call(req, None, "r").json_body() is read[-1]
        return func.HttpResponse(b"{}", status_code=202, mimetype="application/json")

    table = FunctionTable(http=[HttpFunction("take", frozenset({"POST"}), "take", re.compile("take"), 1, handler)])
    server = devserver.FunctionsHttpServer(("127.0.0.1", 0), table, "pos/v1")
    serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    serving.start()
    try:
        body = b'{"pad": "' + b"x" * (5 * 1024 * 1024 - 20) + b'"}'
        connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
        connection.request("POST", "/pos/v1/take", body, {"Content-Type": "application/json"})
        assert connection.getresponse().status == 202
        connection.close()
    finally:
        server.shutdown()
        server.server_close()
    assert len(read) == 1 and read[0] == body
    assert seen["same"] is True


def test_the_banner_says_where_the_data_is_and_how_long_reconciliation_waits(host):
    log = host.log()
    assert f"backend sqlite, data in {host.data_dir}" in log
    assert "Daily closes are reconciled 1 s after they arrive (RECONCILE_DELAY_SECONDS)" in log
    assert "hq reconcile run PARTNER_ID STORE_ID DATE" in log


def test_with_the_emulators_the_banner_does_not_claim_the_data_is_in_the_data_directory():
    from devhost.__main__ import _where_data_is

    settings = Settings.from_env()
    azure = dataclasses.replace(settings, backend="azure", cosmos_endpoint="https://127.0.0.1:8081/")
    text = _where_data_is(azure, emulators=True)
    assert "Cosmos DB https://127.0.0.1:8081/" in text and "memory" in text
    assert ".data" not in text and str(settings.data_dir) not in text
