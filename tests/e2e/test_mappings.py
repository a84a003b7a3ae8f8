"""PUT and GET /mappings/transaction-types over real HTTP (spec 4.1, 4.2)."""

import datetime as dt

import pytest

from tests.payloads import DELETE, batch_id, changed, error_paths, mapping_batch, problem_of

PATH = "mappings/transaction-types"
STANDARD_CODES = ("SALE", "REFUND", "VOID", "RETURN", "EXCHANGE", "NO_SALE")


def utc_time(text: str) -> dt.datetime:
    assert text.endswith("Z"), text  # HQ answers in UTC
    return dt.datetime.fromisoformat(text[:-1] + "+00:00")


def test_before_any_upload_the_mapping_is_empty(partner):
    response = partner.get(PATH)
    assert response.status_code == 200
    assert response.headers["Content-Type"].split(";")[0] == "application/json"
    assert response.json() == {"partner_id": partner.partner_id, "batch_id": None, "updated_at": None, "mappings": []}


def test_an_upload_is_the_mapping_in_effect(partner):
    body = mapping_batch(("01", "SALE"), ("02", "REFUND"), ("99", "NO_SALE"))
    before = dt.datetime.now(dt.UTC)
    response = partner.put(PATH, body)
    assert response.status_code == 202, response.text
    assert response.json() == {"batch_id": body["batch_id"], "status": "ACCEPTED", "record_count": 3, "warnings": []}
    current = partner.get(PATH).json()
    assert current["partner_id"] == partner.partner_id
    assert current["batch_id"] == body["batch_id"]
    assert current["mappings"] == body["mappings"]
    updated_at = utc_time(current["updated_at"])
    assert before - dt.timedelta(seconds=5) <= updated_at <= dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5)


def test_source_name_is_optional(partner):
    body = changed(mapping_batch(("01", "SALE")), "mappings.0.source_name", DELETE)
    assert partner.put(PATH, body).status_code == 202
    assert partner.get(PATH).json()["mappings"] == [{"source_code": "01", "source_name": None, "standard_code": "SALE"}]


def test_every_standard_code_can_be_mapped(partner):
    body = mapping_batch(*((f"C{number}", code) for number, code in enumerate(STANDARD_CODES)))
    assert partner.put(PATH, body).status_code == 202
    assert [entry["standard_code"] for entry in partner.get(PATH).json()["mappings"]] == list(STANDARD_CODES)


def test_several_source_codes_may_map_to_one_standard_code(partner):
    assert partner.put(PATH, mapping_batch(("01", "SALE"), ("11", "SALE"))).status_code == 202


def test_an_upload_replaces_the_whole_mapping(partner):
    first = mapping_batch(("01", "SALE"), ("02", "REFUND"), ("03", "VOID"))
    second = mapping_batch(("01", "SALE"), ("04", "EXCHANGE"))
    assert partner.put(PATH, first).status_code == 202
    assert partner.put(PATH, second).status_code == 202
    current = partner.get(PATH).json()
    assert current["batch_id"] == second["batch_id"]
    assert [entry["source_code"] for entry in current["mappings"]] == ["01", "04"]


def test_a_new_upload_moves_updated_at(partner):
    assert partner.put(PATH, mapping_batch(("01", "SALE"))).status_code == 202
    first = utc_time(partner.get(PATH).json()["updated_at"])
    assert partner.put(PATH, mapping_batch(("01", "REFUND"))).status_code == 202
    assert utc_time(partner.get(PATH).json()["updated_at"]) > first


def test_a_resend_is_already_received_with_the_original_count(partner):
    body = mapping_batch(("01", "SALE"), ("02", "REFUND"))
    assert partner.put(PATH, body).status_code == 202
    again = partner.put(PATH, body)
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == {
        "batch_id": body["batch_id"],
        "status": "ALREADY_RECEIVED",
        "record_count": 2,
        "warnings": [],
    }


def test_a_resend_with_a_different_body_leaves_the_mapping_unchanged(partner):
    body = mapping_batch(("01", "SALE"), ("02", "REFUND"))
    assert partner.put(PATH, body).status_code == 202
    in_effect = partner.get(PATH).json()
    different = mapping_batch(("01", "VOID"), batch_id=body["batch_id"])
    again = partner.put(PATH, different)
    assert again.status_code == 200
    answer = again.json()
    assert (answer["status"], answer["record_count"]) == ("ALREADY_RECEIVED", 2)
    assert [warning["code"] for warning in answer["warnings"]] == ["RESEND_BODY_IGNORED"]
    assert all(warning["message"] and warning["path"] for warning in answer["warnings"])
    assert partner.get(PATH).json() == in_effect


