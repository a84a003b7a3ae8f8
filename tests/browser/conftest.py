"""Browser test fixtures: the local host (tests/conftest.start_host) on a temporary SQLite data dir, the HQ
dashboard on the same data, and one headless chromium per session (a new tab per test).

Data reaches the dashboard as it reaches HQ: pushed over HTTP to the local host, reconciled by its queue
trigger. `failing_host` is a second host whose every reconciliation fails (an injected fault), so that its
closes stay RECEIVED past their time and their requests end on the poison queue.
"""

from __future__ import annotations

import pytest

from tests.browser.chromium import Dashboard, chromium, start_dashboard
from tests.conftest import LocalHost, start_host


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


@pytest.fixture
def page(browser):
    tab = browser.new_page()
    tab.set_default_timeout(15_000)
    yield tab
    tab.close()


@pytest.fixture(scope="session")
def dashboard(host: LocalHost, tmp_path_factory) -> Dashboard:
    running = start_dashboard(host.env, tmp_path_factory.mktemp("dashboard") / "dashboard.log")
    yield running
    running.stop()


@pytest.fixture(scope="session")
def failing_host(tmp_path_factory) -> LocalHost:
    """Every reconciliation fails at its first step; a request is tried twice, a second apart, then
    poisoned."""
    running = start_host(
        tmp_path_factory.mktemp("failing-host"),
        POS_FAULTS="reconcile.close_read:-1",
        AzureFunctionsJobHost__extensions__queues__maxDequeueCount="2",
        AzureFunctionsJobHost__extensions__queues__visibilityTimeout="00:00:01",
    )
    yield running
    running.stop()


@pytest.fixture(scope="session")
def failing_dashboard(failing_host: LocalHost, tmp_path_factory) -> Dashboard:
    running = start_dashboard(failing_host.env, tmp_path_factory.mktemp("failing-dashboard") / "dashboard.log")
    yield running
    running.stop()
