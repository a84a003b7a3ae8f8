"""The `hq` command line, run as HQ runs it: a separate process on the host's data."""

import dataclasses
import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
import uuid

import pytest

from tests.conftest import ROOT, issue_key, make_partner
from tests.payloads import problem_of, store, stores_batch

KEY = re.compile(r"^posk_[A-Za-z0-9_-]{43}$")


def new_id(prefix: str = "cli") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return result.stdout


def refused(result: subprocess.CompletedProcess, *words: str) -> str:
    """A refusal: exit code 1, nothing on stdout, one clear line on stderr naming `words`."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stdout == ""
    message = result.stderr.strip()
    assert message.startswith("error: ") and "\n" not in message and "Traceback" not in message, message
    for word in words:
        assert word in message, (word, message)
    return message


def rows_of(table: str) -> dict[str, list[str]]:
    """A printed table by its first column (the first table printed: up to a blank line)."""
    lines = table.strip().split("\n\n")[0].splitlines()
    return {line.split()[0]: line.split() for line in lines[1:]}


# --- partners -----------------------------------------------------------------------------------


def test_partner_add_then_list(host):
    partner_id = new_id()
    assert f"Added partner {partner_id} (Burger Co)" in ok(host.hq("partner", "add", partner_id, "--name", "Burger Co"))
    listed = ok(host.hq("partner", "list"))
    assert listed.splitlines()[0].split() == ["PARTNER_ID", "NAME", "STATUS", "CREATED_AT", "RATE_LIMIT"]
    row = next(line for line in listed.splitlines() if line.startswith(partner_id + " "))
    assert "Burger Co" in row and "ACTIVE" in row and "INACTIVE" not in row


def test_a_partner_without_a_name_is_named_by_its_id(host):
    partner_id = new_id()
    ok(host.hq("partner", "add", partner_id))
    assert host.storage().get_partner(partner_id).name == partner_id


def test_a_duplicate_partner_is_refused_saying_it_exists_and_nothing_changed(host):
    partner_id = new_id()
    ok(host.hq_in_process("partner", "add", partner_id, "--name", "First"))
    message = refused(
        host.hq("partner", "add", partner_id, "--name", "Second"),
        partner_id,
        "already exists",
        "First",
        "active",
        "nothing changed",
        f"key list {partner_id}",
    )
    assert "Second" not in message
    assert host.storage().get_partner(partner_id).name == "First"


@pytest.mark.parametrize("partner_id", ["", "a/b", "tab\there", "x" * 101, "acme pos", " acme", "acme\u3000pos"])
def test_an_invalid_partner_id_is_refused(host, partner_id):
    refused(host.hq("partner", "add", partner_id), "invalid partner id")
    assert host.storage().get_partner(partner_id) is None


@pytest.mark.parametrize("partner_id", ["acme-pos", "ACME_2.0", "日本POS", "p:1"])
def test_a_partner_id_follows_the_store_id_rule(host, partner_id):
    partner_id = f"{partner_id}-{uuid.uuid4().hex[:6]}"
    ok(host.hq_in_process("partner", "add", partner_id))
    assert host.storage().get_partner(partner_id).partner_id == partner_id


def test_deactivate_and_activate(partner):
    hq = partner.host.hq
    assert "PARTNER_INACTIVE" in ok(hq("partner", "deactivate", partner.partner_id))
    assert rows_of(ok(hq("partner", "list")))[partner.partner_id][-3] == "INACTIVE"
    problem_of(partner.get("mappings/transaction-types"), 403, "PARTNER_INACTIVE")
    ok(hq("partner", "activate", partner.partner_id))
    assert rows_of(ok(hq("partner", "list")))[partner.partner_id][-3] == "ACTIVE"
    assert partner.get("mappings/transaction-types").status_code == 200


@pytest.mark.parametrize(
    "command",
    [
        ("partner", "activate"),
        ("partner", "deactivate"),
        ("key", "issue"),
        ("key", "list"),
        ("store", "list"),
    ],
)
def test_an_unknown_partner_is_refused(host, command):
    partner_id = new_id("nobody")
    refused(host.hq(*command, partner_id), "unknown partner", partner_id)
    assert host.storage().get_partner(partner_id) is None  # activate/deactivate did not create it


def test_partner_list_on_an_empty_database_says_how_to_add_one(host, tmp_path):
    env = {**host.env, "POS_DATA_DIR": str(tmp_path / "empty")}
    result = subprocess.run(
        [sys.executable, "-m", "hq", "partner", "list"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert "partner add" in ok(result)


# --- keys ---------------------------------------------------------------------------------------


def test_key_issue_prints_the_key_last_and_its_id_before(partner):
    issued = ok(partner.host.hq("key", "issue", partner.partner_id)).strip().splitlines()
    key = issued[-1]
    assert KEY.match(key), issued
    key_id = re.search(r"\bkey_[0-9a-f]+\b", "\n".join(issued[:-1])).group(0)
    assert key not in "\n".join(issued[:-1])
    response = partner.get("mappings/transaction-types", headers=partner.headers(key))
    assert response.status_code == 200 and response.json()["partner_id"] == partner.partner_id
    assert key_id in rows_of(ok(partner.host.hq("key", "list", partner.partner_id)))


def test_key_issue_as_json_for_a_script(partner):
    issued = json.loads(ok(partner.host.hq("key", "issue", partner.partner_id, "--format", "json")))
    assert set(issued) == {"partner_id", "key_id", "key"} and issued["partner_id"] == partner.partner_id
    assert KEY.match(issued["key"]) and re.fullmatch(r"key_[0-9a-f]{12}", issued["key_id"])
    response = partner.get("mappings/transaction-types", headers=partner.headers(issued["key"]))
    assert response.status_code == 200 and response.json()["partner_id"] == partner.partner_id
    assert issued["key_id"] in rows_of(ok(partner.host.hq("key", "list", partner.partner_id)))


def test_every_issued_key_is_new(partner):
    keys = {ok(partner.host.hq("key", "issue", partner.partner_id)).strip().splitlines()[-1] for _ in range(2)}
    assert len(keys) == 2 and partner.key not in keys


def test_key_list_shows_ids_and_dates_but_never_a_key(partner):
    hq = partner.host.hq_in_process
    second = ok(hq("key", "issue", partner.partner_id)).strip().splitlines()
    ok(hq("key", "revoke", partner.partner_id, partner.key_id))
    listed = ok(partner.host.hq("key", "list", partner.partner_id))
    assert listed.splitlines()[0].split() == ["KEY_ID", "STATUS", "CREATED_AT", "REVOKED_AT", "LAST_USED_HOUR"]
    rows = rows_of(listed)
    assert len(rows) == 2
    assert rows[partner.key_id][1] == "REVOKED" and rows[partner.key_id][3].endswith("Z")  # with its date
    assert [row[1:5:2] for key_id, row in rows.items() if key_id != partner.key_id] == [["ACTIVE", "-"]]
    assert {row[4] for row in rows.values()} == {"never"}  # neither key has made a request
    assert partner.key not in listed and second[-1] not in listed and "posk_" not in listed


def test_key_list_shows_the_hour_each_key_was_last_used(backend_host):
    partner = make_partner(backend_host)
    unused_id, _ = issue_key(backend_host, partner.partner_id)
    before = dt.datetime.now(dt.UTC)
    for _ in range(3):
        assert partner.get("mappings/transaction-types").status_code == 200
    after = dt.datetime.now(dt.UTC)
    rows = rows_of(ok(backend_host.hq_in_process("key", "list", partner.partner_id)))
    assert rows[partner.key_id][4] in {moment.strftime("%Y-%m-%dT%H:00Z") for moment in (before, after)}
    assert rows[unused_id][4] == "never"


def test_a_key_is_noted_as_used_once_an_hour_not_once_a_request():
    from core.records import KeyOwner, Partner
    from ingest.access import note_key_use

    class Noting:
        def __init__(self):
            self.writes = []

        def record_key_use(self, key_hash, hour):
            self.writes.append(hour)

    storage, utc = Noting(), dt.UTC
    owner = KeyOwner(Partner("acme", "Acme", True, dt.datetime(2026, 1, 1, tzinfo=utc)), "key_0123456789ab", "h", False)
    last_used = None
    for minute in (5, 30, 59, 60, 61, 119, 120):  # 14:05 ... 16:00, as each request finds the key
        note_key_use(
            storage,
            dataclasses.replace(owner, last_used_at=last_used),
            dt.datetime(2026, 11, 20, 14, tzinfo=utc) + dt.timedelta(minutes=minute),
        )
        last_used = storage.writes[-1]
    assert storage.writes == [dt.datetime(2026, 11, 20, hour, tzinfo=utc) for hour in (14, 15, 16)]


def test_request_log_lines_name_the_key_by_its_id_never_the_key(partner):
    request_id = uuid.uuid4().hex
    assert (
        partner.get("mappings/transaction-types", headers={**partner.headers(), "x-request-id": request_id}).status_code
        == 200
    )
    deadline = time.monotonic() + 10
    while request_id not in partner.host.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    line = next(json.loads(text) for text in partner.host.log().splitlines() if request_id in text)
    assert line["event"] == "http_request" and line["key_id"] == partner.key_id
    assert line["partner_id"] == partner.partner_id
    assert partner.key not in partner.host.log() and partner.key[5:25] not in partner.host.log()


def test_key_list_of_a_partner_without_keys_says_how_to_issue_one(host):
    partner_id = new_id()
    ok(host.hq_in_process("partner", "add", partner_id))
    assert f"key issue {partner_id}" in ok(host.hq("key", "list", partner_id))


def test_partner_client_add_list_and_remove(partner, new_partner):
    hq, other = partner.host.hq, new_partner()
    entra, keycloak = str(uuid.uuid4()), f"pos-{uuid.uuid4().hex[:8]}/prod"
    assert "has no OAuth clients" in ok(hq("key", "list", partner.partner_id))
    added = ok(hq("partner", "client", "add", partner.partner_id, entra))
    assert f"Client {entra} now speaks for partner {partner.partner_id}" in added
    ok(partner.host.hq_in_process("partner", "client", "add", partner.partner_id, keycloak))
    listed = ok(hq("key", "list", partner.partner_id))  # the clients beside the keys
    keys, clients = listed.strip().split("\n\n")
    assert partner.key_id in keys and entra not in keys
    assert clients.splitlines()[0].split() == ["CLIENT_ID", "ISSUER", "ADDED_AT"]  # "any": no OAUTH_ISSUER here
    assert set(rows_of(clients)) == {entra, keycloak}
    assert set(rows_of(ok(hq("partner", "client", "list", partner.partner_id)))) == {entra, keycloak}

    refused(hq("partner", "client", "add", other.partner_id, entra), entra, f"partner {partner.partner_id}")
    refused(hq("partner", "client", "remove", other.partner_id, entra), f"partner {other.partner_id} has no client")
    for bad in ("", " padded ", "tab\there", "x" * 256):
        refused(hq("partner", "client", "add", partner.partner_id, bad), "invalid client id")
    refused(hq("partner", "client", "add", "nobody", str(uuid.uuid4())), "unknown partner nobody")

    assert "now get 401" in ok(hq("partner", "client", "remove", partner.partner_id, entra))
    assert set(rows_of(ok(hq("partner", "client", "list", partner.partner_id)))) == {keycloak}
    refused(hq("partner", "client", "remove", partner.partner_id, entra), "has no client")


def test_key_revoke(partner):
    assert "401" in ok(partner.host.hq("key", "revoke", partner.partner_id, partner.key_id))
    problem_of(partner.get("mappings/transaction-types"), 401, "UNAUTHORIZED")


def test_revoking_a_revoked_key_is_refused(partner):
    ok(partner.host.hq_in_process("key", "revoke", partner.partner_id, partner.key_id))
    refused(partner.host.hq("key", "revoke", partner.partner_id, partner.key_id), partner.key_id, "already revoked")


def test_revoking_by_the_key_itself_is_refused_without_printing_it_and_names_its_key_id(partner):
    message = refused(
        partner.host.hq("key", "revoke", partner.partner_id, partner.key),
        "not a key id",
        partner.key_id,
        f"key revoke {partner.partner_id} {partner.key_id}",
    )
    assert partner.key not in message and partner.key[5:25] not in message
    assert partner.get("mappings/transaction-types").status_code == 200  # not revoked on a guess


@pytest.mark.parametrize("value", ["posk_" + "A" * 43, "A" * 43, "key_ABC"])
def test_revoking_by_something_else_than_a_key_id_points_to_the_key_id_column(partner, value):
    message = refused(
        partner.host.hq("key", "revoke", partner.partner_id, value),
        "not a key id",
        "KEY_ID",
        f"key list {partner.partner_id}",
    )
    assert value not in message


def test_revoking_an_unknown_key_is_refused(partner):
    refused(partner.host.hq("key", "revoke", partner.partner_id, "key_000000000000"), "key_000000000000")
    assert partner.get("mappings/transaction-types").status_code == 200


def test_revoking_another_partners_key_is_refused(new_partner):
    owner, other = new_partner(), new_partner()
    refused(owner.host.hq("key", "revoke", other.partner_id, owner.key_id), owner.key_id)
    assert owner.get("mappings/transaction-types").status_code == 200


# --- stores -------------------------------------------------------------------------------------


def test_store_register_list_and_unregister(new_partner):
    partner = new_partner(stores=())
    hq = partner.host.hq
    assert "No stores" in ok(hq("store", "list", partner.partner_id))
    assert "S1, S2" in ok(hq("store", "register", partner.partner_id, "S1", "S2"))
    assert (
        partner.put(
            "stores",
            stores_batch(
                store(
                    "S1",
                    country_code="JP",
                    currency="JPY",
                    time_zone="Asia/Tokyo",
                    locale="ja-JP",
                    prices_include_tax=True,
                    last_modified_at="2026-11-01T09:00:00+09:00",
                )
            ),
        ).status_code
        == 202
    )
    listed = ok(hq("store", "list", partner.partner_id))
    assert listed.splitlines()[0].split() == [
        "STORE_ID",
        "CURRENCY",
        "COUNTRY",
        "TIME_ZONE",
        "WORKDAY_START",
        "TAX_INCLUDED",
        "LAST_MODIFIED_AT",
    ]
    rows = rows_of(listed)
    assert rows["S1"] == ["S1", "JPY", "JP", "Asia/Tokyo", "04:00", "yes", "2026-11-01T00:00:00Z"]
    assert set(rows) == {"S1", "S2"} and "no master data" in " ".join(rows["S2"])
    ok(hq("store", "unregister", partner.partner_id, "S2"))
    assert set(rows_of(ok(hq("store", "list", partner.partner_id)))) == {"S1"}
    problem_of(partner.put("stores", stores_batch(store("S2"))), 403, "STORE_NOT_ALLOWED")


def test_registering_registers_the_new_stores_and_names_those_already_there(partner):
    shown = ok(partner.host.hq("store", "register", partner.partner_id, "S2", "S1", "東京-01"))
    assert shown.splitlines() == [
        f"Registered for {partner.partner_id}: S2, 東京-01",
        f"Already registered for {partner.partner_id}, left as they were: S1",
    ]
    assert partner.host.storage().registered_stores(partner.partner_id) == ["S1", "S2", "東京-01"]
    again = ok(partner.host.hq("store", "register", partner.partner_id, "S1", "S2"))
    assert again == f"Already registered for {partner.partner_id}, left as they were: S1, S2\n"


def test_unregistering_an_unknown_store_is_refused_and_unregisters_nothing(partner):
    refused(partner.host.hq("store", "unregister", partner.partner_id, "S1", "S9"), "not registered", "S9")
    assert partner.host.storage().registered_stores(partner.partner_id) == ["S1"]


@pytest.mark.parametrize("store_id", ["", "a/b", "a?b", "a#b", "a\\b", "new\nline", "x" * 101])
def test_an_invalid_store_id_is_refused(partner, store_id):
    refused(partner.host.hq("store", "register", partner.partner_id, store_id), "invalid store id")
    assert partner.host.storage().registered_stores(partner.partner_id) == ["S1"]


def test_a_store_id_given_twice_is_refused(partner):
    refused(partner.host.hq("store", "register", partner.partner_id, "S7", "S7"), "twice")


def test_register_for_an_unknown_partner_is_refused(host):
    partner_id = new_id("nobody")
    refused(host.hq("store", "register", partner_id, "S1"), "unknown partner", partner_id)


# --- usage --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [(), ("partner",), ("partner", "add"), ("key", "revoke", "p-1"), ("shop", "list"), ("store", "register", "p-1")],
)
def test_bad_usage_exits_with_2_and_shows_the_usage(host, args):
    result = host.hq(*args)
    assert result.returncode == 2
    assert "usage:" in result.stderr and result.stdout == ""


# --- the console script and a closed pipe (decision 0077) --------------------------------------------


def test_hq_is_a_command_of_the_venv_that_runs_from_any_folder(host, tmp_path):
    """make install writes .venv/bin/hq, as the operator guide's tables write the commands; it runs this checkout's
    hq from another folder, on the settings of the environment."""
    command = ROOT / ".venv" / "bin" / "hq"
    assert command.is_file(), "run make install"
    partner_id = new_id()
    ok(host.hq_in_process("partner", "add", partner_id))
    listed = subprocess.run(
        [str(command), "partner", "list"], cwd=tmp_path, env=host.env, capture_output=True, text=True, timeout=60
    )
    assert partner_id in ok(listed)


def test_a_closed_pipe_ends_quietly(host):
    """`hq reconcile list --format csv | head`: the reader went away before hq wrote. hq ends without a
    traceback, with the shell's status for SIGPIPE (a pipe whose read end is closed: every write fails)."""
    ok(host.hq_in_process("partner", "add", new_id("pipe")))
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "hq", "reconcile", "list", "--format", "csv"],
            cwd=ROOT,
            env=host.env,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (141, "")


# --- one-off migrations ------------------------------------------------------------------------------


def test_the_record_index_migration_runs_on_cosmos_db_and_says_so_elsewhere(host, azure_host):
    embedded = host.hq("cosmos", "migrate-index")
    assert "Nothing to migrate" in ok(embedded)
    migrated = azure_host.hq("cosmos", "migrate-index")
    assert migrated.returncode == 0, migrated.stderr
    assert (
        migrated.stdout.startswith("Record index migrated: ") and "Running it again changes nothing" in migrated.stdout
    )
    assert "entries read" in migrated.stderr and "Traceback" not in migrated.stderr  # progress
