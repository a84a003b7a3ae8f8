"""Failed authentications limited per client address (decision 0037), over real HTTP on the local
host, which appends X-Forwarded-For as Azure's front end does. Each client binds its own loopback
source address (127.0.0.0/8 is all loopback on Linux), so the host sees distinct socket peers."""

from __future__ import annotations

import secrets
import shutil

import pytest
import requests
from requests.adapters import HTTPAdapter

from core.errors import ApiError
from tests.conftest import make_partner, start_host
from tests.payloads import problem_of
from triggers.auth_failures import FailureLimiter, client_address

LIMIT = 5
PATH = "mappings/transaction-types"


class _FromAddress(HTTPAdapter):
    def __init__(self, source: str) -> None:
        self.source = source
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.source, 0)
        super().init_poolmanager(*args, **kwargs)


def get_from(source: str, host, key: str | None, **headers: str) -> requests.Response:
    """GET on a new connection from `source`: a new thread, and a new storage connection, in the host."""
    with requests.Session() as session:
        session.mount("http://", _FromAddress(source))
        sent = {**headers, **({"x-functions-key": key} if key is not None else {})}
        return session.get(host.url(PATH), headers=sent, timeout=30)


def bad_key() -> str:
    return "posk_" + secrets.token_urlsafe(32)  # shaped like a real key, known to nobody


def flood(source: str, host, count: int = LIMIT) -> None:
    for _ in range(count):
        problem_of(get_from(source, host, bad_key()), 401, "UNAUTHORIZED")


def assert_limited(response: requests.Response) -> None:
    problem = problem_of(response, 429, "RATE_LIMITED")
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    assert "address" in problem["detail"]


@pytest.fixture(scope="module")
def limited_host(tmp_path_factory):
    running = start_host(tmp_path_factory.mktemp("bad-keys"), AUTH_FAILURES_PER_MINUTE=str(LIMIT))
    yield running
    running.stop()


def test_a_flood_of_bad_keys_is_answered_429_after_the_limit(limited_host):
    flood("127.0.0.2", limited_host)
    for key in (bad_key(), None, ""):  # a missing key counts and is refused alike
        assert_limited(get_from("127.0.0.2", limited_host, key))


def test_another_address_is_unaffected(limited_host):
    flood("127.0.0.3", limited_host)
    problem_of(get_from("127.0.0.4", limited_host, bad_key()), 401, "UNAUTHORIZED")


def test_a_forged_forwarded_for_does_not_escape_the_limit(limited_host):
    flood("127.0.0.5", limited_host)
    for forged in ("198.51.100.23", "127.0.0.9, 203.0.113.77:443", "unknown", "[2001:db8::1]:1"):
        assert_limited(get_from("127.0.0.5", limited_host, bad_key(), **{"X-Forwarded-For": forged}))


def test_a_forged_forwarded_for_does_not_put_another_address_over_the_limit(limited_host):
    flood("127.0.0.6", limited_host)
    # 127.0.0.7 names the limited address as if a proxy had seen it: only the appended hop counts.
    problem_of(get_from("127.0.0.7", limited_host, bad_key(), **{"X-Forwarded-For": "127.0.0.6"}), 401, "UNAUTHORIZED")


def test_a_valid_partner_is_unaffected_from_its_own_address(limited_host):
    flood("127.0.0.8", limited_host)
    assert_limited(get_from("127.0.0.8", limited_host, bad_key()))
    partner = make_partner(limited_host, ("ＳＨＩＢＵＹＡ-渋谷",), prefix="pos-jp")
    answer = get_from("127.0.0.10", limited_host, partner.key)
    assert answer.status_code == 200 and answer.json()["partner_id"] == partner.partner_id


