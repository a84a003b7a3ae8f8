"""Decision 0067: `hq smoke BASE_URL`, the check the operator guide runs after `azd up`, run
here against the local host over real HTTP (the same app, the SQLite backend)."""

from __future__ import annotations

import uuid

from tests.conftest import make_partner, start_host


def test_smoke_takes_a_throwaway_partners_day_to_matched_and_retires_it(host):
    partner_id = f"smoke-{uuid.uuid4().hex[:8]}"
    result = host.hq("smoke", host.base_url, "--partner", partner_id)
    assert result.returncode == 0, (result.stdout, result.stderr)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("GET /health: 200")
    assert any(line.startswith("POST /daily-close: 202 ACCEPTED") for line in lines), lines
    assert any(line.endswith(": MATCHED") and line.startswith("GET /daily-close/SMOKE-001/") for line in lines)
    assert lines[-1] == "smoke: passed"
    storage = host.storage()
    assert storage.get_partner(partner_id).active is False  # retired
    keys = storage.list_keys(partner_id)
    assert len(keys) == 1 and keys[0].revoked_at is not None
    assert keys[0].key_id in result.stdout and "posk_" not in result.stdout  # the key itself never printed

    # The next run reuses the partner, store and day: a higher version replaces the record, so the close's
    # count of one transaction still matches (exit 0 means MATCHED).
    again = host.hq("smoke", host.base_url, "--partner", partner_id)
    assert again.returncode == 0, (again.stdout, again.stderr)
    assert [key.revoked_at is not None for key in storage.list_keys(partner_id)] == [True, True]
    assert storage.registered_stores(partner_id) == ["SMOKE-001"]


def test_smoke_can_wait_for_the_queue_worker(tmp_path):
    running = start_host(tmp_path, RECONCILE_DELAY_SECONDS="1")
    try:
        result = running.hq("smoke", running.base_url, "--partner", "hq-smoke", "--wait-for-queue", "60")
        assert result.returncode == 0, (result.stdout, result.stderr)
        assert any(line.endswith(": MATCHED") for line in result.stdout.splitlines())
    finally:
        running.stop()


def test_smoke_fails_naming_the_step_and_still_retires_the_partner(tmp_path):
    running = start_host(tmp_path, RECONCILE_DELAY_SECONDS="3600")  # the queue will not reconcile in time
    try:
        other = make_partner(running)
        partner_id = f"smoke-{uuid.uuid4().hex[:8]}"
        result = running.hq("smoke", running.base_url, "--partner", partner_id, "--wait-for-queue", "1")
        assert result.returncode == 1, (result.stdout, result.stderr)
        assert "the day is RECEIVED, not MATCHED" in result.stderr and "hq reconcile show" in result.stderr
        assert "cleanup: key" in result.stdout  # retired all the same
        storage = running.storage()
        assert storage.get_partner(partner_id).active is False
        assert all(key.revoked_at is not None for key in storage.list_keys(partner_id))
        assert other.get("reference/order-types").status_code == 200  # nothing else touched
    finally:
        running.stop()


def test_smoke_stops_at_an_unhealthy_answer(host):
    partner_id = f"smoke-{uuid.uuid4().hex[:8]}"
    result = host.hq("smoke", host.base_url + "/nowhere", "--partner", partner_id)
    assert result.returncode == 1 and "GET /health answered 404" in result.stderr, result.stderr
    assert host.storage().get_partner(partner_id) is None


def test_smoke_says_when_the_service_cannot_be_reached(host):
    partner_id = f"smoke-{uuid.uuid4().hex[:8]}"
    result = host.hq("smoke", "http://127.0.0.1:9/pos/v1", "--partner", partner_id)
    assert result.returncode == 1 and "cannot reach http://127.0.0.1:9/pos/v1/health" in result.stderr
    assert host.storage().get_partner(partner_id) is None  # health first: nothing created
