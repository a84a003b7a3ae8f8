"""HQ operations (decision 0077): batch show, reconcile list across stores, payment-type directions.

Most commands run in this process (host.hq_in_process, the same code as `python -m hq`); a few run as
the separate process HQ starts, to show the real entry point and exit codes. The end-to-end proof that
a payment-type direction reaches reconciliation and the trade-record warnings runs over HTTP on both
backends.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import re
import subprocess
import uuid

import pytest
from rich.cells import cell_len

from core.records import BatchMarker, ClosedDay
from hq.cli import command_names, main
from tests.conftest import ROOT, make_partner
from tests.e2e.test_business_day import DAY, DIRECTIONS, close_and_wait, open_store, push
from tests.e2e.test_cli import new_id, ok, refused
from tests.trade_payloads import Line, Pay, daily_close, totals_of, trade_batch, trade_record

UTC = dt.UTC
NEXT_DAY = "2026-11-21"
UNKNOWN_DIRECTION = "PAYMENT_TYPE_UNKNOWN_DIRECTION"


WIDE_PAD = "\x00"  # stands for the second column of a wide character while a line is cut into cells


def _by_column(line: str) -> str:
    """The line with one character per display column: a wide character is followed by WIDE_PAD."""
    return "".join(char + WIDE_PAD * (cell_len(char) - 1) for char in line)


def table(text: str) -> list[dict[str, str]]:
    """The rows of the table `text` starts with, by column name; lines after the table (a summary or a
    legend) are left out: they do not have the table's two-space gaps at its column starts."""
    lines = [_by_column(line) for line in text.splitlines()]  # hq aligns by display width (decision 0098)
    header = lines[0]
    starts = [match.start() for match in re.finditer(r"\S+", header)]
    names = header.split()
    rows = []
    for line in lines[1:]:
        if not line.strip() or any(len(line) > start and line[start - 2 : start] != "  " for start in starts[1:]):
            break
        cells = [
            line[start:end].strip().replace(WIDE_PAD, "")
            for start, end in zip(starts, starts[1:] + [None], strict=True)
        ]
        rows.append(dict(zip(names, cells, strict=True)))
    return rows


