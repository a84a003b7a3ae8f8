"""The real browser and the real dashboard, for the browser tests and `make screenshots`.

Playwright drives Debian's /usr/bin/chromium (`make browser` installs it), never a browser of its own; the
flags keep a headless chromium quiet on a machine with no network but loopback (no update, sync or
background connections that would be refused). The dashboard runs as HQ runs it, `python -m hq
dashboard --port N`, in its own process on the settings (data dir) it is given.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from devhost.processes import free_port, stop_process, wait_until_serving

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextlib.contextmanager
def chromium(user_data_dir: Path, viewport: dict | None = None) -> Iterator:
    """A Playwright browser context on Debian's chromium with a fresh profile in `user_data_dir`."""
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        raise RuntimeError(f"{CHROMIUM} is missing: `make browser` installs Debian's chromium")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(user_data_dir),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport=viewport or {"width": 1400, "height": 900},
        )
        try:
            yield context
        finally:
            context.close()


@dataclass
class Dashboard:
    """A running `python -m hq dashboard`."""

    base_url: str
    process: subprocess.Popen
    log_path: Path

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def overview_url(self, partner_id: str, first: str, last: str) -> str:
        return self.url(f"partners/{segment(partner_id)}?from={first}&to={last}")

    def store_day_url(self, partner_id: str, store_id: str, business_date: str) -> str:
        return self.url(f"partners/{segment(partner_id)}/stores/{segment(store_id)}/days/{business_date}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        stop_process(self.process)


def segment(text: str) -> str:
    """A path segment, percent-encoded (store_ids may hold spaces, punctuation and any script)."""
    return quote(text, safe="")


def start_dashboard(env: dict, log_path: Path) -> Dashboard:
    """`python -m hq dashboard` on the settings in `env` (POS_DATA_DIR ...), once it answers."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "hq", "dashboard", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log_path.open("wb"),
        stderr=subprocess.STDOUT,
    )
    dashboard = Dashboard(f"http://127.0.0.1:{port}", process, log_path)
    try:
        wait_until_serving(process, port, "/", "the dashboard", dashboard.log)
    except RuntimeError:
        dashboard.stop()
        raise
    return dashboard
