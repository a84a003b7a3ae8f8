"""The HTTP edge of every write: bodies, media types, size limit, problem documents, request ids,
rate limit (spec 1, 7, 8)."""

import json
import re
import time
import uuid

import pytest
import requests

from tests.conftest import make_partner, start_host
from tests.payloads import error_paths, mapping_batch, problem_of, products_batch, store, stores_batch

MAX_BODY = 5 * 1024 * 1024
WRITES = [("stores", stores_batch), ("products", products_batch), ("mappings/transaction-types", mapping_batch)]


def raw_put(partner, path: str, data, content_type: str | None = "application/json", **headers) -> requests.Response:
    headers = {**partner.headers(), **headers}
    if content_type is not None:
        headers["Content-Type"] = content_type
    return requests.put(partner.host.url(path), data=data, headers=headers, timeout=60)


def padded_to(body: dict, size: int) -> bytes:
    """`body` as JSON of exactly `size` bytes, grown by a field the service ignores."""
    body = {**body, "padding": ""}
    bare = len(json.dumps(body, separators=(",", ":")).encode())
    body["padding"] = "x" * (size - bare)
    encoded = json.dumps(body, separators=(",", ":")).encode()
    assert len(encoded) == size
    return encoded


@pytest.mark.parametrize("path, make_body", WRITES)
@pytest.mark.parametrize(
    "data",
    [b"{", b'{"batch_id": }', b"not json", b"\xff\xfe{}", b'{"batch_id": "a"}x'],
    ids=["unclosed", "no-value", "text", "not-utf8", "trailing"],
)
def test_malformed_json_is_invalid(partner, path, make_body, data):
    assert error_paths(raw_put(partner, path, data)) == ["$"]


@pytest.mark.parametrize("path, make_body", WRITES)
@pytest.mark.parametrize("data", [b"[]", b'"text"', b"42", b"null", b"true", b'[{"batch_id": "x"}]'])
def test_a_body_that_is_not_an_object_is_invalid(partner, path, make_body, data):
    assert error_paths(raw_put(partner, path, data)) == ["$"]


@pytest.mark.parametrize("path, make_body", WRITES)
def test_an_empty_body_is_invalid(partner, path, make_body):
    response = raw_put(partner, path, b"")
    assert error_paths(response) == ["$"]
    assert "empty" in response.json()["errors"][0]["message"]


@pytest.mark.parametrize("path, make_body", WRITES)
@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",
        "application/x-www-form-urlencoded",
        "text/json",
        "application/jsonx",
        "multipart/form-data; boundary=x",
    ],
)
def test_a_body_not_sent_as_application_json_is_invalid(partner, path, make_body, content_type):
    body = make_body()
    response = raw_put(partner, path, json.dumps(body).encode(), content_type)
    assert error_paths(response) == ["$"]
    assert "application/json" in response.json()["detail"]
    # Nothing was stored: the same batch sent properly is a first acceptance.
    assert partner.put(path, body).status_code == 202


@pytest.mark.parametrize(
    "content_type", ["application/json; charset=utf-8", "Application/JSON", "application/json ;charset=UTF-8"]
)
def test_application_json_with_parameters_or_other_case_is_accepted(partner, content_type):
    response = raw_put(partner, "stores", json.dumps(stores_batch(store("S1"))).encode(), content_type)
    assert response.status_code == 202, response.text


def test_non_ascii_text_arrives_intact(partner):
    body = stores_batch(store("S1", store_name="台北車站店 – Café ☕"))
    assert raw_put(partner, "stores", json.dumps(body, ensure_ascii=False).encode("utf-8")).status_code == 202
    assert partner.host.storage().get_store(partner.partner_id, "S1").document["store_name"] == "台北車站店 – Café ☕"


# --- body size ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path, make_body", WRITES)
def test_a_body_just_over_5_mib_is_too_large(partner, path, make_body):
    body = make_body()
    response = raw_put(partner, path, padded_to(body, MAX_BODY + 1))
    problem = problem_of(response, 413, "PAYLOAD_TOO_LARGE")
    assert str(MAX_BODY) in problem["detail"]
    assert partner.put(path, body).status_code == 202  # nothing of it was stored


@pytest.mark.parametrize("path, make_body", WRITES)
def test_a_body_of_exactly_5_mib_is_accepted(partner, path, make_body):
    body = make_body()
    response = raw_put(partner, path, padded_to(body, MAX_BODY))
    assert response.status_code == 202, response.text[:500]
    assert response.json()["batch_id"] == body["batch_id"]


def test_a_chunked_body_just_over_5_mib_is_too_large(partner):
    data = padded_to(stores_batch(store("S1")), MAX_BODY + 1)
    chunks = (data[start : start + 65536] for start in range(0, len(data), 65536))  # no Content-Length
    response = requests.put(
        partner.host.url("stores"),
        data=chunks,
        timeout=60,
        headers={**partner.headers(), "Content-Type": "application/json"},
    )
    problem_of(response, 413, "PAYLOAD_TOO_LARGE")


