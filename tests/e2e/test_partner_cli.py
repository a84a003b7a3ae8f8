"""The partner command line (`pos-partner`, client/) against the local host, as a scheduler runs it: a
subprocess with the key in POS_API_KEY, read by its output and its exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pos_partner_client.cli import (
    EXIT_MISMATCHED,
    EXIT_OK,
    EXIT_PENDING,
    EXIT_REFUSED,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
)

from devhost.processes import free_port
from tests.conftest import ROOT, make_partner
from tests.e2e.test_partner_client import DAY, MAPPINGS, close_of, records_of_day
from tests.payloads import store

EXAMPLE_DAY = ROOT / "examples" / "day"


def pos_partner(partner, *args: str, base_url: str | None = None) -> subprocess.CompletedProcess:
    # as a scheduler runs it: no terminal, and no COLUMNS (pytest-xdist's workers set one)
    env = {name: value for name, value in os.environ.items() if name not in ("COLUMNS", "LINES")}
    env |= {"POS_API_KEY": partner.key, "POS_BASE_URL": base_url or partner.host.base_url}
    ran = subprocess.run(
        [sys.executable, "-m", "pos_partner_client", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert partner.key not in ran.stdout + ran.stderr
    return ran


def day_folder(folder: Path, store_id: str, records: list[dict], close: dict) -> Path:
    """A folder as a POS writes it: master data bodies, the records as a plain list, the control totals."""
    folder.mkdir()
    (folder / "stores.json").write_text(json.dumps({"stores": [store(store_id)]}))
    (folder / "mapping.json").write_text(json.dumps({"mappings": MAPPINGS}))
    (folder / f"trade-records-{store_id}.json").write_text(json.dumps(records))
    (folder / f"daily-close-{store_id}.json").write_text(
        json.dumps({"store_id": store_id, "business_date": DAY, **close})
    )
    return folder


def test_push_the_example_folder_to_matched_then_status_codes_and_validate(host):
    partner = make_partner(host, ("NYC-001", "TKY-001"))
    pushed = pos_partner(partner, "push", str(EXAMPLE_DAY), "--timeout", "60")
    assert pushed.returncode == EXIT_OK, pushed.stdout + pushed.stderr
    assert "2 store-day(s), 22 trade records" in pushed.stdout
    assert pushed.stdout.count(" MATCHED ") == 2 and "result: every store-day MATCHED" in pushed.stdout
    assert "Warnings" not in pushed.stdout and "Problems" not in pushed.stdout

    again = pos_partner(partner, "push", str(EXAMPLE_DAY), "--timeout", "60")  # a rerun is safe
    assert again.returncode == EXIT_OK and "result: every store-day MATCHED" in again.stdout, again.stdout

    status = pos_partner(partner, "status", "NYC-001", "2026-11-20")
    assert status.returncode == EXIT_OK and "NYC-001 2026-11-20: MATCHED" in status.stdout, status.stdout
    assert "net_sales_amount" in status.stdout and "170.57" in status.stdout

    codes = pos_partner(partner, "codes", "payment-types")
    assert codes.returncode == EXIT_OK and "DEPOSIT_APPLIED" in codes.stdout, codes.stdout
    every_list = pos_partner(partner, "codes")
    assert every_list.returncode == EXIT_OK and every_list.stdout.count("(version ") == 6, every_list.stdout

    validate = pos_partner(partner, "validate", str(EXAMPLE_DAY))  # the same batches: answered as received
    assert validate.returncode == EXIT_OK and "answers: 7 ALREADY_RECEIVED" in validate.stdout, validate.stdout


def test_validate_checks_a_folder_with_hq_and_stores_nothing(host, tmp_path):
    partner = make_partner(host, ("S1",))
    records = records_of_day("S1", 3)
    pushed = pos_partner(partner, "push", str(day_folder(tmp_path / "day", "S1", records, close_of(records))))
    assert pushed.returncode == EXIT_OK and "every store-day MATCHED" in pushed.stdout, pushed.stdout + pushed.stderr

    changed = records_of_day("S1", 4)  # one record more, and one that breaks a line's amount identity
    changed[1]["items"][0]["line_amount"] = "99.99"
    validated = pos_partner(partner, "validate", str(day_folder(tmp_path / "more", "S1", changed, close_of(changed))))
    assert validated.returncode == EXIT_OK, validated.stdout + validated.stderr
    assert (
        "answers: 2 ALREADY_RECEIVED, 2 VALID" in validated.stdout  # the same masters; the new day
        and "LINE_AMOUNT_MISMATCH" in validated.stdout
        and "MATCHED" not in validated.stdout
    )
    status = pos_partner(partner, "status", "S1", DAY)  # nothing of the validated folder was stored
    assert status.returncode == EXIT_OK and "MATCHED" in status.stdout, status.stdout
    assert partner.get(f"/daily-close/S1/{DAY}").json()["actual"]["trade_record_count"] == 3

    refused = records_of_day("S1", 2)
    refused[0]["currency"] = "EUR"  # the store's currency is USD: the real send would be refused
    checked = pos_partner(partner, "validate", str(day_folder(tmp_path / "bad", "S1", refused, close_of(refused))))
    assert checked.returncode == EXIT_REFUSED and "INVALID_PAYLOAD" in checked.stdout, checked.stdout


def test_a_mismatched_day_shows_its_warnings_and_exits_1(host, tmp_path):
    partner = make_partner(host, ("S1",))
    records = records_of_day("S1", 3)
    records[1]["items"][0]["line_amount"] = "99.99"  # stored, with a warning
    close = {**close_of(records), "tax_amount": "9.99"}  # the POS's tax total is not HQ's
    pushed = pos_partner(partner, "push", str(day_folder(tmp_path / "day", "S1", records, close)), "--timeout", "60")
    assert pushed.returncode == EXIT_MISMATCHED, pushed.stdout + pushed.stderr
    assert "Warnings (1)" in pushed.stdout and "LINE_AMOUNT_MISMATCH" in pushed.stdout
    assert "trade_records[1]" in pushed.stdout and "S1 2026-11-20 batch 1" in pushed.stdout
    assert "MISMATCHED" in pushed.stdout and "tax_amount" in pushed.stdout
    assert pos_partner(partner, "status", "S1", DAY).returncode == EXIT_MISMATCHED


def test_a_refused_request_exits_3_with_its_code_and_request_id(host, tmp_path):
    partner = make_partner(host, ("S1",))
    records = records_of_day("S2", 2)  # S2 is not registered for this partner: its master data is refused
    pushed = pos_partner(partner, "push", str(day_folder(tmp_path / "day", "S2", records, close_of(records))))
    assert pushed.returncode == EXIT_REFUSED, pushed.stdout + pushed.stderr
    assert "Problems" in pushed.stdout and "STORE_NOT_ALLOWED" in pushed.stdout
    row = next(line for line in pushed.stdout.splitlines() if "STORE_NOT_ALLOWED" in line)
    cells = [cell.strip() for cell in row.split("│") if cell.strip()]
    assert cells[:3] == ["PUT stores", "403", "STORE_NOT_ALLOWED"] and len(cells[-1]) >= 8, row  # request_id


def test_not_reconciled_yet_exits_5_and_unreachable_exits_4(host, tmp_path):
    partner = make_partner(host, ("S1",))
    records = records_of_day("S1", 2)
    folder = day_folder(tmp_path / "day", "S1", records, close_of(records))
    pending = pos_partner(partner, "push", str(folder), "--timeout", "0")
    assert pending.returncode == EXIT_PENDING, pending.stdout + pending.stderr
    assert "RECEIVED" in pending.stdout and "not reconciled yet" in pending.stdout

    nowhere = f"http://127.0.0.1:{free_port()}/pos/v1"
    unreachable = pos_partner(partner, "push", str(folder), "--give-up-after", "2", base_url=nowhere)
    assert unreachable.returncode == EXIT_UNAVAILABLE, unreachable.stdout + unreachable.stderr
    assert "UNREACHABLE" in unreachable.stdout and "run the same push again later" in unreachable.stdout


def test_usage_errors_exit_2(host, tmp_path):
    partner = make_partner(host, ("S1",))
    assert pos_partner(partner, "push", str(tmp_path / "missing")).returncode == EXIT_USAGE
    no_key = subprocess.run(
        [sys.executable, "-m", "pos_partner_client", "status", "S1", DAY, "--base-url", host.base_url],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert no_key.returncode == EXIT_USAGE and "POS_API_KEY" in no_key.stderr


# --- --format json and tables fitted to the terminal (decision 0081) ---------------------------------------


def test_json_for_a_scheduler(host, tmp_path):
    partner = make_partner(host, ("S1",))
    records = records_of_day("S1", 3)
    records[1]["items"][0]["line_amount"] = "99.99"  # stored, with a warning
    close = {**close_of(records), "tax_amount": "9.99"}  # the POS's tax total is not HQ's
    folder = day_folder(tmp_path / "day", "S1", records, close)
    pushed = pos_partner(partner, "push", str(folder), "--timeout", "60", "--format", "json")
    assert pushed.returncode == EXIT_MISMATCHED, pushed.stdout + pushed.stderr
    report = json.loads(pushed.stdout)
    assert (report["store_days"], report["trade_records"], report["exit_code"]) == (1, 3, EXIT_MISMATCHED)
    assert [(w["request"], w["code"], w["path"]) for w in report["warnings"]] == [
        ("S1 2026-11-20 batch 1", "LINE_AMOUNT_MISMATCH", "trade_records[1]")
    ]
    assert [(day["store_id"], day["status"]) for day in report["results"]] == [("S1", "MISMATCHED")]
    assert report["problems"] == [] and report["result"] == "a store-day is MISMATCHED"

    status = pos_partner(partner, "status", "S1", DAY, "--format", "json")
    day = json.loads(status.stdout)
    assert (status.returncode, day["status"], day["exit_code"]) == (EXIT_MISMATCHED, "MISMATCHED", EXIT_MISMATCHED)
    assert day["expected"]["trade_record_count"] == 3 and "differences" in day

    codes = json.loads(pos_partner(partner, "codes", "payment-types", "--format", "json").stdout)
    assert "DEPOSIT_APPLIED" in [code["code"] for code in codes["payment-types"]["codes"]]


def test_tables_fit_the_terminal(host, tmp_path):
    partner = make_partner(host, ("S1",))
    records = records_of_day("S1", 2)
    records[0]["items"][0]["line_amount"] = "99.99"
    folder = day_folder(tmp_path / "day", "S1", records, {**close_of(records), "tax_amount": "9.99"})
    env = {**os.environ, "POS_API_KEY": partner.key, "POS_BASE_URL": host.base_url, "COLUMNS": "80"}
    ran = subprocess.run(
        [sys.executable, "-m", "pos_partner_client", "push", str(folder), "--timeout", "60"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == EXIT_MISMATCHED, ran.stdout + ran.stderr
    assert max(len(line) for line in ran.stdout.splitlines()) <= 80, ran.stdout
    assert "LINE_AMOUNT_MISMATCH · trade_records[0]" in ran.stdout  # a row as a block: 80 columns hold no table
    wide = subprocess.run(
        [sys.executable, "-m", "pos_partner_client", "status", "S1", DAY],
        cwd=ROOT,
        env={**env, "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert max(len(line) for line in wide.stdout.splitlines()) <= 100 and "┃ field" in wide.stdout, wide.stdout
