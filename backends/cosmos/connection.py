"""Opening Cosmos DB: the client with its TLS rule and connection pool, the four containers as
infra/cosmos/containers.json defines them (the file the deployment uses too), and the thread pool a
batch's items are written with. Why the containers are what they are:
docs/decisions/0053-cosmos-containers-and-keys.md."""

from __future__ import annotations

import concurrent.futures
import contextlib
import ipaddress
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests
from azure.core.credentials import TokenCredential
from azure.cosmos import CosmosClient, PartitionKey
from azure.cosmos.exceptions import CosmosHttpResponseError, CosmosResourceExistsError, CosmosResourceNotFoundError

from backends.cosmos import sdk_json
from backends.cosmos.items import forget
from backends.cosmos.outages import UNREACHABLE
from backends.cosmos.transport import CurlTransport
from core.ports import BackendUnavailable
from core.settings import PROJECT_ROOT
from core.stored_json import JsonObject

T = TypeVar("T")
R = TypeVar("R")

CONTAINERS_FILE = PROJECT_ROOT / "infra" / "cosmos" / "containers.json"

PARTNERS = "partners"  # partner-scoped admin and reference data; API keys by hash
BATCHES = "batches"  # batch markers, one logical partition each
TRADE_RECORDS = "trade-records"  # store-day partitions, and one version entry per trade record
CLOSES = "daily-closes"  # daily closes and their results, one partition per partner

# The transactional batches of a batch of records are written concurrently (16 index buckets, then its store-day).
WRITE_CONCURRENCY = 16
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain"}


@dataclass(frozen=True)
class Containers:
    partners: Any
    batches: Any
    trade_records: Any
    closes: Any


# What `connect` passes its containers through: (endpoint, containers) -> containers. Production installs
# none; the local host and the tests install devhost/cosmos_throttling.py's, to meet the 429s the emulator
# never answers.
ContainersHook = Callable[[str, Containers], Containers]
_containers_hook: ContainersHook | None = None


def install_containers_hook(hook: ContainersHook | None) -> None:
    global _containers_hook
    _containers_hook = hook


def load_container_definitions(path: Path = CONTAINERS_FILE) -> list[JsonObject]:
    containers: list[JsonObject] = json.loads(path.read_text(encoding="utf-8"))["containers"]
    return containers


def is_loopback(endpoint: str) -> bool:
    host = (urlsplit(endpoint).hostname or "").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def tls_verification(endpoint: str, verify_tls: bool | None) -> bool:
    """Verify certificates always, except for an emulator on this machine (self-signed certificate):
    traffic that never leaves the host cannot be intercepted on the way."""
    if verify_tls is None:
        return not is_loopback(endpoint)
    if not verify_tls and not is_loopback(endpoint):
        raise ValueError("TLS verification can only be turned off for a loopback endpoint (an emulator)")
    return verify_tls


def _transport(endpoint: str, verify: bool) -> CurlTransport:
    # The proxy variables are read once, for the one endpoint. The transport keeps a connection per concurrent
    # request (one per writer thread at most), so that none pays a TLS handshake again.
    proxy = requests.utils.get_environ_proxies(endpoint).get(urlsplit(endpoint).scheme or "https")
    return CurlTransport(verify=verify, proxy_url=proxy)


def connect(
    endpoint: str,
    database_name: str,
    *,
    key: str | None,
    credential: TokenCredential | str | None,
    verify_tls: bool | None,
    definitions: list[JsonObject],
    create_containers: bool,
) -> tuple[CosmosClient, Containers]:
    """The client of the account and the database's containers. Credentials: a key when given (the
    emulator), else `credential`, else the managed identity. TLS is verified unless the endpoint is loopback."""
    verify = tls_verification(endpoint, verify_tls)
    sdk_json.install()
    if key:
        credential = key
    elif credential is None:
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential()  # managed identity in Azure
    try:
        # The SDK retries throttling (429: up to 9 times, 30 s in all, honouring Retry-After) and
        # transient failures (connection errors, 408/410/449/503) before raising.
        client = CosmosClient(
            endpoint,
            credential,
            connection_verify=verify,
            transport=_transport(endpoint, verify),
            user_agent_suffix="pos-ingestion",
            # Item bodies as UTF-8, not with every non-ASCII character escaped (\uXXXX): a name in Japanese
            # or Thai travels in half the bytes.
            enable_compact_utf8_item_writes=True,
        )
        containers = _open_containers(client, database_name, definitions, create_containers)
        return client, containers if _containers_hook is None else _containers_hook(endpoint, containers)
    except (CosmosHttpResponseError, *UNREACHABLE) as error:
        raise BackendUnavailable(
            f"cannot open Cosmos DB database {database_name!r} at {endpoint}: {type(error).__name__}"
        ) from error


def _open_containers(
    client: CosmosClient, database_name: str, definitions: list[JsonObject], create: bool
) -> Containers:
    if create:
        # "If not exists" is a read, then a create: of instances starting together on a new database, the
        # ones whose create comes second are answered 409 (CosmosResourceExistsError), and it exists.
        try:
            database = client.create_database_if_not_exists(database_name)
        except CosmosResourceExistsError as error:
            forget(error)
            database = client.get_database_client(database_name)
        for definition in definitions:
            key = definition["partitionKey"]
            with contextlib.suppress(CosmosResourceExistsError):
                database.create_container_if_not_exists(
                    id=definition["id"],
                    partition_key=PartitionKey(
                        path=key["paths"][0], kind=key.get("kind", "Hash"), version=key.get("version", 2)
                    ),
                    indexing_policy=definition.get("indexingPolicy"),
                    default_ttl=definition.get("defaultTtl"),
                )
    else:
        database = client.get_database_client(database_name)
    containers = {definition["id"]: database.get_container_client(definition["id"]) for definition in definitions}
    for container_id, container in containers.items():
        # Once per process: a missing container would otherwise pass for a missing item (404).
        try:
            container.read()
        except CosmosResourceNotFoundError:
            raise BackendUnavailable(
                f"Cosmos DB container {container_id!r} of database {database_name!r} does "
                "not exist: deploy infra/ or set COSMOS_CREATE_CONTAINERS=true"
            ) from None
    return Containers(containers[PARTNERS], containers[BATCHES], containers[TRADE_RECORDS], containers[CLOSES])


class WriterPool:
    """The threads a batch's items are written with (one pool per process)."""

    def __init__(self) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(WRITE_CONCURRENCY, thread_name_prefix="cosmos-write")

    def each(self, work: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """Run work(item) for every item concurrently; wait for all, then raise the first failure, or
        return their results in the order of the items."""
        items = list(items)
        if len(items) <= 1:
            return [work(item) for item in items]
        futures = [self._pool.submit(work, item) for item in items]
        concurrent.futures.wait(futures)
        return [future.result() for future in futures]

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)