def test_a_late_resend_of_an_older_upload_does_not_bring_it_back(partner):
    old = mapping_batch(("01", "SALE"), ("02", "REFUND"))
    new = mapping_batch(("01", "SALE"))
    assert partner.put(PATH, old).status_code == 202
    assert partner.put(PATH, new).status_code == 202
    assert partner.put(PATH, old).status_code == 200
    current = partner.get(PATH).json()
    assert (current["batch_id"], len(current["mappings"])) == (new["batch_id"], 1)


def test_an_unknown_standard_code_is_reported_with_its_path(partner):
    body = mapping_batch(("01", "SALE"), ("02", "GIFT"), ("03", "sale"))
    response = partner.put(PATH, body)
    assert error_paths(response, 400, "UNKNOWN_STANDARD_CODE") == [
        "mappings[1].standard_code",
        "mappings[2].standard_code",
    ]
    assert partner.get(PATH).json()["mappings"] == []


def test_a_refused_upload_keeps_the_mapping_in_effect(partner):
    good = mapping_batch(("01", "SALE"))
    assert partner.put(PATH, good).status_code == 202
    problem_of(partner.put(PATH, mapping_batch(("01", "BOGUS"))), 400, "UNKNOWN_STANDARD_CODE")
    problem_of(partner.put(PATH, mapping_batch(("01", "SALE"), ("01", "REFUND"))), 400, "INVALID_PAYLOAD")
    assert partner.get(PATH).json()["batch_id"] == good["batch_id"]


def test_a_duplicate_source_code_is_invalid(partner):
    response = partner.put(PATH, mapping_batch(("01", "SALE"), ("02", "REFUND"), ("01", "VOID")))
    assert error_paths(response) == ["mappings[2].source_code"]
    assert "mappings[0].source_code" in response.json()["errors"][0]["message"]


def test_an_empty_mapping_is_invalid(partner):
    assert error_paths(partner.put(PATH, {"batch_id": batch_id(), "mappings": []})) == ["mappings"]


@pytest.mark.parametrize(
    "field, value",
    [
        ("source_code", DELETE),
        ("source_code", 1),  # a number where a string is required
        ("source_code", ""),
        ("standard_code", DELETE),
        ("standard_code", None),
        ("source_name", 5),
        ("source_name", "a\x00b"),  # "" is absent (decision 0018)
    ],
)
def test_an_invalid_entry_is_reported_at_its_path(partner, field, value):
    body = changed(mapping_batch(("01", "SALE"), ("02", "REFUND")), f"mappings.1.{field}", value)
    assert error_paths(partner.put(PATH, body)) == [f"mappings[1].{field}"]


def test_several_invalid_entries_are_all_reported(partner):
    body = mapping_batch(("01", "SALE"), ("02", "REFUND"), ("03", "VOID"))
    body = changed(changed(body, "mappings.0.source_code", 1), "mappings.2.standard_code", DELETE)
    body = changed(body, "batch_id", "batch-1")
    assert sorted(error_paths(partner.put(PATH, body))) == [
        "batch_id",
        "mappings[0].source_code",
        "mappings[2].standard_code",
    ]


def test_a_mapping_is_per_partner(new_partner):
    first, second = new_partner(), new_partner()
    body = mapping_batch(("01", "SALE"))
    assert first.put(PATH, body).status_code == 202
    assert second.get(PATH).json() == {
        "partner_id": second.partner_id,
        "batch_id": None,
        "updated_at": None,
        "mappings": [],
    }
    assert first.get(PATH).json()["partner_id"] == first.partner_id


def test_the_same_batch_id_under_another_partner_is_a_new_batch(new_partner):
    first, second = new_partner(), new_partner()
    body = mapping_batch(("01", "SALE"))
    assert first.put(PATH, body).status_code == 202
    theirs = changed(body, "mappings.0.standard_code", "REFUND")
    response = second.put(PATH, theirs)
    assert response.status_code == 202
    assert response.json()["status"] == "ACCEPTED"
    assert second.get(PATH).json()["mappings"][0]["standard_code"] == "REFUND"
    assert first.get(PATH).json()["mappings"][0]["standard_code"] == "SALE"