def hq_usage(*args: str) -> subprocess.CompletedProcess:
    """`hq` in this process with arguments that argparse refuses (it exits before reading settings)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as exited:
        main(list(args))
    return subprocess.CompletedProcess(["hq", *args], exited.value.code, out.getvalue(), err.getvalue())


def usage_error(result, *words: str) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == "" and "usage:" in result.stderr
    for word in words:
        assert word in result.stderr, (word, result.stderr)
    return result.stderr


# --- batch show ---------------------------------------------------------------------------------


def batch_fields(host, partner_id: str, batch_id: str) -> dict[str, str]:
    return {row["FIELD"]: row["VALUE"] for row in table(ok(host.hq_in_process("batch", "show", partner_id, batch_id)))}


def test_batch_show_a_trade_records_batch_and_its_store_day(partner):
    hq = partner.host.hq_in_process
    open_store(partner)
    record = trade_record("S1", DAY, [Line("P-SECRET-BURGER", 2, 550)], tax=88)
    batch = trade_batch("S1", DAY, [record], batch_seq=3)
    assert partner.post("trade-records", batch).status_code == 202

    shown = ok(hq("batch", "show", partner.partner_id, batch["batch_id"].upper()))  # any case of the UUID
    fields = {row["FIELD"]: row["VALUE"] for row in table(shown)}
    assert fields["batch_id"] == batch["batch_id"] and fields["partner_id"] == partner.partner_id
    assert fields["kind"] == "trade-records" and fields["record_count"] == "1"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", fields["received_at"])
    assert (fields["store_id"], fields["business_date"], fields["batch_seq"]) == ("S1", DAY, "3")
    assert fields["body_digest"].startswith("stored")
    assert fields["store_day"] == "no daily close received yet"
    # Never the body, nor the digest itself.
    digest = partner.host.storage().find_batch(partner.partner_id, batch["batch_id"]).body_digest
    for secret in ("P-SECRET-BURGER", record["trade_record_id"], record["payments"][0]["payment_id"], digest):
        assert secret not in shown

    result = close_and_wait(partner, "S1", {**totals_of([record], {"01"}, DIRECTIONS), "tip_amount": "1.00"})
    assert result["status"] == "MISMATCHED"
    fields = batch_fields(partner.host, partner.partner_id, batch["batch_id"])
    assert fields["store_day"] == "MISMATCHED"


def test_batch_show_a_daily_close_says_whether_a_later_close_replaced_it(partner):
    open_store(partner)
    first = daily_close("S1", DAY, totals_of([], {"01"}, DIRECTIONS))
    assert partner.post("daily-close", first).status_code == 202
    fields = batch_fields(partner.host, partner.partner_id, first["batch_id"])
    assert fields["kind"] == "daily-close" and fields["record_count"] == "1"
    assert fields["batch_seq"] == "-" and fields["store_day"].endswith("(this close is the latest)")

    second = close_and_wait(partner, "S1", totals_of([], {"01"}, DIRECTIONS))
    assert second["status"] == "MATCHED"
    fields = batch_fields(partner.host, partner.partner_id, first["batch_id"])
    assert fields["store_day"].startswith("MATCHED (of a later close") and "replaced this one" in fields["store_day"]


def test_batch_show_a_master_data_batch_as_a_separate_process(partner):
    from tests.payloads import store, stores_batch

    batch = stores_batch(store("S1"))
    assert partner.put("stores", batch).status_code == 202
    shown = ok(partner.host.hq("batch", "show", partner.partner_id, batch["batch_id"]))
    assert shown.splitlines()[0].split() == ["FIELD", "VALUE"]
    fields = {row["FIELD"]: row["VALUE"] for row in table(shown)}
    assert fields["kind"] == "stores" and fields["record_count"] == "1"
    assert fields["store_id"] == fields["business_date"] == fields["batch_seq"] == "-"
    assert "store_day" not in fields


def test_batch_show_refuses_an_unknown_batch_another_partners_batch_and_an_unknown_partner(new_partner):
    owner, other = new_partner(), new_partner()
    open_store(owner)
    batch = daily_close("S1", DAY, totals_of([], {"01"}, DIRECTIONS))
    assert owner.post("daily-close", batch).status_code == 202
    hq = owner.host.hq
    unknown = str(uuid.uuid4())
    refused(hq("batch", "show", owner.partner_id, unknown), owner.partner_id, "has no batch", unknown)
    refused(owner.host.hq_in_process("batch", "show", other.partner_id, batch["batch_id"]), "has no batch")
    nobody = new_id("nobody")
    refused(owner.host.hq_in_process("batch", "show", nobody, batch["batch_id"]), "unknown partner", nobody)
    refused(owner.host.hq_in_process("batch", "show", owner.partner_id, "batch-1"), "'batch-1'", "not a UUID")
    usage_error(hq_usage("batch", "show", owner.partner_id))


# --- reconcile list -----------------------------------------------------------------------------

# The totals and details of a day with nothing in it, in the shape the service stores them (the partner's
# GET answers them through the DailyCloseStatus model).
NO_TOTALS = {
    "trade_record_count": 0,
    "item_row_count": 0,
    "payment_row_count": 0,
    "net_sales_amount": "0.00",
    "tax_amount": "0.00",
    "tip_amount": "0.00",
    "payment_total_amount": "0.00",
}
NO_DETAILS = {
    "raw_differences": {},
    "batch_count_received": 1,
    "batch_count_expected": 1,
    "batch_seqs_received": [1],
    "missing_batch_seqs": [],
    "unmapped_source_codes": [],
    "unknown_payment_types": [],
    "source_codes": [],
}


def _close(
    storage,
    partner_id: str,
    store_id: str,
    business_date: str,
    status: str = "RECEIVED",
    differences: tuple[str, ...] = (),
    details: dict | None = None,
) -> None:
    """A stored close (and result), written straight through the port: a RECEIVED day due in a year
    stays RECEIVED, since no queue message was sent for it."""
    day = dt.date.fromisoformat(business_date)
    received = dt.datetime(2026, 11, 21, 4, 5, tzinfo=UTC)
    close = ClosedDay(
        store_id,
        day,
        str(uuid.uuid4()),
        "USD",
        {"batch_count": 1, **NO_TOTALS},
        received,
        received + dt.timedelta(days=365),
        "RECEIVED",
    )
    marker = BatchMarker(partner_id, close.close_batch_id, "daily-close", 1, "digest", received, store_id, day)
    assert storage.save_daily_close(marker, close) is None
    if status != "RECEIVED":
        checked = received + dt.timedelta(minutes=15)
        assert storage.save_result(
            partner_id,
            ClosedDay(
                store_id,
                day,
                close.close_batch_id,
                "USD",
                {"batch_count": 1, **NO_TOTALS},
                received,
                close.due_at,
                status,
                checked,
                dict(NO_TOTALS),
                list(differences),
                details or {},
            ),
        )


@pytest.fixture
def week(new_partner):
    """A partner with three stores and closes on three days, in every status."""
    partner = new_partner(stores=("S1", "S2", "S3"))
    storage = partner.host.storage()
    _close(storage, partner.partner_id, "S2", "2026-11-19", "MATCHED")
    _close(
        storage,
        partner.partner_id,
        "S1",
        "2026-11-20",
        "MISMATCHED",
        ("tip_amount", "payment_total_amount"),
        {"missing_batch_seqs": [2], "unknown_payment_types": ["GIFT", "VOUCHER"], "unmapped_source_codes": []},
    )
    _close(storage, partner.partner_id, "S2", "2026-11-20", "MATCHED")
    _close(
        storage,
        partner.partner_id,
        "S3",
        "2026-11-20",
        "MISMATCHED",
        ("trade_record_count",),
        {"unmapped_source_codes": ["99"]},
    )
    _close(storage, partner.partner_id, "S1", "2026-11-21")
    return partner


def listed(partner, *options: str) -> list[tuple[str, str, str]]:
    shown = ok(partner.host.hq_in_process("reconcile", "list", partner.partner_id, *options))
    return [(row["STORE_ID"], row["BUSINESS_DATE"], row["STATUS"]) for row in table(shown)]


def test_reconcile_list_shows_every_close_of_the_partner_by_date_and_store(week, new_partner):
    other = new_partner(stores=("S1",))
    _close(other.host.storage(), other.partner_id, "S1", "2026-11-20", "MISMATCHED", ("tax_amount",))

    shown = ok(week.host.hq("reconcile", "list", week.partner_id))
    lines = shown.splitlines()
    assert lines[0].split() == [
        "PARTNER_ID",
        "STORE_ID",
        "BUSINESS_DATE",
        "STATUS",
        "CHECKED_AT",
        "DIFFERENCES",
        "NOTES",
    ]
    rows = table(shown)
    assert [(r["STORE_ID"], r["BUSINESS_DATE"], r["STATUS"]) for r in rows] == [
        ("S2", "2026-11-19", "MATCHED"),
        ("S1", "2026-11-20", "MISMATCHED"),
        ("S2", "2026-11-20", "MATCHED"),
        ("S3", "2026-11-20", "MISMATCHED"),
        ("S1", "2026-11-21", "RECEIVED"),
    ]
    mismatched = rows[1]
    assert mismatched["CHECKED_AT"] == "2026-11-21T04:20:00Z"
    assert mismatched["DIFFERENCES"] == "tip_amount,payment_total_amount"
    assert mismatched["NOTES"] == "missing batch_seq 2; unknown payment_type GIFT,VOUCHER"
    assert rows[3]["NOTES"] == "unmapped 99"
    assert rows[2]["DIFFERENCES"] == "-" and rows[2]["NOTES"] == ""
    assert rows[4]["CHECKED_AT"] == "-" and rows[4]["DIFFERENCES"] == "-"
    assert lines[len(rows) + 1] == "5 store-day(s): 1 RECEIVED, 2 MATCHED, 2 MISMATCHED."
    assert f"hq reconcile show {week.partner_id} STORE_ID BUSINESS_DATE" in lines[len(rows) + 2]
    assert "tax_amount" not in shown  # the other partner's close


@pytest.mark.parametrize(
    "options, expected",
    [
        (("--status", "MISMATCHED"), [("S1", "2026-11-20", "MISMATCHED"), ("S3", "2026-11-20", "MISMATCHED")]),
        (("--status", "received"), [("S1", "2026-11-21", "RECEIVED")]),
        (
            ("--date", "2026-11-20"),
            [("S1", "2026-11-20", "MISMATCHED"), ("S2", "2026-11-20", "MATCHED"), ("S3", "2026-11-20", "MISMATCHED")],
        ),
        (
            ("--from", "2026-11-20", "--to", "2026-11-21", "--store", "S1"),
            [("S1", "2026-11-20", "MISMATCHED"), ("S1", "2026-11-21", "RECEIVED")],
        ),
        (
            ("--from", "2026-11-20"),
            [
                ("S1", "2026-11-20", "MISMATCHED"),
                ("S2", "2026-11-20", "MATCHED"),
                ("S3", "2026-11-20", "MISMATCHED"),
                ("S1", "2026-11-21", "RECEIVED"),
            ],
        ),
        (("--to", "2026-11-19"), [("S2", "2026-11-19", "MATCHED")]),
        (("--store", "S2", "--status", "MATCHED", "--date", "2026-11-19"), [("S2", "2026-11-19", "MATCHED")]),
    ],
)
def test_reconcile_list_filters(week, options, expected):
    assert listed(week, *options) == expected


def test_reconcile_list_without_a_match_says_what_it_looked_for(week):
    shown = ok(
        week.host.hq_in_process(
            "reconcile",
            "list",
            week.partner_id,
            "--status",
            "MATCHED",
            "--store",
            "S3",
            "--from",
            "2026-11-01",
            "--to",
            "2026-11-30",
        )
    )
    assert shown == (
        f"No daily closes of {week.partner_id} with status MATCHED for store S3 from 2026-11-01 to 2026-11-30.\n"
    )
    assert "on 2026-12-01" in ok(week.host.hq_in_process("reconcile", "list", week.partner_id, "--date", "2026-12-01"))
    partner = make_partner(week.host, stores=())
    assert (
        ok(week.host.hq_in_process("reconcile", "list", partner.partner_id))
        == f"No daily closes of {partner.partner_id}.\n"
    )


def test_reconcile_list_refusals_and_usage_errors(week):
    hq = week.host.hq_in_process
    nobody = new_id("nobody")
    refused(week.host.hq("reconcile", "list", nobody), "unknown partner", nobody)
    refused(hq("reconcile", "list", week.partner_id, "--date", "20/11/2026"), "--date", "YYYY-MM-DD")
    refused(hq("reconcile", "list", week.partner_id, "--from", "2026-02-30"), "--from", "YYYY-MM-DD")
    refused(hq("reconcile", "list", week.partner_id, "--date", ""), "--date", "YYYY-MM-DD")
    refused(
        hq("reconcile", "list", week.partner_id, "--from", "2026-11-21", "--to", "2026-11-20"),
        "--from 2026-11-21 is after --to 2026-11-20",
    )
    usage_error(
        week.host.hq("reconcile", "list", week.partner_id, "--date", "2026-11-20", "--to", "2026-11-21"),
        "--date cannot be combined",
    )
    usage_error(hq_usage("reconcile", "list", week.partner_id, "--status", "DONE"), "invalid choice")
    usage_error(hq_usage("reconcile", "list", week.partner_id, "--format", "xml"), "invalid choice")


def test_reconcile_list_without_a_partner_lists_every_partners_closes(week, new_partner):
    other = new_partner(stores=("東京-01",))
    _close(other.host.storage(), other.partner_id, "東京-01", "2026-11-20", "MISMATCHED", ("tax_amount",))

    shown = ok(week.host.hq("reconcile", "list", "--date", "2026-11-20"))
    rows = [(row["PARTNER_ID"], row["STORE_ID"], row["STATUS"]) for row in table(shown)]
    assert [row for row in rows if row[0] in (week.partner_id, other.partner_id)] == sorted(
        [
            (week.partner_id, "S1", "MISMATCHED"),
            (week.partner_id, "S2", "MATCHED"),
            (week.partner_id, "S3", "MISMATCHED"),
            (other.partner_id, "東京-01", "MISMATCHED"),
        ]
    )
    assert "hq reconcile show PARTNER_ID STORE_ID BUSINESS_DATE" in shown


def test_reconcile_list_as_json_and_csv(week):
    import csv
    import json

    as_json = json.loads(ok(week.host.hq_in_process("reconcile", "list", week.partner_id, "--format", "json")))
    assert [(day["store_id"], day["business_date"], day["status"]) for day in as_json] == [
        ("S2", "2026-11-19", "MATCHED"),
        ("S1", "2026-11-20", "MISMATCHED"),
        ("S2", "2026-11-20", "MATCHED"),
        ("S3", "2026-11-20", "MISMATCHED"),
        ("S1", "2026-11-21", "RECEIVED"),
    ]
    assert as_json[1] == {
        "partner_id": week.partner_id,
        "store_id": "S1",
        "business_date": "2026-11-20",
        "status": "MISMATCHED",
        "checked_at": "2026-11-21T04:20:00Z",
        "differences": ["tip_amount", "payment_total_amount"],
        "notes": "missing batch_seq 2; unknown payment_type GIFT,VOUCHER",
    }
    assert as_json[4]["checked_at"] is None and as_json[4]["differences"] == []

    as_csv = list(
        csv.DictReader(
            io.StringIO(
                ok(week.host.hq("reconcile", "list", week.partner_id, "--status", "MISMATCHED", "--format", "csv"))
            )
        )
    )
    assert as_csv == [
        {
            "partner_id": week.partner_id,
            "store_id": "S1",
            "business_date": "2026-11-20",
            "status": "MISMATCHED",
            "checked_at": "2026-11-21T04:20:00Z",
            "differences": "tip_amount,payment_total_amount",
            "notes": "missing batch_seq 2; unknown payment_type GIFT,VOUCHER",
        },
        {
            "partner_id": week.partner_id,
            "store_id": "S3",
            "business_date": "2026-11-20",
            "status": "MISMATCHED",
            "checked_at": "2026-11-21T04:20:00Z",
            "differences": "trade_record_count",
            "notes": "unmapped 99",
        },
    ]
    # Nothing found: still a document a script can read.
    assert (
        ok(week.host.hq_in_process("reconcile", "list", week.partner_id, "--date", "2030-01-01", "--format", "json"))
        == "[]\n"
    )
    assert ok(
        week.host.hq_in_process("reconcile", "list", week.partner_id, "--date", "2030-01-01", "--format", "csv")
    ).splitlines() == ["partner_id,store_id,business_date,status,checked_at,differences,notes"]


# --- reconcile show -----------------------------------------------------------------------------


def test_reconcile_show_prints_raw_differences_and_details_as_readable_text(week):
    storage = week.host.storage()
    _close(
        storage,
        week.partner_id,
        "S2",
        "2026-11-22",
        "MISMATCHED",
        ("trade_record_count",),
        {
            "raw_differences": {"trade_record_count": -1, "tax_amount": "0.01", "net_sales_amount": "-12.50"},
            "batch_count_received": 2,
            "batch_count_expected": 3,
            "batch_seqs_received": [1, 3],
            "missing_batch_seqs": [2],
            "unmapped_source_codes": ["99", "VD/01"],
            "unknown_payment_types": ["GIFT"],
            "source_codes": ["01", "99", "VD/01"],
            "mapped_source_codes": {"01": "SALE"},
        },
    )
    shown = ok(week.host.hq("reconcile", "show", week.partner_id, "S2", "2026-11-22"))
    assert "{" not in shown and "[" not in shown and "'" not in shown  # no Python dict or list
    assert shown.splitlines()[0] == f"{week.partner_id} S2 2026-11-22: MISMATCHED (checked 2026-11-21T04:20:00Z)"
    rows = {row["FIELD"]: row for row in table("\n".join(shown.splitlines()[1:]))}
    assert list(rows["trade_record_count"].values())[3:] == ["-1", "DIFFERS"]
    assert (rows["tax_amount"]["DIFFERENCE"], rows["tax_amount"]["RESULT"]) == ("+0.01", "within tolerance")
    assert rows["tip_amount"]["DIFFERENCE"] == "0" and rows["tip_amount"]["RESULT"] == ""
    assert "DIFFERENCE is actual - expected" in shown
    assert "batches: 2 received of 3 expected (batch_seq 1, 3); missing batch_seq 2" in shown
    assert "unmapped source codes (counted, but not as revenue): 99, VD/01" in shown
    assert "payment types of unknown direction (left out of payment_total_amount): GIFT" in shown
    assert "source codes counted as: 01=SALE" in shown


def test_reconcile_show_of_a_received_day_says_when_it_is_due(week):
    shown = ok(week.host.hq_in_process("reconcile", "show", week.partner_id, "S1", "2026-11-21"))
    assert "RECEIVED (not reconciled yet, due 2027-11-21T04:05:00Z)" in shown.splitlines()[0]


def test_reconcile_show_and_run_of_an_unregistered_store_say_it_is_not_registered(week):
    for action in ("show", "run"):
        refused(
            week.host.hq("reconcile", action, week.partner_id, "S9", "2026-11-20"),
            "store S9 is not registered",
            week.partner_id,
            f"store list {week.partner_id}",
        )
    refused(week.host.hq("reconcile", "show", week.partner_id, "S2", "2026-11-25"), "no daily close received")
    ok(week.host.hq_in_process("store", "unregister", week.partner_id, "S3"))  # its results stay readable
    shown = ok(week.host.hq_in_process("reconcile", "show", week.partner_id, "S3", "2026-11-20"))
    assert "MISMATCHED" in shown and f"Store S3 is no longer registered for {week.partner_id}." in shown


def test_a_received_day_tells_the_partner_when_its_reconciliation_is_due(backend_host):
    from tests.backend_storage import storage_of

    partner = make_partner(backend_host, stores=("S1", "S2"))
    storage = storage_of(backend_host)
    _close(storage, partner.partner_id, "S1", "2026-11-21")  # received 2026-11-21T04:05Z, due a year later
    _close(storage, partner.partner_id, "S2", "2026-11-20", "MATCHED", details=NO_DETAILS)
    received = partner.get("daily-close/S1/2026-11-21").json()
    assert received["status"] == "RECEIVED" and received["reconciliation_due_at"] == "2027-11-21T04:05:00Z"
    assert "reconciliation_due_at" not in partner.get("daily-close/S2/2026-11-20").json()
    assert "reconciliation_due_at" not in partner.get("daily-close/S1/2026-11-20").json()  # NOT_RECEIVED


# --- payment types ------------------------------------------------------------------------------


def directions_of(partner) -> dict[str, tuple[str, str]]:
    shown = ok(partner.host.hq_in_process("payment-type", "list", partner.partner_id))
    return {row["PAYMENT_TYPE"]: (row["DIRECTION"], row["SOURCE"]) for row in table(shown)}


SUGGESTED = {
    "SALE": ("1", "suggested"),
    "REFUND": ("-1", "suggested"),
    "DEPOSIT": ("1", "suggested"),
    "DEPOSIT_APPLIED": ("0", "suggested"),
    "ADJUSTMENT": ("1", "suggested"),
}


def test_payment_type_list_shows_the_suggested_directions_and_the_partners_own(partner):
    hq = partner.host.hq_in_process
    shown = ok(partner.host.hq("payment-type", "list", partner.partner_id))
    assert shown.splitlines()[0].split() == ["PAYMENT_TYPE", "DIRECTION", "SOURCE"]
    assert list(directions_of(partner).items()) == list(SUGGESTED.items())  # in the reference list's order
    assert "PAYMENT_TYPE_UNKNOWN_DIRECTION" in shown.splitlines()[-1]

    assert "direction -1, money given back" in ok(
        hq("payment-type", "set", partner.partner_id, "PAYOUT", "--direction", "-1")
    )
    ok(hq("payment-type", "set", partner.partner_id, "GIFT", "--direction=0"))
    overridden = ok(hq("payment-type", "set", partner.partner_id, "ADJUSTMENT", "--direction", "-1"))
    assert "overrides the suggested direction 1" in overridden
    assert "suggested direction is 1 too" in ok(
        hq("payment-type", "set", partner.partner_id, "SALE", "--direction", "1")
    )
    assert "(was -1)" in ok(hq("payment-type", "set", partner.partner_id, "PAYOUT", "--direction", "+1"))
    assert directions_of(partner) == {
        **SUGGESTED,
        "SALE": ("1", "partner (same as suggested)"),
        "ADJUSTMENT": ("-1", "partner (overrides suggested 1)"),
        "GIFT": ("0", "partner"),
        "PAYOUT": ("1", "partner"),
    }
    assert list(directions_of(partner))[-2:] == ["GIFT", "PAYOUT"]  # the partner's own after, sorted
    assert partner.host.storage().payment_directions(partner.partner_id) == {
        "PAYOUT": 1,
        "GIFT": 0,
        "ADJUSTMENT": -1,
        "SALE": 1,
    }


def test_payment_directions_are_per_partner(new_partner):
    first, second = new_partner(), new_partner()
    ok(first.host.hq_in_process("payment-type", "set", first.partner_id, "GIFT", "--direction", "1"))
    assert "GIFT" in directions_of(first) and directions_of(second) == SUGGESTED


def test_payment_type_unset(partner):
    hq = partner.host.hq_in_process
    for code, direction in (("GIFT", "1"), ("REFUND", "1")):
        ok(hq("payment-type", "set", partner.partner_id, code, "--direction", direction))
    assert "PAYMENT_TYPE_UNKNOWN_DIRECTION" in ok(partner.host.hq("payment-type", "unset", partner.partner_id, "GIFT"))
    assert "suggested direction -1 again" in ok(hq("payment-type", "unset", partner.partner_id, "REFUND"))
    assert directions_of(partner) == SUGGESTED
    refused(partner.host.hq("payment-type", "unset", partner.partner_id, "GIFT"), "no direction of its own", "GIFT")
    refused(
        hq("payment-type", "unset", partner.partner_id, "SALE"),
        "no direction of its own",
        "SALE keeps its suggested direction 1",
    )


@pytest.mark.parametrize("code", ["x" * 50, "Gift card", "商品券", "a/b?#"])
def test_a_payment_type_is_any_string_of_up_to_50_characters(partner, code):
    ok(partner.host.hq_in_process("payment-type", "set", partner.partner_id, code, "--direction", "1"))
    assert partner.host.storage().payment_directions(partner.partner_id) == {code: 1}
    assert directions_of(partner)[code] == ("1", "partner")
    ok(partner.host.hq_in_process("payment-type", "unset", partner.partner_id, code))
    assert partner.host.storage().payment_directions(partner.partner_id) == {}


@pytest.mark.parametrize("code", ["", "x" * 51])
def test_an_invalid_payment_type_is_refused(partner, code):
    for command in (("set", partner.partner_id, code, "--direction", "1"), ("unset", partner.partner_id, code)):
        refused(partner.host.hq_in_process("payment-type", *command), "invalid payment type", "1 to 50 characters")
    assert partner.host.storage().payment_directions(partner.partner_id) == {}


@pytest.mark.parametrize(
    "args, words",
    [
        (("set", "p-1", "GIFT", "--direction", "2"), ("invalid choice",)),
        (("set", "p-1", "GIFT", "--direction", "in"), ("invalid int value",)),
        (("set", "p-1", "GIFT"), ("--direction",)),
        (("set", "p-1"), ()),
        (("unset", "p-1"), ()),
        (("list",), ()),
        (("delete", "p-1", "GIFT"), ("invalid choice",)),
    ],
)
def test_payment_type_usage_errors(args, words):
    usage_error(hq_usage("payment-type", *args), *words)


def test_payment_type_usage_error_as_a_separate_process(host):
    usage_error(host.hq("payment-type", "set", "p-1", "GIFT", "--direction", "-2"), "invalid choice")


@pytest.mark.parametrize("command", [("set", "GIFT", "--direction", "1"), ("unset", "GIFT"), ("list",)])
def test_payment_type_commands_refuse_an_unknown_partner(host, command):
    nobody = new_id("nobody")
    refused(host.hq_in_process("payment-type", command[0], nobody, *command[1:]), "unknown partner", nobody)
    assert host.storage().get_partner(nobody) is None
    assert host.storage().payment_directions(nobody) == {}


# --- end to end: a custom payment type, over HTTP, on both backends ----------------------------


@pytest.fixture
def shop(backend_host):
    partner = make_partner(backend_host)
    open_store(partner)
    return partner


def unknown_direction_paths(response: dict) -> list[tuple[str, str]]:
    """Where each PAYMENT_TYPE_UNKNOWN_DIRECTION points: the record's path and the field within it."""
    return [(w["path"], w["field"]) for w in response["warnings"] if w["code"] == UNKNOWN_DIRECTION]


