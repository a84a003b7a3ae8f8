"""The HTTP transport the Cosmos DB client sends with: libcurl (pycurl), instead of azure-core's transport on
`requests` (decisions 0057 and 0118). A 500-record accept makes about 36 requests, and in Azure CPU is what
instances are billed by: `requests` prepared every request again (~0.4 ms of CPU each here), and urllib3 on
http.client still spent about 0.5 ms a request in Python (headers written one by one, the answer's parsed by
the email package); libcurl does both in C, which halved the transport's CPU. What this keeps of azure-core's
transport: the same exceptions for the same failures (the SDK retries on them, outages.py turns them into
503), TLS verified with certifi's roots as `requests` does, timeouts as the SDK asks, a proxy from the
environment read once for the endpoint (libcurl is told it, and reads no variable itself). No retries and
no redirects here: retrying is the SDK's job."""

from __future__ import annotations

import queue
from io import BytesIO
from typing import Any

import certifi
import pycurl
from azure.core.exceptions import (
    ServiceRequestError,
    ServiceRequestTimeoutError,
    ServiceResponseError,
    ServiceResponseTimeoutError,
)
from azure.core.pipeline.transport import HttpRequest, HttpResponse, HttpTransport
from azure.core.utils import CaseInsensitiveDict

# What the SDK asks when it names no timeout (azure-core's transports' defaults).
DEFAULT_TIMEOUT_SECONDS = 300
# The request went out, its answer broke off: as urllib3's ProtocolError was, a failure of the response.
_ANSWER_BROKEN = frozenset({pycurl.E_GOT_NOTHING, pycurl.E_RECV_ERROR, pycurl.E_PARTIAL_FILE, pycurl.E_SEND_ERROR})
# libcurl's own headers that the SDK does not send: none is added (a body of 1 MB would otherwise wait for
# "100 Continue", a round trip more).
_NO_EXPECT = "Expect:"
_NO_DEFAULT_ACCEPT = "Accept:"


class CurlResponse(HttpResponse):
    """An answer read whole (the SDK reads every answer whole)."""

    def __init__(
        self, request: HttpRequest, status: int, reason: str, headers: CaseInsensitiveDict, body: bytes
    ) -> None:
        super().__init__(request, None)
        self.status_code = status
        self.reason = reason
        self.headers = headers  # case-insensitive, as the SDK reads them
        self.content_type = headers.get("content-type")
        self._body = body

    def body(self) -> bytes:
        return self._body

    def text(self, encoding: str | None = None) -> str:
        return self._body.decode(encoding or "utf-8-sig")


def parse_head(raw: bytes) -> tuple[int, str, CaseInsensitiveDict]:
    """The status, reason and headers of the last answer in `raw` (after a "100 Continue" comes another);
    a header sent twice is joined with ", ", as urllib3 and `requests` read it."""
    blocks = raw.decode("latin-1").strip("\r\n").split("\r\n\r\n")
    status_line, *lines = blocks[-1].split("\r\n")
    parts = status_line.split(" ", 2)
    named: dict[str, tuple[str, str]] = {}  # by the lower-case name: (the name as sent, its value)
    for line in lines:
        name, _, value = line.partition(":")
        value = value.strip()
        known = named.get(name.lower())
        named[name.lower()] = (name, value if known is None else f"{known[1]}, {value}")
    return int(parts[1]), parts[2] if len(parts) > 2 else "", CaseInsensitiveDict(named.values())


class CurlTransport(HttpTransport[HttpRequest, HttpResponse]):
    """One libcurl handle per concurrent request, each keeping its connection alive between requests."""

    def __init__(self, *, verify: bool, proxy_url: str | None = None) -> None:
        self.verify = verify
        self.proxy_url = proxy_url or ""  # "": none, whatever the environment says
        self._idle: queue.LifoQueue[pycurl.Curl] = queue.LifoQueue()  # the warmest connection first

    def __enter__(self) -> CurlTransport:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()

    def open(self) -> None:
        pass

    def close(self) -> None:
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return

    def send(self, request: HttpRequest, **kwargs: Any) -> HttpResponse:
        try:
            curl = self._idle.get_nowait()
            curl.reset()  # every option back to its default; the connection stays open
        except queue.Empty:
            curl = pycurl.Curl()
        head, body = BytesIO(), BytesIO()
        self._prepare(curl, request, kwargs, head, body)
        try:
            curl.perform()
        except pycurl.error as error:
            sent = curl.getinfo(pycurl.REQUEST_SIZE) > 0
            curl.close()  # its connection may be broken
            raise _azure_error(error, sent) from error
        self._idle.put(curl)
        status, reason, headers = parse_head(head.getvalue())
        return CurlResponse(request, status, reason, headers, body.getvalue())

    def _prepare(
        self, curl: pycurl.Curl, request: HttpRequest, kwargs: dict[str, Any], head: BytesIO, body: BytesIO
    ) -> None:
        curl.setopt(pycurl.URL, request.url)
        data = request.data
        if isinstance(data, str):
            data = data.encode("utf-8")
        if request.method == "GET" and not data:
            curl.setopt(pycurl.HTTPGET, 1)
        elif request.method == "HEAD":
            curl.setopt(pycurl.NOBODY, 1)
        else:
            curl.setopt(pycurl.CUSTOMREQUEST, request.method)
            curl.setopt(pycurl.POSTFIELDS, data or b"")
        sent = request.headers
        # An azure-core request's headers are a CaseInsensitiveDict: read in one pass (HTTP names are case-blind).
        pairs = sent.lowerkey_items() if isinstance(sent, CaseInsensitiveDict) else sent.items()
        headers = [f"{name}: {value}" for name, value in pairs]
        headers.append(_NO_EXPECT)
        if "accept" not in sent:
            headers.append(_NO_DEFAULT_ACCEPT)
        curl.setopt(pycurl.HTTPHEADER, headers)
        curl.setopt(pycurl.HTTP_VERSION, pycurl.CURL_HTTP_VERSION_1_1)
        curl.setopt(pycurl.PROXY, self.proxy_url)
        if self.verify:
            curl.setopt(pycurl.CAINFO, certifi.where())
        else:  # only ever for a loopback endpoint (connection.tls_verification)
            curl.setopt(pycurl.SSL_VERIFYPEER, 0)
            curl.setopt(pycurl.SSL_VERIFYHOST, 0)
        connect = kwargs.get("connection_timeout") or DEFAULT_TIMEOUT_SECONDS
        read = kwargs.get("read_timeout") or DEFAULT_TIMEOUT_SECONDS
        curl.setopt(pycurl.CONNECTTIMEOUT_MS, max(1, int(connect * 1000)))
        # A read timeout, as http.client's: no byte for `read` seconds.
        curl.setopt(pycurl.LOW_SPEED_LIMIT, 1)
        curl.setopt(pycurl.LOW_SPEED_TIME, max(1, int(read)))
        curl.setopt(pycurl.NOSIGNAL, 1)  # threads: timeouts without SIGALRM
        curl.setopt(pycurl.HEADERFUNCTION, head.write)
        curl.setopt(pycurl.WRITEFUNCTION, body.write)


def _azure_error(error: pycurl.error, sent: bool) -> Exception:
    code = error.args[0] if error.args else None
    if code == pycurl.E_OPERATION_TIMEDOUT:
        timeout = ServiceResponseTimeoutError if sent else ServiceRequestTimeoutError
        return timeout(error, error=error)
    if code in _ANSWER_BROKEN and sent:
        return ServiceResponseError(error, error=error)
    return ServiceRequestError(error, error=error)  # not connected, TLS refused, proxy: the request did not go through
