"""`python -m hq dashboard` over real HTTP on SQLite data (decision 0078): every page answers with the contract's
hooks, a store_id with punctuation travels percent-encoded, and the server answers GET only, on the
loopback address, to loopback host names. The data: tests/dashboard_days.py, written with SqliteStorage."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

from backends.sqlite.storage import SqliteStorage
from devhost.processes import stop_process
from tests.dashboard_days import HOSTILE, populate

ROOT = Path(__file__).resolve().parents[2]
RANGE = "from=2026-11-19&to=2026-11-21"


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    data = tmp_path_factory.mktemp("dashboard") / "data"
    populate(SqliteStorage(data))
    env = {**os.environ, "POS_BACKEND": "sqlite", "POS_DATA_DIR": str(data), "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "hq", "dashboard", "--port", "0"], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith("HQ dashboard on http://127.0.0.1:"), line
        yield line.split()[3].rstrip("/")
    finally:
        stop_process(process)


def fetch(base: str, path: str, method: str = "GET", headers: dict | None = None):
    request = urllib.request.Request(base + path, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read().decode("utf-8")


PAGES = {
    "/": ['<tr data-partner="acme">', '<td class="num s-OVERDUE" data-counter="OVERDUE">'],
    f"/partners/acme?{RANGE}": [
        '<table id="grid">',
        'data-store="S2" data-date="2026-11-21" data-status="NOT_RECEIVED"',
        '<form id="filters" method="get"',
        '<span data-counter="MISMATCHED">1</span>',
        '<figure id="records-chart"><svg',
        '<rect class="bar" data-date="2026-11-21" data-value="5"',
    ],
    f"/partners/acme?{RANGE}&status=MISMATCHED&store=s1": ['data-status="MISMATCHED"', '<tr data-store="S1">'],
    "/partners/acme/stores/S1/days/2026-11-20": [
        '<p id="status" data-status="MISMATCHED"',
        '<tr data-field="net_sales_amount" class="differs">',
        '<td class="expected num">10.00</td><td class="actual num">9.00</td><td class="difference num">-1.00</td>',
        '<li data-cause="unmapped_source_codes">',
        '<tr data-batch-seq="1">',
        '<table id="unknown-products">',
        '<code id="rerun">python -m hq reconcile run acme S1 2026-11-20</code>',
    ],
    "/partners/acme/profile": ['<table id="keys">', '<tr data-store="S1">', '<figure id="warnings-chart"><svg'],
    "/operations": ['<table id="poisoned">', '<tr data-partner="acme" data-store="S2" data-date="2026-11-20">'],
}


@pytest.mark.parametrize("path", list(PAGES))
def test_each_page_answers_with_its_hooks(dashboard, path):
    status, headers, body = fetch(dashboard, path)
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in headers["Content-Security-Policy"] and "<script" not in body
    for hook in PAGES[path]:
        assert hook in body, hook
    assert '<a href="/">' in body and '<a href="/operations">' in body


def test_store_ids_with_punctuation_travel_percent_encoded(dashboard):
    _, _, grid = fetch(dashboard, f"/partners/acme?{RANGE}")
    for store in HOSTILE:
        path = f"/partners/acme/stores/{quote(store, safe='')}/days/2026-11-20"
        assert f'href="{path}"' in grid
        status, _, body = fetch(dashboard, path)
        assert status == 200 and 'data-status="NOT_RECEIVED"' in body and "<script>alert" not in body


@pytest.mark.parametrize(
    "path, status",
    [("/partners/nobody", 404), ("/partners/acme/stores/S1/days/20-11-2026", 400), ("/favicon.ico", 404)],
)
def test_unknown_things_and_bad_dates_get_a_plain_page(dashboard, path, status):
    answer, _, body = fetch(dashboard, path)
    assert answer == status and "<main>" in body and "Traceback" not in body


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"])
def test_it_answers_get_only(dashboard, method):
    status, headers, _ = fetch(dashboard, "/", method)
    assert status == 405 and headers["Allow"] == "GET"


def test_a_host_name_other_than_loopback_is_refused(dashboard):
    assert fetch(dashboard, "/", headers={"Host": "attacker.example:80"})[0] == 400
    assert fetch(dashboard, "/", headers={"Host": "localhost"})[0] == 200
