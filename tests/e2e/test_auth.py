"""API keys, partner status and partner isolation over real HTTP (spec 5)."""

import pytest
import requests

from tests.conftest import issue_key
from tests.payloads import mapping_batch, problem_of, product, products_batch, store, stores_batch

# Every authenticated endpoint of the master-data part, with a valid body where it takes one.
ENDPOINTS = [
    ("GET", "mappings/transaction-types", None),
    ("PUT", "mappings/transaction-types", mapping_batch),
    ("PUT", "stores", stores_batch),
    ("PUT", "products", products_batch),
    ("GET", "reference/transaction-types", None),
    ("GET", "reference/order-types", None),
]


def call(partner, method: str, path: str, make_body, key: str | None) -> requests.Response:
    headers = {} if key is None else {"x-functions-key": key}
    body = None if make_body is None else make_body()
    return requests.request(method, partner.host.url(path), json=body, headers=headers, timeout=30)


def ids(endpoint) -> str:
    return f"{endpoint[0]} {endpoint[1]}"


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=ids)
def test_the_partners_key_opens_every_endpoint(partner, endpoint):
    assert call(partner, *endpoint, partner.key).status_code in (200, 202)


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=ids)
@pytest.mark.parametrize(
    "key", [None, "", "posk_not-a-key-anyone-was-given", "x" * 5000], ids=["missing", "empty", "unknown", "long"]
)
def test_without_a_valid_key_every_endpoint_is_unauthorized(partner, endpoint, key):
    problem_of(call(partner, *endpoint, key), 401, "UNAUTHORIZED")


def test_a_refused_write_stores_nothing(partner):
    body = stores_batch(store("S1"))
    problem_of(partner.put("stores", body, headers={"x-functions-key": "posk_wrong"}), 401, "UNAUTHORIZED")
    assert partner.host.storage().get_store(partner.partner_id, "S1") is None
    assert partner.put("stores", body).status_code == 202  # the batch_id was not used up


def test_missing_unknown_and_revoked_keys_get_the_same_answer(partner):
    revoked_id, revoked = issue_key(partner.host, partner.partner_id)
    assert partner.host.hq_in_process("key", "revoke", partner.partner_id, revoked_id).returncode == 0
    answers = []
    for key in (None, "posk_unknown", revoked):
        problem = problem_of(call(partner, "GET", "mappings/transaction-types", None, key), 401, "UNAUTHORIZED")
        answers.append({name: value for name, value in problem.items() if name != "request_id"})
    assert answers[0] == answers[1] == answers[2]


def test_the_key_is_read_from_the_header_only(partner):
    url = partner.host.url("mappings/transaction-types")
    problem_of(requests.get(url, params={"code": partner.key}, timeout=10), 401, "UNAUTHORIZED")
    problem_of(requests.get(url, headers={"Authorization": f"Bearer {partner.key}"}, timeout=10), 401, "UNAUTHORIZED")
    # Header names are case-insensitive in HTTP.
    assert requests.get(url, headers={"X-Functions-Key": partner.key}, timeout=10).status_code == 200


def test_health_needs_no_key(host):
    response = requests.get(host.url("health"), timeout=10)
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert requests.get(host.url("health"), headers={"x-functions-key": "posk_wrong"}, timeout=10).status_code == 200


def test_a_key_identifies_its_partner(new_partner):
    first, second = new_partner(), new_partner()
    assert first.get("mappings/transaction-types").json()["partner_id"] == first.partner_id
    assert second.get("mappings/transaction-types").json()["partner_id"] == second.partner_id


# --- rotation -----------------------------------------------------------------------------------


def test_a_partner_may_have_several_active_keys(partner):
    _, second = issue_key(partner.host, partner.partner_id)
    _, third = issue_key(partner.host, partner.partner_id)
    assert len({partner.key, second, third}) == 3
    for key in (partner.key, second, third):
        response = partner.get("mappings/transaction-types", headers=partner.headers(key))
        assert response.status_code == 200
        assert response.json()["partner_id"] == partner.partner_id


def test_rotation_issue_a_second_key_then_revoke_the_first(partner):
    _, second = issue_key(partner.host, partner.partner_id)
    revoked = partner.host.hq_in_process("key", "revoke", partner.partner_id, partner.key_id)
    assert revoked.returncode == 0, revoked.stderr
    problem_of(partner.get("mappings/transaction-types"), 401, "UNAUTHORIZED")
    problem_of(partner.put("stores", stores_batch(store("S1"))), 401, "UNAUTHORIZED")
    assert partner.get("mappings/transaction-types", headers=partner.headers(second)).status_code == 200
    assert partner.put("stores", stores_batch(store("S1")), headers=partner.headers(second)).status_code == 202