def test_a_chunked_body_within_the_limit_is_accepted(partner):
    data = json.dumps(stores_batch(store("S1"))).encode()
    response = requests.put(
        partner.host.url("stores"),
        data=iter([data[:10], data[10:]]),
        timeout=60,
        headers={**partner.headers(), "Content-Type": "application/json"},
    )
    assert response.status_code == 202, response.text


def test_a_large_body_without_a_key_is_unauthorized_not_too_large(partner):
    response = raw_put(partner, "stores", padded_to(stores_batch(), MAX_BODY + 1), **{"x-functions-key": ""})
    problem_of(response, 401, "UNAUTHORIZED")


# --- problem documents and request ids ----------------------------------------------------------


def test_a_problem_document_carries_the_request_id(partner):
    response = raw_put(partner, "stores", b"{")
    problem = problem_of(response, 400, "INVALID_PAYLOAD")
    assert problem["type"].startswith("https://") or problem["type"] == "about:blank"
    assert problem["title"] == "Bad Request"
    assert problem["request_id"] == response.headers["x-request-id"]


def test_a_plain_request_id_of_the_caller_is_kept(partner):
    response = partner.get("mappings/transaction-types", headers={**partner.headers(), "x-request-id": "pos-42.a_b"})
    assert response.headers["x-request-id"] == "pos-42.a_b"


@pytest.mark.parametrize("given", ["has space", "x" * 65, "new\tline", "<script>"])
def test_an_unsafe_request_id_is_replaced(partner, given):
    response = raw_put(partner, "stores", b"[]", **{"x-request-id": given})
    replaced = response.headers["x-request-id"]
    assert replaced != given and replaced.isalnum()
    assert response.json()["request_id"] == replaced
    # The host's log is shared with other tests (a hostile path may hold "<script>"): look at request ids.
    logged = _logged_until(partner, replaced)
    assert [entry["path"] for entry in logged if entry.get("request_id") == replaced] == ["pos/v1/stores"]
    assert not any(given in str(entry.get("request_id")) for entry in logged)


def _logged_until(partner, request_id: str, timeout: float = 5.0) -> list[dict]:
    """The host's complete JSON log lines, once the request's own line is among them: the line is written
    as the answer leaves, so a read right after the answer may end in a line still being written."""
    deadline = time.monotonic() + timeout
    while True:
        complete = partner.host.log().rsplit("\n", 1)[0].split("\n")
        logged = [json.loads(line) for line in complete if line.startswith("{")]
        if any(entry.get("request_id") == request_id for entry in logged) or time.monotonic() > deadline:
            return logged
        time.sleep(0.05)


def test_problem_details_do_not_echo_what_was_sent(partner):
    secret = "4111111111111111"
    body = stores_batch(store("S1", store_name=secret, currency=secret))
    response = partner.put("stores", body)
    problem_of(response, 400, "INVALID_PAYLOAD")
    assert secret not in response.text


# --- rate limit ---------------------------------------------------------------------------------


def test_too_many_requests_are_rate_limited_per_partner(tmp_path):
    limited_host = start_host(tmp_path, RATE_LIMIT_PER_MINUTE="3")
    try:
        busy, calm = make_partner(limited_host), make_partner(limited_host)
        # A one-minute window may turn over during the loop: with 7 requests one window still sees 4.
        statuses = [busy.get("reference/order-types").status_code for _ in range(7)]
        assert statuses[0] == 200 and 429 in statuses, statuses
        assert 3 <= statuses.index(429) <= 6, statuses
        assert set(statuses) == {200, 429}
        limited = busy.put("stores", stores_batch(store("S1")))
        if limited.status_code != 429:  # the window turned over just now; use up the new one
            for _ in range(4):
                limited = busy.put("stores", stores_batch(store("S1")))
        problem = problem_of(limited, 429, "RATE_LIMITED")
        assert 1 <= int(limited.headers["Retry-After"]) <= 60
        assert limited.headers["Retry-After"] in problem["detail"]
        assert calm.get("reference/order-types").status_code == 200  # the limit is per partner
        assert requests.get(limited_host.url("health"), timeout=10).status_code == 200  # no key, no limit
    finally:
        limited_host.stop()


# --- rate-limit headers (draft-ietf-httpapi-ratelimit-headers-11) ----------------------------------

RATE_LIMIT = re.compile(r'^"default";r=(\d+);t=(\d+)$')


def quota_left(response) -> tuple[int, int]:
    """(r, t) of the response's RateLimit field, after checking its RateLimit-Policy."""
    assert response.headers["RateLimit-Policy"] == '"default";q=4;w=60', response.headers
    match = RATE_LIMIT.match(response.headers["RateLimit"])
    assert match, response.headers["RateLimit"]
    remaining, reset = int(match[1]), int(match[2])
    assert 1 <= reset <= 60
    return remaining, reset


