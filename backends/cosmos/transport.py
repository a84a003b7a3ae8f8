"""The HTTP transport the Cosmos DB client sends with: urllib3 alone, instead of azure-core's transport on
`requests`. `requests` prepares every request again (its session's headers, cookies, hooks and settings
merged each time): about 0.4 ms of CPU a request here, two fifths of a point read's. A batch of 500
records makes about 36 requests, and in Azure CPU is what instances are billed by (decisions 0056 and
0057). What this keeps of azure-core's transport: the same exceptions for the same
failures (the SDK retries on them, outages.py turns them into 503), TLS verified with certifi's roots as
`requests` does, timeouts as the SDK asks, a proxy from the environment read once for the endpoint. No
retries and no redirects here: retrying is the SDK's job."""

from __future__ import annotations

from typing import Any

import certifi
import urllib3
from azure.core.exceptions import (
    ServiceRequestError,
    ServiceRequestTimeoutError,
    ServiceResponseError,
    ServiceResponseTimeoutError,
)
from azure.core.pipeline.transport import HttpRequest, HttpResponse, HttpTransport
from azure.core.utils import CaseInsensitiveDict
from urllib3.exceptions import (
    ConnectTimeoutError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)

# What the SDK asks when it names no timeout (azure-core's transports' defaults).
DEFAULT_TIMEOUT_SECONDS = 300


class Urllib3Response(HttpResponse):
    """An answer read whole (the SDK reads every answer whole)."""

    def __init__(self, request: HttpRequest, answer: urllib3.BaseHTTPResponse) -> None:
        super().__init__(request, answer)
        self.status_code = answer.status
        # A dict of its own, case-insensitive as the SDK reads it: the SDK writes its throttle counts (ints) into
        # the last answer's headers, whichever thread's answer that is (items.py), and urllib3's own header dict
        # then fails to read them (TypeError: a 500 under concurrent requests).
        self.headers = CaseInsensitiveDict(answer.headers.items())
        self.reason = answer.reason
        self.content_type = answer.headers.get("content-type")

    def body(self) -> bytes:
        data: bytes = self.internal_response.data
        return data

    def text(self, encoding: str | None = None) -> str:
        return self.body().decode(encoding or "utf-8-sig")


class Urllib3Transport(HttpTransport[HttpRequest, HttpResponse]):
    def __init__(self, *, pool_size: int, verify: bool, proxy_url: str | None = None) -> None:
        settings: dict[str, Any] = {
            "num_pools": 4,
            "maxsize": pool_size,
            "retries": False,
            "cert_reqs": "CERT_REQUIRED" if verify else "CERT_NONE",
            "ca_certs": certifi.where() if verify else None,
        }
        self._pool = urllib3.ProxyManager(proxy_url, **settings) if proxy_url else urllib3.PoolManager(**settings)

    def __enter__(self) -> Urllib3Transport:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()

    def open(self) -> None:
        pass

    def close(self) -> None:
        self._pool.clear()

    def send(self, request: HttpRequest, **kwargs: Any) -> HttpResponse:
        timeout = urllib3.Timeout(
            connect=kwargs.get("connection_timeout") or DEFAULT_TIMEOUT_SECONDS,
            read=kwargs.get("read_timeout") or DEFAULT_TIMEOUT_SECONDS,
        )
        try:
            answer = self._pool.urlopen(
                request.method,
                request.url,
                body=request.data,
                headers=request.headers,
                timeout=timeout,
                retries=False,
                redirect=False,
                preload_content=True,
            )
        except NewConnectionError as error:  # before ConnectTimeoutError, which urllib3 makes it a kind of
            raise ServiceRequestError(error, error=error) from error
        except ConnectTimeoutError as error:
            raise ServiceRequestTimeoutError(error, error=error) from error
        except ReadTimeoutError as error:
            raise ServiceResponseTimeoutError(error, error=error) from error
        except ProtocolError as error:
            raise ServiceResponseError(error, error=error) from error
        except urllib3.exceptions.HTTPError as error:  # TLS, proxy and the rest: the request did not go through
            raise ServiceRequestError(error, error=error) from error
        return Urllib3Response(request, answer)