def test_revoking_one_partners_key_leaves_other_partners_alone(new_partner):
    first, second = new_partner(), new_partner()
    assert first.host.hq_in_process("key", "revoke", first.partner_id, first.key_id).returncode == 0
    problem_of(first.get("mappings/transaction-types"), 401, "UNAUTHORIZED")
    assert second.get("mappings/transaction-types").status_code == 200


def test_keys_never_reach_the_host_log(new_partner):
    partner = new_partner()
    _, second = issue_key(partner.host, partner.partner_id)
    wrong = "posk_" + "w" * 43
    assert partner.put("stores", stores_batch(store("S1"))).status_code == 202
    assert partner.put("products", products_batch([product(version="1")])).status_code == 400
    assert partner.get("reference/nothing", headers=partner.headers(second)).status_code == 404
    assert partner.get("mappings/transaction-types", headers=partner.headers(wrong)).status_code == 401
    log = partner.host.log()
    assert partner.partner_id in log  # the requests were logged, by partner
    for key in (partner.key, second, wrong):
        assert key not in log
        assert key[5:25] not in log  # nor a part of it


# --- partner status -----------------------------------------------------------------------------


def test_an_inactive_partner_is_refused_until_activated_again(partner):
    hq = partner.host.hq_in_process
    assert hq("partner", "deactivate", partner.partner_id).returncode == 0
    for method, path, make_body in ENDPOINTS:
        problem_of(call(partner, method, path, make_body, partner.key), 403, "PARTNER_INACTIVE")
    assert partner.host.storage().get_mapping(partner.partner_id).batch_id is None  # nothing was stored
    assert hq("partner", "activate", partner.partner_id).returncode == 0
    for endpoint in ENDPOINTS:
        assert call(partner, *endpoint, partner.key).status_code in (200, 202)


def test_an_inactive_partner_still_needs_a_valid_key(partner):
    assert partner.host.hq_in_process("partner", "deactivate", partner.partner_id).returncode == 0
    problem_of(partner.get("mappings/transaction-types", headers=partner.headers("posk_unknown")), 401, "UNAUTHORIZED")


def test_deactivating_one_partner_leaves_other_partners_alone(new_partner):
    first, second = new_partner(), new_partner()
    assert first.host.hq_in_process("partner", "deactivate", first.partner_id).returncode == 0
    problem_of(first.get("reference/order-types"), 403, "PARTNER_INACTIVE")
    assert second.get("reference/order-types").status_code == 200


# --- isolation between partners -----------------------------------------------------------------


def test_the_same_store_code_under_two_partners_is_two_stores(new_partner):
    first, second = new_partner(stores=("S1",)), new_partner(stores=("S1",))
    assert first.put("stores", stores_batch(store("S1", currency="USD", store_name="First's"))).status_code == 202
    assert second.put("stores", stores_batch(store("S1", currency="JPY", store_name="Second's"))).status_code == 202
    storage = first.host.storage()
    assert storage.get_store(first.partner_id, "S1").document["store_name"] == "First's"
    assert storage.get_store(second.partner_id, "S1").document["store_name"] == "Second's"
    assert storage.get_store(second.partner_id, "S1").currency == "JPY"


def test_a_partner_cannot_push_another_partners_store(new_partner):
    owner, other = new_partner(stores=("S-OWN",)), new_partner(stores=("S-OTHER",))
    assert owner.put("stores", stores_batch(store("S-OWN"))).status_code == 202
    problem_of(other.put("stores", stores_batch(store("S-OWN", store_name="Taken over"))), 403, "STORE_NOT_ALLOWED")
    assert other.host.storage().get_store(owner.partner_id, "S-OWN").document["store_name"] == "Store S-OWN"
    assert other.host.storage().get_store(other.partner_id, "S-OWN") is None


def test_batch_ids_are_per_partner(new_partner):
    first, second = new_partner(), new_partner()
    body = stores_batch(store("S1", store_name="First's"))
    assert first.put("stores", body).status_code == 202
    theirs = stores_batch(store("S1", store_name="Second's"), batch_id=body["batch_id"])
    response = second.put("stores", theirs)
    assert response.status_code == 202
    assert response.json()["status"] == "ACCEPTED"
    assert first.host.storage().get_store(second.partner_id, "S1").document["store_name"] == "Second's"
    products = products_batch([product()], batch_id=body["batch_id"])
    assert second.put("products", products).json()["warnings"][0]["code"] == "BATCH_ID_REUSED"