def test_keyed_answers_carry_the_partners_quota_and_what_is_left(tmp_path):
    limited_host = start_host(tmp_path, RATE_LIMIT_PER_MINUTE="4")
    try:
        partner = make_partner(limited_host, stores=("東京-001", "0042.7"))
        first = partner.get("reference/order-types")
        remaining, reset = quota_left(first)
        if reset < 10:  # too close to the window's end for five requests in one window: wait for the next
            time.sleep(reset + 0.5)
            first = partner.get("reference/order-types")
        answers = [
            first,
            raw_put(partner, "stores", b'{"batch_id": }'),  # a 400 of the partner's own
            partner.put("stores", stores_batch(store("東京-001"))),  # a 2xx write
            partner.put("stores", stores_batch(store("99-999"))),
        ]  # a 403: not registered
        assert [answer.status_code for answer in answers][:3] == [200, 400, 202] and answers[3].status_code == 403
        assert [quota_left(answer)[0] for answer in answers] == [3, 2, 1, 0]
        limited = partner.get("reference/order-types")
        problem_of(limited, 429, "RATE_LIMITED")
        remaining, reset = quota_left(limited)
        assert remaining == 0 and limited.headers["Retry-After"] == str(reset)
    finally:
        limited_host.stop()


def test_no_quota_headers_without_a_known_partner_or_without_a_limit(tmp_path, partner):
    limited_host = start_host(tmp_path, RATE_LIMIT_PER_MINUTE="4")
    try:
        health = requests.get(limited_host.url("health"), timeout=10)
        unknown_key = requests.get(
            limited_host.url("reference/order-types"), headers={"x-functions-key": "not-a-key-0000"}, timeout=10
        )
        problem_of(unknown_key, 401, "UNAUTHORIZED")
        for answer in (health, unknown_key):
            assert "RateLimit" not in answer.headers and "RateLimit-Policy" not in answer.headers
    finally:
        limited_host.stop()
    unlimited = partner.get("reference/order-types")  # the session host runs with RATE_LIMIT_PER_MINUTE=0
    assert unlimited.status_code == 200 and "RateLimit" not in unlimited.headers


# --- a partner's own rate limit (decision 0036) ---------------------------------------------------------


def test_a_partners_own_rate_limit_replaces_the_services(tmp_path):
    """`hq partner rate-limit` gives one partner its own quota; others keep RATE_LIMIT_PER_MINUTE (here
    6); `--default` gives it back. The window is counted as before: only the quota differs."""
    limited_host = start_host(tmp_path, RATE_LIMIT_PER_MINUTE="6")
    try:
        small, other = make_partner(limited_host), make_partner(limited_host)
        said = limited_host.hq("partner", "rate-limit", small.partner_id, "2")
        assert said.returncode == 0 and "2 requests a minute" in said.stdout, said.stderr
        listed = limited_host.hq("partner", "list").stdout
        assert any(line.startswith(small.partner_id + " ") and line.endswith("2/min") for line in listed.splitlines())
        statuses = []
        for _ in range(6):  # a window may turn over once during the loop: 6 requests still see 3 in one window
            answer = small.get("reference/order-types")
            statuses.append(answer.status_code)
            assert answer.headers["RateLimit-Policy"] == '"default";q=2;w=60'
        assert 429 in statuses and set(statuses) == {200, 429}, statuses
        problem_of(small.get("reference/order-types"), 429, "RATE_LIMITED")
        assert other.get("reference/order-types").headers["RateLimit-Policy"] == '"default";q=6;w=60'

        back = limited_host.hq("partner", "rate-limit", small.partner_id, "--default")
        assert back.returncode == 0 and "RATE_LIMIT_PER_MINUTE, 6 here" in back.stdout, back.stderr
        assert small.get("reference/order-types").headers["RateLimit-Policy"] == '"default";q=6;w=60'
    finally:
        limited_host.stop()


@pytest.mark.parametrize("arguments", [["0"], ["-5"], ["ten"], ["2.5"], [], ["3", "--default"]])
def test_a_partner_rate_limit_is_a_positive_whole_number_or_default(host, arguments):
    partner_id = f"limit-{uuid.uuid4().hex[:8]}"
    assert host.hq_in_process("partner", "add", partner_id).returncode == 0
    result = host.hq("partner", "rate-limit", partner_id, *arguments)
    assert result.returncode == 2, (result.stdout, result.stderr)  # a usage error: nothing changed
    assert host.storage().get_partner(partner_id).rate_limit_per_minute is None


def test_a_rate_limit_for_an_unknown_partner_is_refused(host):
    result = host.hq("partner", "rate-limit", "nobody-at-all", "5")
    assert result.returncode == 1 and "unknown partner nobody-at-all" in result.stderr
