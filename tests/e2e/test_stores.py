"""PUT /stores over real HTTP (spec 4.5)."""

import pytest

from tests.payloads import DELETE, changed, error_paths, problem_of, store, stores_batch

REQUIRED = (
    "store_id",
    "store_name",
    "country_code",
    "currency",
    "time_zone",
    "locale",
    "workday_start",
    "prices_include_tax",
    "status",
    "last_modified_at",
)


def test_accepts_a_registered_store(partner):
    body = stores_batch(store("S1"))
    response = partner.put("stores", body)
    assert response.status_code == 202, response.text
    assert response.json() == {"batch_id": body["batch_id"], "status": "ACCEPTED", "record_count": 1, "warnings": []}


def test_resend_of_the_batch_id_is_already_received_with_the_original_count(partner):
    body = stores_batch(store("S1"))
    assert partner.put("stores", body).status_code == 202
    again = partner.put("stores", body)
    assert again.status_code == 200
    assert again.json()["status"] == "ALREADY_RECEIVED"
    assert again.json()["record_count"] == 1
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["warnings"] == []


def test_every_problem_is_reported_with_its_path(partner):
    body = stores_batch(
        store("S1", country_code="XX", time_zone="Mars/Base", locale="en_US", workday_start="25:00", currency="ABC")
    )
    body = changed(body, "stores.0.last_modified_at", "2026-11-01T09:00:00")
    body = changed(body, "stores.0.store_name", DELETE)
    response = partner.put("stores", body)
    assert response.status_code == 400
    assert response.headers["Content-Type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["code"] == "INVALID_PAYLOAD"
    paths = {error["path"] for error in problem["errors"]}
    assert paths == {
        f"stores[0].{field}"
        for field in (
            "country_code",
            "time_zone",
            "locale",
            "workday_start",
            "currency",
            "last_modified_at",
            "store_name",
        )
    }


def test_the_stored_store_is_the_one_sent(partner):
    sent = store(
        "S1",
        store_name="Main street",
        currency="JPY",
        country_code="JP",
        time_zone="Asia/Tokyo",
        locale="ja-JP",
        workday_start="05:30",
        prices_include_tax=True,
    )
    assert partner.put("stores", stores_batch(sent)).status_code == 202
    stored = partner.host.storage().get_store(partner.partner_id, "S1")
    assert (stored.currency, stored.time_zone, stored.workday_start, stored.prices_include_tax) == (
        "JPY",
        "Asia/Tokyo",
        "05:30",
        True,
    )
    assert stored.document["store_name"] == "Main street"


def test_a_later_change_updates_the_store(partner):
    assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
    newer = store("S1", store_name="Renamed", status="INACTIVE", last_modified_at="2026-11-02T09:00:00-05:00")
    assert partner.put("stores", stores_batch(newer)).status_code == 202
    stored = partner.host.storage().get_store(partner.partner_id, "S1")
    assert stored.document["store_name"] == "Renamed" and stored.document["status"] == "INACTIVE"


def test_an_older_change_arriving_late_does_not_overwrite(partner):
    newer = store("S1", store_name="Newer", last_modified_at="2026-11-02T09:00:00Z")
    older = store("S1", store_name="Older", last_modified_at="2026-11-01T09:00:00Z")
    assert partner.put("stores", stores_batch(newer)).status_code == 202
    assert partner.put("stores", stores_batch(older)).status_code == 202
    assert partner.host.storage().get_store(partner.partner_id, "S1").document["store_name"] == "Newer"


def test_several_stores_in_one_batch(new_partner):
    partner = new_partner(stores=("S1", "S2", "S3"))
    body = stores_batch(store("S1"), store("S2", currency="JPY"), store("S3"))
    response = partner.put("stores", body)
    assert response.status_code == 202, response.text
    assert response.json()["record_count"] == 3
    storage = partner.host.storage()
    assert [storage.get_store(partner.partner_id, s).currency for s in ("S1", "S2", "S3")] == ["USD", "JPY", "USD"]


@pytest.mark.parametrize("field", REQUIRED)
def test_a_missing_required_field_is_reported_at_its_path(partner, field):
    body = changed(stores_batch(store("S1")), f"stores.0.{field}", DELETE)
    assert error_paths(partner.put("stores", body)) == [f"stores[0].{field}"]


@pytest.mark.parametrize(
    "field, value",
    [
        ("store_id", 1),  # a number where a string is required
        ("store_id", ""),
        ("store_id", "S/1"),
        ("store_name", None),
        ("store_name", ""),
        ("prices_include_tax", "false"),  # a string where a boolean is required
        ("prices_include_tax", 0),
        ("status", "active"),  # enums are case-sensitive
        ("status", "CLOSED"),
        ("currency", "usd"),
        ("currency", "US$"),
        ("country_code", "us"),
        ("country_code", "USA"),
        ("time_zone", "EST+5"),
        ("locale", "en_US"),
        ("locale", ""),
        ("workday_start", "4:00"),
        ("workday_start", "24:00"),
        ("workday_start", "04:00:00"),
        ("workday_start", "0\u0664:00"),  # an Arabic-Indic digit four
        ("last_modified_at", "2026-11-01T09:00:00"),  # no UTC offset
        ("last_modified_at", "2026-11-01"),
        ("last_modified_at", 1762000000),
        ("last_modified_at", "yesterday"),
        ("last_modified_at", "0001-01-01T00:00:00+01:00"),  # before year 1 in UTC
        ("last_modified_at", "9999-12-31T23:59:59-01:00"),  # after year 9999 in UTC
    ],
)
def test_an_invalid_value_is_reported_at_its_path(partner, field, value):
    body = changed(stores_batch(store("S1")), f"stores.0.{field}", value)
    response = partner.put("stores", body)
    assert error_paths(response) == [f"stores[0].{field}"], response.text
    assert partner.host.storage().get_store(partner.partner_id, "S1") is None


def test_problems_in_several_stores_are_all_reported(new_partner):
    partner = new_partner(stores=("S1", "S2", "S3"))
    body = stores_batch(
        store("S1", currency="EURO"), store("S2"), store("S3", time_zone="Europe/Atlantis", prices_include_tax="yes")
    )
    response = partner.put("stores", body)
    assert sorted(error_paths(response)) == [
        "stores[0].currency",
        "stores[2].prices_include_tax",
        "stores[2].time_zone",
    ]
    problem = response.json()
    assert all(error["message"] for error in problem["errors"])
    assert "3 problems" in problem["detail"]
    # All or nothing: the valid store S2 was not stored either.
    assert partner.host.storage().get_store(partner.partner_id, "S2") is None


def test_a_duplicate_store_id_is_invalid(new_partner):
    partner = new_partner(stores=("S1", "S2"))
    response = partner.put("stores", stores_batch(store("S1"), store("S2"), store("S1", store_name="Again")))
    assert error_paths(response) == ["stores[2].store_id"]
    assert "stores[0].store_id" in response.json()["errors"][0]["message"]


@pytest.mark.parametrize("batch_id", ["not-a-uuid", "", "1234", "6f9619ff-8b86-d011-b42d-00c04fc964f", 42, None])
def test_a_bad_batch_id_is_invalid(partner, batch_id):
    assert error_paths(partner.put("stores", stores_batch(store("S1"), batch_id=batch_id))) == ["batch_id"]


@pytest.mark.parametrize(
    "body, path",
    [
        ({"stores": [store("S1")]}, "batch_id"),
        ({"batch_id": "6f9619ff-8b86-4011-b42d-00c04fc964ff"}, "stores"),
        ({"batch_id": "6f9619ff-8b86-4011-b42d-00c04fc964ff", "stores": []}, "stores"),
        ({"batch_id": "6f9619ff-8b86-4011-b42d-00c04fc964ff", "stores": store("S1")}, "stores"),
        ({"batch_id": "6f9619ff-8b86-4011-b42d-00c04fc964ff", "stores": ["S1"]}, "stores[0]"),
    ],
)
def test_the_batch_envelope_is_checked(partner, body, path):
    assert error_paths(partner.put("stores", body)) == [path]


def test_unknown_fields_are_ignored_for_forward_compatibility(partner):
    body = stores_batch(store("S1", opening_hours="07:00-22:00"), sent_by="pos 4.2")
    assert partner.put("stores", body).status_code == 202
    assert "opening_hours" not in partner.host.storage().get_store(partner.partner_id, "S1").document


def test_500_stores_are_accepted(new_partner):
    ids = [f"S{number:03d}" for number in range(500)]
    partner = new_partner(stores=ids)
    response = partner.put("stores", stores_batch(*(store(store_id) for store_id in ids)))
    assert response.status_code == 202, response.text
    assert response.json()["record_count"] == 500


def test_501_stores_are_a_batch_too_large(new_partner):
    ids = [f"S{number:03d}" for number in range(501)]
    partner = new_partner(stores=ids)
    problem = problem_of(
        partner.put("stores", stores_batch(*(store(store_id) for store_id in ids))), 400, "BATCH_TOO_LARGE"
    )
    assert "500" in problem["detail"]
    assert partner.host.storage().get_store(partner.partner_id, "S000") is None


def test_an_unregistered_store_is_not_allowed(partner):
    problem = problem_of(partner.put("stores", stores_batch(store("S9"))), 403, "STORE_NOT_ALLOWED")
    assert "S9" in problem["detail"]


def test_one_unregistered_store_refuses_the_whole_batch(partner):
    response = partner.put("stores", stores_batch(store("S1"), store("S9")))
    problem_of(response, 403, "STORE_NOT_ALLOWED")
    assert partner.host.storage().get_store(partner.partner_id, "S1") is None


def test_a_store_unregistered_by_hq_is_no_longer_allowed(partner):
    assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
    assert partner.host.hq_in_process("store", "unregister", partner.partner_id, "S1").returncode == 0
    problem_of(partner.put("stores", stores_batch(store("S1"))), 403, "STORE_NOT_ALLOWED")


def test_a_resend_with_a_different_body_is_ignored_with_a_warning(partner):
    body = stores_batch(store("S1", store_name="First"))
    assert partner.put("stores", body).status_code == 202
    different = changed(body, "stores.0.store_name", "Second")
    again = partner.put("stores", different)
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    answer = again.json()
    assert (answer["status"], answer["record_count"], answer["batch_id"]) == ("ALREADY_RECEIVED", 1, body["batch_id"])
    assert [warning["code"] for warning in answer["warnings"]] == ["RESEND_BODY_IGNORED"]
    assert partner.host.storage().get_store(partner.partner_id, "S1").document["store_name"] == "First"


def test_a_first_acceptance_is_not_marked_as_replayed(partner):
    response = partner.put("stores", stores_batch(store("S1")))
    assert response.status_code == 202
    assert "Idempotent-Replayed" not in response.headers
