"""The Cosmos DB client's transport (backends/cosmos/transport.py) on real sockets: what it sends, how it reads
an answer, and which of azure-core's exceptions each failure becomes (the SDK decides on them whether to retry;
outages.py makes them a 503)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

import pytest
from azure.core.exceptions import (
    ServiceRequestError,
    ServiceRequestTimeoutError,
    ServiceResponseError,
    ServiceResponseTimeoutError,
)
from azure.core.pipeline.transport import HttpRequest

from backends.cosmos.transport import CurlTransport, parse_head
from tests.raw_http import read_request

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nx-ms-item: 1\r\nX-MS-Item: 2\r\nContent-Length: 2\r\n\r\n{}"


@pytest.fixture
def server() -> Iterator[Callable[[Callable[[socket.socket], None]], str]]:
    """A loopback HTTP server answering each connection with `answer(connection)`; its URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    threads = []

    def serve(answer: Callable[[socket.socket], None]) -> str:
        def run() -> None:
            while True:
                try:
                    connection, _ = listener.accept()
                except OSError:
                    return
                with connection:
                    answer(connection)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        threads.append(thread)
        return f"http://127.0.0.1:{listener.getsockname()[1]}/dbs/db/colls/c/docs"

    yield serve
    listener.close()


def test_a_request_goes_out_as_the_sdk_built_it_and_its_answer_is_read_whole(server):
    seen = []

    def answer(connection):
        for _ in range(2):  # two requests on one kept-alive connection
            seen.append(read_request(connection))
            connection.sendall(OK)

    url = server(answer)
    transport = CurlTransport(verify=True)
    body = '{"name":"店"}'.encode()
    request = HttpRequest("POST", url, headers={"x-ms-version": "2020-07-15", "Content-Length": str(len(body))})
    request.data = body
    first = transport.send(request)
    second = transport.send(HttpRequest("GET", url, headers={"Accept": "application/json"}))
    transport.close()
    assert first.status_code == 200 and first.reason == "OK" and first.body() == b"{}"
    assert first.headers["X-Ms-Item"] == "1, 2" and first.content_type == "application/json"
    assert second.status_code == 200
    head, _, sent = seen[0].partition(b"\r\n\r\n")
    assert head.startswith(b"POST /dbs/db/colls/c/docs HTTP/1.1\r\n") and sent == body
    lines = head.lower().split(b"\r\n")
    assert b"x-ms-version: 2020-07-15" in lines
    assert not any(line.startswith((b"expect:", b"accept:")) for line in lines)  # nothing libcurl adds
    assert seen[1].startswith(b"GET /dbs/db/colls/c/docs HTTP/1.1\r\n") and b"accept: application/json" in (
        seen[1].lower()
    )


def test_the_last_answer_after_a_100_continue_is_the_one_read():
    status, reason, headers = parse_head(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 429 Too Many Requests\r\nx-ms-retry-after-ms: 5\r\n\r\n"
    )
    assert (status, reason, dict(headers)) == (429, "Too Many Requests", {"x-ms-retry-after-ms": "5"})


def test_an_account_not_listening_is_a_request_error():
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
    with pytest.raises(ServiceRequestError):
        CurlTransport(verify=True).send(HttpRequest("GET", f"http://127.0.0.1:{port}/"))


def test_an_answer_that_breaks_off_is_a_response_error(server):
    def answer(connection):
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{")  # then closed

    with pytest.raises(ServiceResponseError):
        CurlTransport(verify=True).send(HttpRequest("GET", server(answer)))


def test_no_answer_within_the_read_timeout_is_a_response_timeout(server):
    release = threading.Event()

    def answer(connection):
        read_request(connection)
        release.wait(10)

    url = server(answer)
    try:
        with pytest.raises(ServiceResponseTimeoutError):
            CurlTransport(verify=True).send(HttpRequest("GET", url), read_timeout=1)
    finally:
        release.set()


def test_a_connection_not_made_in_time_is_a_request_failure_never_a_response_one():
    # An address nothing answers (TEST-NET-1, RFC 5737): the attempt times out (ServiceRequestTimeoutError), or,
    # on a machine with no route at all, fails at once (ServiceRequestError); either way the SDK may retry a write.
    with pytest.raises((ServiceRequestTimeoutError, ServiceRequestError)) as raised:
        CurlTransport(verify=True).send(HttpRequest("GET", "http://192.0.2.1:9/"), connection_timeout=0.2)
    assert not isinstance(raised.value, ServiceResponseError)


def test_a_certificate_not_signed_by_a_known_root_is_refused(cosmos_emulator):
    # The emulator's self-signed certificate: refused when verifying, read when not (loopback only).
    with pytest.raises(ServiceRequestError):
        CurlTransport(verify=True).send(HttpRequest("GET", cosmos_emulator.endpoint))
    assert CurlTransport(verify=False).send(HttpRequest("GET", cosmos_emulator.endpoint)).status_code < 500
