"""Settings, read from environment variables named like the Functions app settings, and the host's
own settings (host.json and its app-setting overrides), read as the Functions host reads them.

Locally, `local.settings.json` "Values" are read when the file exists, as the Functions Core Tools
do; a variable already set in the environment wins over the file.
"""

from __future__ import annotations

import ipaddress
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from core.retention import MIN_RETENTION_DAYS

# COSMOS_INDEX_PARTITION_MAX_ENTRIES by default. About 600 bytes a stored record index entry (323 of JSON with
# one payment id, system properties and its indexed terms): 20 million are ~12 GB, a margin of 40 % under the
# 20 GB of a Cosmos DB logical partition for longer payment id lists (decision 0092).
DEFAULT_INDEX_PARTITION_MAX_ENTRIES = 20_000_000

PROJECT_ROOT = Path(__file__).resolve().parent.parent
LOCAL_SETTINGS_FILE = PROJECT_ROOT / "local.settings.json"
EXAMPLE_SETTINGS_FILE = PROJECT_ROOT / "local.settings.json.example"
HOST_JSON = PROJECT_ROOT / "host.json"
# App settings named like this override host.json, path segments joined by "__" (keys compared without
# regard to case), as the Functions host reads its configuration: AzureFunctionsJobHost__extensions__
# queues__maxDequeueCount=3 wins over host.json's extensions.queues.maxDequeueCount.
HOST_OVERRIDE_PREFIX = "AzureFunctionsJobHost__"

# Azurite's well-known development account (published in its documentation; it protects nothing). The
# Functions tools and Storage Explorer read "UseDevelopmentStorage=true" as this connection string on
# Azurite's standard ports; the Python Storage SDKs do not know the idiom, so the app expands it.
DEVELOPMENT_STORAGE_IDIOM = "usedevelopmentstorage=true"
DEVELOPMENT_ACCOUNT = "devstoreaccount1"
DEVELOPMENT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
AZURITE_PORTS = {"Blob": 10000, "Queue": 10001, "Table": 10002}

# host.json as the host reads it (JSON objects nested by section; see host_settings), or one section of it.
HostSettings = dict[str, Any]


def development_storage(host: str = "127.0.0.1", ports: dict[str, int] = AZURITE_PORTS) -> str:
    """The connection string of Azurite's development account at `host` on `ports`."""
    endpoints = "".join(
        f"{service}Endpoint=http://{host}:{port}/{DEVELOPMENT_ACCOUNT};" for service, port in ports.items()
    )
    return f"DefaultEndpointsProtocol=http;AccountName={DEVELOPMENT_ACCOUNT};AccountKey={DEVELOPMENT_KEY};{endpoints}"


def storage_connection_string(value: str) -> str:
    """A storage connection setting as the Functions host understands it: the development idiom expanded."""
    if value.strip().rstrip(";").lower() == DEVELOPMENT_STORAGE_IDIOM:
        return development_storage()
    return value


def read_settings_file(path: Path) -> dict[str, str]:
    """The "Values" of a local.settings.json, as text (a JSON number there is a setting too)."""
    values = json.loads(path.read_text(encoding="utf-8")).get("Values", {})
    return {name: str(value) for name, value in values.items()}


def load_local_settings(path: Path = LOCAL_SETTINGS_FILE, only: set[str] | None = None) -> None:
    """Put local.settings.json's "Values" into the environment, as the Core Tools do: a variable already
    set in the environment wins. `only` limits it to those names. No defaults of its own: a setting the
    file does not name stays unset (decision 0069, the strict settings rule)."""
    if not path.exists():
        return
    for name, value in read_settings_file(path).items():
        if only is None or name in only:
            os.environ.setdefault(name, value)


def _override(settings: HostSettings, path: list[str], value: str) -> None:
    """Set `value` at `path` in nested dicts, matching existing keys without regard to case."""
    node = settings
    for segment in path[:-1]:
        key = next((k for k in node if k.lower() == segment.lower() and isinstance(node[k], dict)), segment)
        node = node.setdefault(key, {})
    leaf = next((k for k in node if k.lower() == path[-1].lower()), path[-1])
    node[leaf] = value