def test_a_custom_payment_type_counts_once_hq_sets_its_direction(shop):
    host, partner_id = shop.host, shop.partner_id
    credit = 300
    record = trade_record(
        "S1",
        DAY,
        [Line("P-BURGER", 2, 550)],
        tax=88,
        payments=[Pay(1188 - credit, "SALE"), Pay(credit, "STORE_CREDIT")],
    )
    accepted = push(shop, "S1", [record])
    assert unknown_direction_paths(accepted) == [("trade_records[0]", "payments[1].payment_type")]
    fields = batch_fields(host, partner_id, accepted["batch_id"])
    assert (fields["kind"], fields["record_count"], fields["store_id"]) == ("trade-records", "1", "S1")
    gone = refused(host.hq_in_process("batch", "show", partner_id, str(uuid.uuid4())), "has no batch")
    assert "expired" not in gone  # markers never expire unless BATCH_MARKER_TTL_DAYS opts in

    # The POS counts store credit as money in; HQ does not know that yet, so it leaves it out.
    totals = totals_of([record], {"01"}, {**DIRECTIONS, "STORE_CREDIT": 1})
    result = close_and_wait(shop, "S1", totals)
    assert result["status"] == "MISMATCHED" and result["differences"] == ["payment_total_amount"]
    assert result["details"]["unknown_payment_types"] == ["STORE_CREDIT"]
    assert result["details"]["raw_differences"] == {"payment_total_amount": "-3.00"}
    [row] = table(ok(host.hq_in_process("reconcile", "list", partner_id, "--status", "MISMATCHED")))
    assert row["NOTES"] == "unknown payment_type STORE_CREDIT"

    # A wrong direction still does not match: the direction is what counts.
    ok(host.hq_in_process("payment-type", "set", partner_id, "STORE_CREDIT", "--direction", "-1"))
    assert "MISMATCHED" in ok(host.hq_in_process("reconcile", "run", partner_id, "S1", DAY))
    assert shop.get(f"daily-close/S1/{DAY}").json()["details"]["raw_differences"] == {"payment_total_amount": "-6.00"}

    # The right one, as HQ runs it: then a reconcile run matches the day.
    set_output = ok(host.hq("payment-type", "set", partner_id, "STORE_CREDIT", "--direction", "1"))
    assert "(was -1)" in set_output
    ran = ok(host.hq("reconcile", "run", partner_id, "S1", DAY))
    assert f"{partner_id} S1 {DAY}: MATCHED (checked " in ran.splitlines()[0]
    status = shop.get(f"daily-close/S1/{DAY}").json()
    assert status["status"] == "MATCHED" and status["details"]["unknown_payment_types"] == []
    assert status["actual"] == totals

    # New trade records with it are accepted without the warning, and a new day matches on its own.
    later = trade_record(
        "S1",
        NEXT_DAY,
        [Line("P-COLA", 1, 199)],
        opened_at="2026-11-21T12:00:00-05:00",
        payments=[Pay(199, "STORE_CREDIT")],
    )
    assert push(shop, "S1", [later], business_date=NEXT_DAY)["warnings"] == []
    next_totals = totals_of([later], {"01"}, {**DIRECTIONS, "STORE_CREDIT": 1})
    assert close_and_wait(shop, "S1", next_totals, business_date=NEXT_DAY)["status"] == "MATCHED"

    # Unset: HQ no longer knows it, and the warning is back.
    ok(host.hq_in_process("payment-type", "unset", partner_id, "STORE_CREDIT"))
    again = trade_record(
        "S1",
        NEXT_DAY,
        [Line("P-COLA", 1, 199)],
        opened_at="2026-11-21T12:00:00-05:00",
        payments=[Pay(199, "STORE_CREDIT")],
    )
    assert unknown_direction_paths(push(shop, "S1", [again], batch_seq=2, business_date=NEXT_DAY)) == [
        ("trade_records[0]", "payments[0].payment_type")
    ]


