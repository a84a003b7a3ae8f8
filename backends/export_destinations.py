"""Where the Parquet export writes (core.ports.ExportDestination): a local folder, or a container of Blob
Storage (an ADLS Gen2 account serves the same Blob API), signed in with Entra ID as `hq` signs in to Cosmos DB
(DefaultAzureCredential: the operator's `az login`, the app's managed identity in Azure), or with an account
key from a connection string (Azurite; an account without Entra).

A destination is named by text (`hq export --out`, the app setting EXPORT_DESTINATION):
- a folder: ./exports, /srv/exports;
- https://ACCOUNT.blob.core.windows.net/CONTAINER[/PREFIX] (or ACCOUNT.dfs.core.windows.net);
- abfss://CONTAINER@ACCOUNT.dfs.core.windows.net[/PREFIX], as Spark and Fabric name ADLS Gen2 paths;
- http://127.0.0.1:10000/ACCOUNT/CONTAINER[/PREFIX]: Azurite's path-style URL (loopback only)."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from core.ports import BackendUnavailable, ExportDestination
from core.settings import is_loopback_url

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential


class LocalFolder:
    """A folder: each file written beside its final name under a hidden temporary name, then renamed over
    it (a rename within one folder is atomic)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def location(self) -> str:
        return str(self.root)

    def write(self, path: str, data: bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")  # "." : readers skip it
        try:
            temporary.write_bytes(data)
            os.replace(temporary, target)
        finally:
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()

    def read(self, path: str) -> bytes | None:
        try:
            return (self.root / path).read_bytes()
        except FileNotFoundError:
            return None


class BlobContainer:
    """A Blob Storage container, under a prefix. A blob is uploaded in one request (or its blocks committed
    at once): readers see the old blob or the new one whole. The container is created on first need."""

    def __init__(
        self, account_url: str, container: str, prefix: str, credential: dict[str, str] | TokenCredential
    ) -> None:
        from azure.storage.blob import ContainerClient

        self._url = f"{account_url}/{container}" + (f"/{prefix}" if prefix else "")
        self._prefix = f"{prefix}/" if prefix else ""
        self._client = ContainerClient(account_url, container, credential=credential)

    @property
    def location(self) -> str:
        return self._url

    def write(self, path: str, data: bytes) -> None:
        from azure.core.exceptions import ResourceExistsError, ResourceNotFoundError

        blob = self._client.get_blob_client(self._prefix + path)
        with _unavailable_on_failure():
            try:
                blob.upload_blob(data, overwrite=True)
            except ResourceNotFoundError:  # the container is missing
                with contextlib.suppress(ResourceExistsError):
                    self._client.create_container()
                blob.upload_blob(data, overwrite=True)

    def read(self, path: str) -> bytes | None:
        from azure.core.exceptions import ResourceNotFoundError

        with _unavailable_on_failure():
            try:
                return self._client.get_blob_client(self._prefix + path).download_blob().readall()
            except ResourceNotFoundError:
                return None


@contextlib.contextmanager
def _unavailable_on_failure() -> Iterator[None]:
    """Blob Storage refusing or unreachable becomes BackendUnavailable (what `hq` and the timer report)."""
    from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ServiceRequestError

    try:
        yield
    except (HttpResponseError, ServiceRequestError, ClientAuthenticationError) as error:
        status = getattr(error, "status_code", None)
        raise BackendUnavailable(
            f"Blob Storage {'answered ' + str(status) if status else 'cannot be reached'}: "
            f"{getattr(error, 'error_code', None) or type(error).__name__}"
        ) from error


def _account_key(connection_string: str) -> dict[str, str] | None:
    parts = dict(part.split("=", 1) for part in connection_string.split(";") if "=" in part)
    if "AccountName" in parts and "AccountKey" in parts:
        return {"account_name": parts["AccountName"], "account_key": parts["AccountKey"]}
    return None


def blob_location(url: str) -> tuple[str, str, str]:
    """(account URL, container, prefix) of a Blob Storage or ADLS Gen2 URL; ValueError when it is not one."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    segments = [unquote(segment) for segment in parts.path.split("/") if segment]
    if parts.scheme == "abfss" and "@" in parts.netloc:
        container, host = parts.netloc.split("@", 1)
        account_url = "https://" + host.replace(".dfs.", ".blob.", 1)
    elif parts.scheme == "https" and (".blob." in host or ".dfs." in host):
        account_url = "https://" + parts.netloc.replace(".dfs.", ".blob.", 1)
        container, segments = (segments[0], segments[1:]) if segments else ("", [])
    elif parts.scheme == "http" and is_loopback_url(url) and len(segments) >= 2:  # Azurite: /ACCOUNT/CONTAINER
        account_url = f"http://{parts.netloc}/{segments[0]}"
        container, segments = segments[1], segments[2:]
    else:
        raise ValueError(f"{url!r} is not a Blob Storage or ADLS Gen2 location (see docs/exports.md)")
    if not container:
        raise ValueError(f"{url!r} names no container")
    return account_url, container, "/".join(segments)


def open_destination(text: str, connection_string: str = "") -> ExportDestination:
    """The destination `text` names. A Blob location signs in with the account key of `connection_string`
    when it has one (Azurite, tests), else with Entra ID (DefaultAzureCredential)."""
    if "://" not in text:
        return LocalFolder(Path(text).expanduser().resolve())
    account_url, container, prefix = blob_location(text)
    credential: dict[str, str] | TokenCredential | None = _account_key(connection_string) if connection_string else None
    if credential is None:
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential()  # az login for an operator; the managed identity in Azure
    return BlobContainer(account_url, container, prefix, credential)
