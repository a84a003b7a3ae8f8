"""The delayed queue on Azure Storage Queues, written exactly as the Functions queue trigger reads it.

The trigger decodes each message with host.json's `extensions.queues.messageEncoding` ("base64" by
default), or its app-setting override, so the sender reads the same setting the same way
(core.settings.host_settings) and encodes with the matching SDK policy: one source for both sides.
Bodies are bytes on both sides of this class: what `send` is given (UTF-8) is what `receive` hands
back, which is what the host gives the function (`QueueMessage.get_body()`).

A delay is the message's initial visibility timeout (the service allows at most 7 days, and it must
stay below the time-to-live: messages are sent with an infinite time-to-live, so a reconciliation
request never silently expires). The consumer side (core.ports.QueueConsumer: `receive`, `delete`,
`move_to_poison`, poison listing and replay) is the same as backends/sqlite/delayed_queue.py's, so the local
host and `hq` drive either class.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import logging
import math
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from azure.core.credentials import TokenCredential
from azure.core.exceptions import (
    AzureError,
    ClientAuthenticationError,
    HttpResponseError,
    ResourceExistsError,
    ResourceNotFoundError,
    ServiceRequestError,
    ServiceResponseError,
)
from azure.storage.queue import (
    BinaryBase64DecodePolicy,
    BinaryBase64EncodePolicy,
    ExponentialRetry,
    QueueClient,
    QueueMessage,
)

from backends.storage_firewall import refused_address
from core.ports import BackendUnavailable
from core.settings import HOST_JSON, Settings, host_settings, message_encoding, storage_connection_string

log = logging.getLogger("pos.queue")

CONNECTION = "AzureWebJobsStorage"  # the `connection` of the queue trigger in triggers/reconciliation.py
MAX_DELAY_SECONDS = 7 * 24 * 3600  # the service's limit on a visibility timeout
NEVER_EXPIRES = -1  # time-to-live: infinite (service version 2017-07-29 and later)
PEEK_LIMIT = 32  # the most messages one peek or receive call returns


def host_message_encoding(path: Path = HOST_JSON) -> str:
    """The encoding the Functions host's queue trigger expects: host.json and its app-setting override
    (AzureFunctionsJobHost__extensions__queues__messageEncoding), else the host's default."""
    return message_encoding(host_settings(path))


def fast_retry() -> ExponentialRetry:
    """Retries of transient errors (timeouts, 5xx, throttling) within about ten seconds: a partner's
    request waits for them, then gets 503. The SDK's default waits more than a minute."""
    return ExponentialRetry(initial_backoff=1, increment_base=2, retry_total=3, random_jitter_range=1)


# -- encoding ---------------------------------------------------------------------------------------


class Undecodable(bytes):
    """The raw text of a message that is not in the agreed encoding (someone else wrote it)."""


class _HostBase64DecodePolicy(BinaryBase64DecodePolicy):
    """Base64 to bytes, strictly, as the host decodes (Python's default b64decode skips characters outside
    the alphabet, so JSON written without encoding could pass as garbage bytes). A message that does not
    decode is marked instead of failing the whole receive, so the consumer can move it to the poison
    queue at once, as the host does."""

    def decode(self, content: Any, response: Any) -> bytes:
        try:
            return base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            return Undecodable(str(content).encode("utf-8"))


class _Utf8EncodePolicy(BinaryBase64EncodePolicy):
    """messageEncoding "none": the message text is the UTF-8 body as is (bytes in, like its parent)."""

    def encode(self, content: bytes) -> str:
        return content.decode("utf-8")


class _Utf8DecodePolicy(BinaryBase64DecodePolicy):
    """messageEncoding "none": the UTF-8 bytes of the message text (bytes out, like its parent)."""

    def decode(self, content: Any, response: Any) -> bytes:
        return str(content).encode("utf-8")