def host_settings(path: Path = HOST_JSON, environ: Mapping[str, str] | None = None) -> HostSettings:
    """The Functions host's own settings (route prefix, queue trigger behaviour) as the host reads them:
    host.json, then every AzureFunctionsJobHost__... app setting over it."""
    settings = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    environ = os.environ if environ is None else environ
    for name, value in environ.items():
        if name.lower().startswith(HOST_OVERRIDE_PREFIX.lower()) and len(name) > len(HOST_OVERRIDE_PREFIX):
            _override(settings, name[len(HOST_OVERRIDE_PREFIX) :].split("__"), value)
    return settings


def _section(settings: HostSettings, *path: str) -> HostSettings:
    node = settings
    for segment in path:
        node = next((v for k, v in node.items() if k.lower() == segment.lower() and isinstance(v, dict)), {})
    return node


def host_value(section: HostSettings, name: str, default: object) -> Any:  # a JSON value, or `default`
    """`name` in a section of the host settings, matched without regard to case, as the host matches it."""
    return next((v for k, v in section.items() if k.lower() == name.lower()), default)


def route_prefix(settings: HostSettings) -> str:
    """extensions.http.routePrefix; the host's default is "api", and "" means no prefix."""
    return str(host_value(_section(settings, "extensions", "http"), "routePrefix", "api")).strip("/")


def queue_settings(settings: HostSettings) -> HostSettings:
    """extensions.queues, keys as host.json spells them."""
    return _section(settings, "extensions", "queues")


def max_dequeue_count(settings: HostSettings) -> int:
    """Attempts at a queue message before the host moves it to the poison queue (host's default: 5)."""
    return int(host_value(queue_settings(settings), "maxDequeueCount", 5))


def message_encoding(settings: HostSettings) -> str:
    """How the queue trigger decodes message text: "base64" (the host's default) or "none"."""
    encoding = str(host_value(queue_settings(settings), "messageEncoding", "base64")).lower()
    if encoding not in ("base64", "none"):
        raise ValueError(f"extensions.queues.messageEncoding must be 'base64' or 'none', not {encoding!r}")
    return encoding


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"setting {name} must be an integer, got {raw!r}") from None


def _retention_days(days: int) -> int:
    """0 (keep every store-day, the default) or at least MIN_RETENTION_DAYS (decision 0086)."""
    if days != 0 and days < MIN_RETENTION_DAYS:
        raise ValueError(
            "setting TRADE_RECORD_RETENTION_DAYS must be 0 (keep every store-day) or at least "
            f"{MIN_RETENTION_DAYS} days, got {days}: "
            "the export must have run on a store-day, and its late versions arrived, before it leaves"
        )
    return days


def _positive(name: str, default: int) -> int:
    number = _int(name, default)
    if number < 1:
        raise ValueError(f"setting {name} must be at least 1, got {number}")
    return number


def _bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    return raw in ("1", "true", "yes", "on")