def test_over_the_limit_only_keys_this_instance_accepted_get_through(limited_host):
    known = make_partner(limited_host, ("FR-75001 Châtelet",), prefix="pos-fr")
    unseen = make_partner(limited_host, ("1200-015",), prefix="pos-pt")
    assert get_from("127.0.0.11", limited_host, known.key).status_code == 200
    flood("127.0.0.11", limited_host)
    assert get_from("127.0.0.11", limited_host, known.key).status_code == 200
    # Knowing that a key is good needs the storage read the limit saves: an unseen key waits.
    assert_limited(get_from("127.0.0.11", limited_host, unseen.key))
    assert_limited(get_from("127.0.0.11", limited_host, bad_key()))


def test_a_revoked_key_no_longer_passes_the_limit(limited_host):
    partner = make_partner(limited_host, ("S1",), prefix="pos-rv")
    assert get_from("127.0.0.12", limited_host, partner.key).status_code == 200
    revoked = limited_host.hq_in_process("key", "revoke", partner.partner_id, partner.key_id)
    assert revoked.returncode == 0, revoked.stderr
    flood("127.0.0.12", limited_host, LIMIT - 1)
    problem_of(get_from("127.0.0.12", limited_host, partner.key), 401, "UNAUTHORIZED")  # the limit's 5th
    assert_limited(get_from("127.0.0.12", limited_host, partner.key))


def test_limited_answers_read_no_storage(tmp_path):
    """With the database gone, the limited address is still answered 429 (nothing was read), while a
    request that does reach storage fails: the control that shows the storage really is gone."""
    host = start_host(tmp_path, AUTH_FAILURES_PER_MINUTE=str(LIMIT))
    try:
        flood("127.0.0.13", host)
        shutil.move(host.data_dir, tmp_path / "moved-away")
        for _ in range(50):
            assert_limited(get_from("127.0.0.13", host, bad_key()))
        reached = get_from("127.0.0.14", host, bad_key())
        assert reached.status_code >= 500, reached.text
    finally:
        host.stop()


def test_the_limit_is_off_at_zero(tmp_path):
    host = start_host(tmp_path, AUTH_FAILURES_PER_MINUTE="0")
    try:
        flood("127.0.0.15", host, 20)
    finally:
        host.stop()


# -- the client address and the limiter, in-process --------------------------------------------------


@pytest.mark.parametrize(
    "forwarded, address",
    [
        ("203.0.113.7:50432", "203.0.113.7"),
        ("198.51.100.1, 10.0.0.5, 203.0.113.7:50432", "203.0.113.7"),  # only the front end's own hop
        ("[2001:db8:1:2:3:4:5:6]:443", "2001:db8:1:2::/64"),  # an IPv6 subscriber holds its /64
        ("2001:db8:1:2::9", "2001:db8:1:2::/64"),
        ("[::ffff:203.0.113.7]:8080", "203.0.113.7"),
        ("203.0.113.7", "203.0.113.7"),
        ("", "unknown"),
        (None, "unknown"),
    ],
)
def test_client_address(forwarded, address):
    assert client_address({"x-forwarded-for": forwarded} if forwarded is not None else {}) == address


def test_the_window_opens_at_the_first_failure_and_expires():
    now = [1000.0]
    limiter = FailureLimiter(2, clock=lambda: now[0])
    limiter.failed("203.0.113.7", "k1")
    now[0] += 30
    limiter.failed("203.0.113.7", "k2")
    with pytest.raises(Exception) as refused:
        limiter.check("203.0.113.7", "k3")
    assert refused.value.headers["Retry-After"] == "30"
    now[0] += 30
    limiter.check("203.0.113.7", "k3")  # the minute that began with the first failure is over


def test_memory_is_bounded():
    limiter = FailureLimiter(1, max_addresses=100, max_known_keys=10)
    for index in range(1000):
        limiter.failed(f"10.{index // 256}.{index % 256}.1", None)
        limiter.accepted(f"{index:064x}")
    assert limiter.tracked_addresses() == 100 and len(limiter._known_keys) == 10
    limiter.check("10.0.0.1", None)  # the oldest addresses were let go first
    with pytest.raises(ApiError) as refused:
        limiter.check("10.3.231.1", None)
    assert refused.value.status == 429
