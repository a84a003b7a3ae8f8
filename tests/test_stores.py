"""PUT /stores over real HTTP (spec 4.5)."""

from tests.payloads import DELETE, changed, store, stores_batch


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
    body = stores_batch(store("S1", country_code="XX", time_zone="Mars/Base", locale="en_US",
                              workday_start="25:00", currency="ABC"))
    body = changed(body, "stores.0.last_modified_at", "2026-11-01T09:00:00")
    body = changed(body, "stores.0.store_name", DELETE)
    response = partner.put("stores", body)
    assert response.status_code == 400
    assert response.headers["Content-Type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["code"] == "INVALID_PAYLOAD"
    paths = {error["path"] for error in problem["errors"]}
    assert paths == {f"stores[0].{field}" for field in
                     ("country_code", "time_zone", "locale", "workday_start", "currency", "last_modified_at",
                      "store_name")}