def is_loopback_url(url: str) -> bool:
    """Whether the URL's host is this machine (127.0.0.0/8, ::1 or localhost): the only place plain http
    may reach an identity provider (the tests' and the local host's)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_issuer_url(url: str) -> bool:
    """https with a host, or http on a loopback address: signing keys must not come over plain http."""
    parts = urlsplit(url)
    if not parts.hostname or parts.query or parts.fragment:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and is_loopback_url(url))


def _comma_separated(raw: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def _oauth_issuers(raw: str, audiences: tuple[str, ...]) -> tuple[str, ...]:
    issuers = _comma_separated(raw)
    for issuer in issuers:
        if not allowed_issuer_url(issuer):
            raise ValueError(f"setting OAUTH_ISSUER: {issuer!r} is not an https URL (http only on a loopback address)")
    if issuers and not audiences:
        raise ValueError("setting OAUTH_AUDIENCE is required with OAUTH_ISSUER")
    return issuers


@dataclass(frozen=True)
class Settings:
    backend: str  # "sqlite" (embedded) or "azure" (Cosmos DB + Storage Queue)
    data_dir: Path
    rate_limit_per_minute: int
    auth_failures_per_minute: int  # per client address, each instance; 0 = off (triggers/auth_failures.py)
    reconcile_delay_seconds: int
    reconcile_sweep_grace_seconds: int
    create_demo_partner: bool
    cosmos_endpoint: str
    cosmos_key: str
    cosmos_database: str
    cosmos_create_containers: bool
    storage_connection: str
    batch_marker_ttl_days: int
    log_level: str
    # OAuth 2.0 bearer tokens beside the API keys (ingest/bearer_tokens.py): the identity providers trusted
    # (none: bearer tokens are refused), the audiences a token must name, and the fewest seconds between
    # two fetches of an issuer's keys for an unknown key id.
    oauth_issuers: tuple[str, ...] = ()
    oauth_audiences: tuple[str, ...] = ()
    oauth_keys_refresh_seconds: int = 30
    # The Parquet export's timer (triggers/exports.py): where it writes (a folder or a Blob Storage URL; ""
    # locally: POS_DATA_DIR/exports), and an account-key connection string for a Blob destination that is
    # not signed in with Entra ID (Azurite); "" signs in with Entra ID.
    export_destination: str = ""
    export_storage_connection: str = ""
    # Days past its business date a store-day's trade records stay in the hot store (0: for good); older
    # store-days are refused and retired (core/retention.py; decision 0086).
    trade_record_retention_days: int = 0
    # The most record index entries one Cosmos DB logical partition holds before the partner's index
    # spreads further (backends/cosmos/index_layout.py; decision 0115): small only in tests and rehearsals.
    cosmos_index_partition_max_entries: int = DEFAULT_INDEX_PARTITION_MAX_ENTRIES

    @classmethod
    def from_env(cls) -> Settings:
        data_dir = Path(os.environ.get("POS_DATA_DIR") or ".data")
        if not data_dir.is_absolute():
            data_dir = Path.cwd() / data_dir
        return cls(
            backend=(os.environ.get("POS_BACKEND") or "sqlite").strip().lower(),
            data_dir=data_dir,
            rate_limit_per_minute=_int("RATE_LIMIT_PER_MINUTE", 600),
            auth_failures_per_minute=_int("AUTH_FAILURES_PER_MINUTE", 60),
            reconcile_delay_seconds=_int("RECONCILE_DELAY_SECONDS", 900),
            reconcile_sweep_grace_seconds=_int("RECONCILE_SWEEP_GRACE_SECONDS", 300),
            create_demo_partner=_bool("POS_CREATE_DEMO_PARTNER", True),
            cosmos_endpoint=os.environ.get("COSMOS_ENDPOINT", ""),
            cosmos_key=os.environ.get("COSMOS_KEY", ""),
            cosmos_database=os.environ.get("COSMOS_DATABASE", "pos"),
            cosmos_create_containers=_bool("COSMOS_CREATE_CONTAINERS", False),
            storage_connection=storage_connection_string(os.environ.get("AzureWebJobsStorage", "")),
            batch_marker_ttl_days=_int("BATCH_MARKER_TTL_DAYS", 0),  # 0: never expire; decision 0032
            log_level=os.environ.get("LOG_LEVEL", "INFO"),
            oauth_issuers=_oauth_issuers(
                os.environ.get("OAUTH_ISSUER", ""), _comma_separated(os.environ.get("OAUTH_AUDIENCE", ""))
            ),
            oauth_audiences=_comma_separated(os.environ.get("OAUTH_AUDIENCE", "")),
            oauth_keys_refresh_seconds=_int("OAUTH_KEYS_REFRESH_SECONDS", 30),
            export_destination=os.environ.get("EXPORT_DESTINATION", "").strip(),
            export_storage_connection=storage_connection_string(os.environ.get("EXPORT_STORAGE_CONNECTION", "")),
            trade_record_retention_days=_retention_days(_int("TRADE_RECORD_RETENTION_DAYS", 0)),
            cosmos_index_partition_max_entries=_positive(
                "COSMOS_INDEX_PARTITION_MAX_ENTRIES", DEFAULT_INDEX_PARTITION_MAX_ENTRIES
            ),
        )
