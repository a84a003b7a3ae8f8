"""`hq`'s tables aligned as a terminal shows them (decision 0098): Japanese and other wide characters take two
columns, so the columns after them start where the header's do; and `hq reconcile show` prints what HQ
counted per transaction type, on a ramen shop's day pushed over HTTP."""

from __future__ import annotations

import uuid

from rich.cells import cell_len

from tests.e2e.test_cli import ok
from tests.e2e.test_counted_records import close, open_ramen_shop, push_batches
from tests.ramen_day import DAY, STORE, ramen_records


def column_at(line: str, value: str) -> int:
    """The display column where `value` starts in `line`."""
    return cell_len(line[: line.index(value)])


def test_hq_partner_list_keeps_its_columns_with_wide_names(host):
    wide, latin = f"jp-{uuid.uuid4().hex[:6]}", f"eu-{uuid.uuid4().hex[:6]}"
    ok(host.hq("partner", "add", wide, "--name", "麺屋 一番 株式会社"))
    ok(host.hq("partner", "add", latin, "--name", "Café Zürich"))
    lines = ok(host.hq("partner", "list")).splitlines()
    header = lines[0]
    for partner_id in (wide, latin):
        line = next(line for line in lines if line.startswith(partner_id))
        assert column_at(line, "ACTIVE") == column_at(header, "STATUS"), line
        assert column_at(line, "default") == column_at(header, "RATE_LIMIT"), line


def test_hq_reconcile_show_prints_what_was_counted_per_type(host):
    partner = open_ramen_shop(host)
    records = ramen_records()
    close(partner, records, len(push_batches(partner, records)))
    shown = ok(host.hq("reconcile", "show", partner.partner_id, STORE, DAY))
    lines = shown[shown.index("counted per transaction type") :].splitlines()
    header = lines[1]
    rows = {line.split()[0]: line.split() for line in lines[2:] if line.strip()}
    assert header.split()[:3] == ["TYPE", "COUNTED", "AS"]
    assert rows["01"][:4] == ["01", "SALE", "yes", "12"]  # the voided ticket too: counted by its type
    assert rows["02"][:4] == ["02", "RETURN", "yes", "1"]
    assert rows["02"][-3:] == ["-891", "-89", "0"]