def message_policies(encoding: str) -> dict[str, Any]:
    """The SDK encode/decode policies for host.json's messageEncoding; both work on bytes."""
    if encoding == "base64":
        return {"message_encode_policy": BinaryBase64EncodePolicy(), "message_decode_policy": _HostBase64DecodePolicy()}
    if encoding == "none":
        return {"message_encode_policy": _Utf8EncodePolicy(), "message_decode_policy": _Utf8DecodePolicy()}
    raise ValueError(f"unknown message encoding {encoding!r}")


# -- messages and errors ----------------------------------------------------------------------------


@dataclass(frozen=True)
class AzureQueueMessage:
    """A received (or peeked) message, shaped like backends.sqlite.delayed_queue.QueuedMessage."""

    message_id: str
    body: bytes  # decoded: the bytes the sender wrote, as the host gives them to the function
    dequeue_count: int
    pop_receipt: str  # "" for a peeked message
    inserted_at_us: int

    @property
    def decodable(self) -> bool:
        return not isinstance(self.body, Undecodable)

    @classmethod
    def of(cls, message: QueueMessage) -> AzureQueueMessage:
        content = message.content
        body = content if isinstance(content, bytes) else str(content or "").encode("utf-8")
        inserted = int(message.inserted_on.timestamp() * 1_000_000) if message.inserted_on else 0
        return cls(message.id, body, int(message.dequeue_count or 0), message.pop_receipt or "", inserted)


def _outage(error: AzureError) -> bool:
    """Errors a retry later may cure: the service or the network is down, or access is refused
    (credentials, RBAC role). Anything else (a 400 for a bad argument) is a bug, not an outage."""
    if isinstance(error, (ServiceRequestError, ServiceResponseError, ClientAuthenticationError)):
        return True
    status = getattr(error, "status_code", None)
    if isinstance(error, HttpResponseError) and status is not None:
        return status >= 500 or status in (401, 403, 408, 429)
    return not isinstance(error, HttpResponseError)


@contextlib.contextmanager
def _service(what: str) -> Iterator[None]:
    """Transient errors were already retried by the SDK's retry policy; what is left is an outage."""
    try:
        yield
    except AzureError as error:
        if (refused := refused_address(error)) is not None:
            raise refused from error
        if _outage(error):
            # The class name only: messages of authentication errors may name accounts or tenants.
            raise BackendUnavailable(f"Azure Storage Queue unavailable ({what}: {type(error).__name__})") from error
        raise


# -- the queue --------------------------------------------------------------------------------------


