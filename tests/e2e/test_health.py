"""GET /health costs nothing to abuse (decision 0075): whatever the rate of calls, the backends are
checked at most once per interval per instance; a part that fails is named in a 503, and health
recovers at the next check after the part is back. Counted from the host's own log: one
`health_check` line per backend check."""

from __future__ import annotations

import math
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests

from devhost.azurite_emulator import start_azurite
from devhost.processes import free_port
from tests.conftest import start_azure_host, start_host
from tests.e2e.test_observability import log_entries
from triggers.health import CHECK_INTERVAL_SECONDS


def checks_logged(host) -> list[dict]:
    return [entry for entry in log_entries(host.log()) if entry.get("event") == "health_check"]


def hammer(url: str, seconds: float, clients: int = 4) -> list[int]:
    """Call `url` from `clients` threads without pause for `seconds`; the statuses answered."""
    deadline = time.monotonic() + seconds

    def client() -> list[int]:
        statuses = []
        with requests.Session() as session:
            while time.monotonic() < deadline:
                statuses.append(session.get(url, timeout=30).status_code)
        return statuses

    with ThreadPoolExecutor(clients) as pool:
        return [status for statuses in pool.map(lambda _: client(), range(clients)) for status in statuses]


def test_any_rate_of_calls_checks_the_backends_once_per_interval(tmp_path):
    # A host of its own: hundreds of logged requests (random request ids) stay out of the shared host's log,
    # which other tests search for digits that must not be there.
    host = start_host(tmp_path)
    try:
        before = len(checks_logged(host))
        started = time.monotonic()
        statuses = hammer(host.url("health"), CHECK_INTERVAL_SECONDS * 1.5)
        elapsed = time.monotonic() - started
        time.sleep(0.3)  # the host's last log line reaches the file
        checks = len(checks_logged(host)) - before
    finally:
        host.stop()
    assert len(statuses) > 20 and set(statuses) == {200}
    # Checks are at least one interval apart, and the result cached before the window expires in it.
    assert 1 <= checks <= math.floor(elapsed / CHECK_INTERVAL_SECONDS) + 1, (checks, len(statuses), elapsed)


class SwitchableProxy:
    """A TCP forwarder to a local port that the test cuts (new connections refused, open ones closed)
    and restores: an outage of a real service, on the same address, without restarting it."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = free_port()
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._server: socket.socket | None = None
        self.up()

    def up(self) -> None:
        self._server = socket.create_server(("127.0.0.1", self.port))
        self._server.settimeout(0.1)
        threading.Thread(target=self._accept, args=(self._server,), daemon=True).start()

    def down(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        with self._lock:
            for connection in self._open:
                connection.close()
            self._open.clear()

    def _accept(self, server: socket.socket) -> None:
        while self._server is server:
            try:
                client, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            with self._lock:
                self._open.update((client, upstream))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                end.close()


def wait_for_status(url: str, status: int, timeout: float) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if requests.get(url, timeout=30).status_code == status:
            return time.monotonic()
        time.sleep(0.2)
    raise AssertionError(f"health did not answer {status} within {timeout} s")


def test_a_failing_part_is_named_in_a_503_and_health_recovers_after_the_interval(tmp_path, cosmos_emulator):
    azurite = start_azurite(tmp_path)
    proxy = SwitchableProxy(azurite.port)
    host = start_azure_host(
        tmp_path, cosmos_emulator, azurite.connection_string.replace(str(azurite.port), str(proxy.port))
    )
    url = host.url("health")
    try:
        assert requests.get(url, timeout=30).status_code == 200
        proxy.down()
        # The check that finds the queue down takes the SDK's retries (about 10 s); meanwhile every call
        # answers the last result at once instead of waiting for it.
        cut = time.monotonic()
        while (answered := requests.get(url, timeout=30)).status_code == 200:
            assert answered.elapsed.total_seconds() < 2
            assert time.monotonic() - cut < CHECK_INTERVAL_SECONDS + 30, "the outage was never noticed"
            time.sleep(0.2)
        noticed = time.monotonic()
        assert answered.status_code == 503
        assert answered.json() == {"status": "unavailable", "checks": {"storage": "ok", "queue": "unavailable"}}
        checks = len(checks_logged(host))

        proxy.up()
        recovered = wait_for_status(url, 200, CHECK_INTERVAL_SECONDS + 15)
        # The 503 was kept for an interval (a check then found the queue back), not checked on every call.
        assert recovered - noticed >= CHECK_INTERVAL_SECONDS - 1
        assert len(checks_logged(host)) - checks <= 2
        assert requests.get(url, timeout=30).json() == {"status": "ok", "checks": {"storage": "ok", "queue": "ok"}}
    finally:
        host.stop()
        proxy.down()
        azurite.stop()