def test_payment_type_set_names_the_days_that_left_it_out(shop):
    host, partner_id = shop.host, shop.partner_id
    record = trade_record("S1", DAY, [Line("P-BURGER", 1, 550)], payments=[Pay(550, "VOUCHER")])
    push(shop, "S1", [record])
    assert close_and_wait(shop, "S1", totals_of([record], {"01"}, {"VOUCHER": 1}))["status"] == "MISMATCHED"
    shown = ok(host.hq_in_process("payment-type", "set", partner_id, "VOUCHER", "--direction", "1"))
    assert "1 reconciled day(s) left VOUCHER out" in shown
    assert f"python -m hq reconcile run {partner_id} S1 {DAY}" in shown.splitlines()[-1]
    assert "reconciled day(s)" not in ok(
        host.hq_in_process("payment-type", "set", partner_id, "OTHER", "--direction", "1")
    )


# --- the operator guide -----------------------------------------------------------------------------


def test_every_hq_command_is_in_the_operator_guides_table():
    guide = (ROOT / "docs" / "operator-guide.md").read_text(encoding="utf-8")
    table_rows = [line for line in guide.splitlines() if line.startswith("| `hq ")]
    commands = command_names()
    assert {"partner add", "reconcile list", "queue poison replay", "dashboard"} <= set(commands)  # from the parser
    for command in commands:
        group, _, action = command.partition(" ")  # `hq dashboard` is a group without actions
        name = f"hq {command}"
        assert any(
            name in row or (action and f"hq {group} " in row and f"/ `{action}`" in row) for row in table_rows
        ), name