class AzureQueue:
    """DelayedQueue on Azure Storage, plus the consumer side the local host and `hq` need
    (QueueConsumer[AzureQueueMessage]).

    Give either a connection string (keys: the emulator, or an account without managed identity) or an
    account URL and a token credential (managed identity). `from_settings` chooses, as the Functions
    host does for the trigger's connection.
    """

    def __init__(
        self,
        queue_name: str,
        *,
        connection_string: str | None = None,
        account_url: str | None = None,
        credential: TokenCredential | None = None,
        message_encoding: str | None = None,
        retry_policy: ExponentialRetry | None = None,
        create_queues: bool = True,
        connection_timeout: float = 5,
        read_timeout: float = 30,
    ) -> None:
        if bool(connection_string) == bool(account_url):
            raise ValueError("give a storage connection string or a queue service URL, not both or neither")
        self.queue_name = queue_name
        self.message_encoding = message_encoding or host_message_encoding()
        options: dict[str, Any] = {  # keyword arguments of the SDK's clients
            "retry_policy": retry_policy or fast_retry(),
            "connection_timeout": connection_timeout,
            "read_timeout": read_timeout,
        }
        if connection_string:  # "UseDevelopmentStorage=true" as the Functions tools read it; the SDK does not
            connection_string = storage_connection_string(connection_string)

        def client(queue: str, raw: bool = False) -> QueueClient:
            policies = {} if raw else message_policies(self.message_encoding)
            if connection_string:
                return QueueClient.from_connection_string(connection_string, queue, **policies, **options)
            assert account_url is not None  # one of the two, checked above
            return QueueClient(account_url, queue, credential=credential, **policies, **options)

        self._client = client(queue_name)
        self._poison = client(self.poison_name)
        # Without encoding policies: a badly encoded message is moved and replayed as it came.
        self._raw = {queue_name: client(queue_name, raw=True), self.poison_name: client(self.poison_name, raw=True)}
        self._create_queues = create_queues
        self._ready = False
        self._ready_lock = threading.Lock()

    @classmethod
    def from_settings(
        cls, settings: Settings, queue_name: str, environ: Mapping[str, str] = os.environ, **options: Any
    ) -> AzureQueue:
        """The Functions conventions for the trigger's connection (`AzureWebJobsStorage`): the setting
        itself holds a connection string; else `AzureWebJobsStorage__queueServiceUri` (or
        `__accountName`) names the account and a managed identity signs in (`__clientId` picks a
        user-assigned identity)."""
        if settings.storage_connection:
            return cls(queue_name, connection_string=settings.storage_connection, **options)
        account_url = environ.get(f"{CONNECTION}__queueServiceUri", "").strip()
        account = environ.get(f"{CONNECTION}__accountName", "").strip()
        if not account_url and account:
            account_url = f"https://{account}.queue.core.windows.net"
        if not account_url:
            raise ValueError(
                f"POS_BACKEND=azure needs {CONNECTION} (a connection string) or "
                f"{CONNECTION}__queueServiceUri (managed identity)"
            )
        from azure.identity import DefaultAzureCredential

        client_id = environ.get(f"{CONNECTION}__clientId", "").strip() or None
        credential = DefaultAzureCredential(managed_identity_client_id=client_id)
        return cls(queue_name, account_url=account_url, credential=credential, **options)

    @property
    def poison_name(self) -> str:
        return f"{self.queue_name}-poison"

    # -- set-up --

    def ensure_queues(self) -> None:
        """Create the queue and its poison queue when missing (once per instance)."""
        if self._ready:
            return
        with self._ready_lock:
            if self._ready:
                return
            if self._create_queues:
                for client in (self._client, self._poison):
                    with _service("create queue"), contextlib.suppress(ResourceExistsError):
                        client.create_queue()
            self._ready = True

    # -- DelayedQueue port --

    def send(self, body: str, delay_seconds: int = 0) -> None:
        self.ensure_queues()
        with _service("send"):
            try:
                self._send(body, delay_seconds)
            except ResourceNotFoundError:  # the queue was deleted since this process created it
                self._ready = False
                self.ensure_queues()
                self._send(body, delay_seconds)

    def _send(self, body: str, delay_seconds: int) -> None:
        self._client.send_message(
            body.encode("utf-8"), visibility_timeout=self._delay(delay_seconds), time_to_live=NEVER_EXPIRES
        )

    def _delay(self, delay_seconds: int) -> int:
        delay = max(int(math.ceil(delay_seconds)), 0)
        if delay > MAX_DELAY_SECONDS:
            log.warning("delay of %d s shortened to the queue's maximum of 7 days", delay)
            delay = MAX_DELAY_SECONDS
        return delay

    def ping(self) -> None:
        self.ensure_queues()
        with _service("ping"):
            self._client.get_queue_properties()

    # -- consumer side (local host, hq) --

    def receive(self, visibility_timeout_seconds: float) -> AzureQueueMessage | None:
        """Take the next visible message and hide it for the visibility timeout (1 s to 7 days).
        A message not in the agreed encoding goes to the poison queue at once, as the host does."""
        self.ensure_queues()
        visibility = min(max(int(math.ceil(visibility_timeout_seconds)), 1), MAX_DELAY_SECONDS)
        while True:
            with _service("receive"):
                received = self._client.receive_message(visibility_timeout=visibility)
            if received is None:
                return None
            message = AzureQueueMessage.of(received)
            if message.decodable:
                return message
            log.error(
                "message %s on %s is not %s-encoded; moved to %s",
                message.message_id,
                self.queue_name,
                self.message_encoding,
                self.poison_name,
            )
            self.move_to_poison(message)

    def delete(self, message: AzureQueueMessage) -> None:
        """Delete a processed message; nothing happens when its receipt is stale (it became visible again
        and someone else took it), as with the SQLite queue."""
        with _service("delete"), contextlib.suppress(ResourceNotFoundError):
            try:
                self._client.delete_message(message.message_id, message.pop_receipt)
            except HttpResponseError as error:
                if getattr(error, "error_code", None) != "PopReceiptMismatch":
                    raise

    def move_to_poison(self, message: AzureQueueMessage) -> None:
        """Copy the message to `<queue>-poison`, then delete it: a crash in between leaves it in both,
        never in neither. The Functions host does the same."""
        self.ensure_queues()
        self._put(self.poison_name, message)
        self.delete(message)

    def _put(self, queue: str, message: AzureQueueMessage) -> None:
        """Send a received message's body to `queue` in the agreed encoding (a badly encoded one as it came)."""
        with _service("send"):
            if message.decodable:
                client = self._client if queue == self.queue_name else self._poison
                client.send_message(bytes(message.body), time_to_live=NEVER_EXPIRES)
            else:
                self._raw[queue].send_message(message.body.decode("utf-8"), time_to_live=NEVER_EXPIRES)

    def send_to_poison(self, body: bytes) -> None:
        """A message the function cannot decode: its body, in the agreed encoding, on `<queue>-poison`."""
        self.ensure_queues()
        with _service("send poison"):
            self._poison.send_message(bytes(body), time_to_live=NEVER_EXPIRES)

    def poison_messages(self) -> list[AzureQueueMessage]:
        """The first poisoned messages, oldest first, without hiding them (a peek shows at most 32:
        `poison_count` tells how many there are)."""
        self.ensure_queues()
        with _service("peek poison"):
            return [AzureQueueMessage.of(m) for m in self._poison.peek_messages(max_messages=PEEK_LIMIT)]

    def poison_count(self) -> int:
        """Approximate, as the service reports it."""
        self.ensure_queues()
        with _service("count poison"):
            return int(self._poison.get_queue_properties().approximate_message_count or 0)

    def replay_poison(self, message_id: str) -> bool:
        """Put a poisoned message back on the main queue, visible now, with a fresh dequeue count (the
        service gives it a new id). False when no poisoned message has that id.

        A queue cannot fetch a message by id: poisoned messages are received page by page (hidden for a
        minute) until it is found, and the others are made visible again at once."""
        return self._replay(lambda message: message.message_id == message_id, first_only=True) == 1

    def replay_all_poison(self) -> int:
        """Replay every poisoned message; returns how many."""
        return self._replay(lambda message: True, first_only=False)

    def _replay(self, wanted: Callable[[AzureQueueMessage], bool], first_only: bool) -> int:
        self.ensure_queues()
        passed: list[QueueMessage] = []
        replayed = 0
        try:
            while True:
                with _service("scan poison"):
                    page = list(self._poison.receive_messages(max_messages=PEEK_LIMIT, visibility_timeout=60))
                if not page:
                    return replayed
                for index, received in enumerate(page):
                    message = AzureQueueMessage.of(received)
                    if not wanted(message):
                        passed.append(received)
                        continue
                    self._put(self.queue_name, message)
                    with _service("delete poison"), contextlib.suppress(ResourceNotFoundError):
                        self._poison.delete_message(received.id, received.pop_receipt)
                    replayed += 1
                    if first_only:
                        passed.extend(page[index + 1 :])
                        return replayed
        finally:
            self._show_again(passed)

    def _show_again(self, messages: list[QueueMessage]) -> None:
        """Make poisoned messages that a scan hid visible again at once."""
        for message in messages:
            with contextlib.suppress(AzureError):
                self._poison.update_message(message.id, message.pop_receipt, visibility_timeout=0)
