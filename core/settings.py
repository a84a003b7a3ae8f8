"""Settings, read from environment variables named like the Functions app settings.

Locally, `local.settings.json` "Values" are read when the file exists, as the Functions Core Tools
do; a variable already set in the environment wins over the file.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
LOCAL_SETTINGS_FILE = PROJECT_ROOT / "local.settings.json"


# App settings that binding expressions (%NAME%) of function_app.py refer to, with the value used
# when neither the environment nor local.settings.json sets them. infra/ sets them in Azure.
BINDING_SETTING_DEFAULTS = {"RECONCILE_SWEEP_SCHEDULE": "0 */5 * * * *"}


def load_local_settings(path: Path = LOCAL_SETTINGS_FILE) -> None:
    if path.exists():
        values = json.loads(path.read_text(encoding="utf-8")).get("Values", {})
        for name, value in values.items():
            os.environ.setdefault(name, str(value))
    for name, value in BINDING_SETTING_DEFAULTS.items():
        os.environ.setdefault(name, value)


def host_settings(path: Path = PROJECT_ROOT / "host.json") -> dict:
    """host.json: the Functions host's own settings (route prefix, queue trigger behaviour)."""
    return json.loads(path.read_text(encoding="utf-8"))


def route_prefix(settings: dict) -> str:
    return settings.get("extensions", {}).get("http", {}).get("routePrefix", "api").strip("/")


def max_dequeue_count(settings: dict) -> int:
    """Attempts at a queue message before the host moves it to the poison queue (host.json)."""
    return int(settings.get("extensions", {}).get("queues", {}).get("maxDequeueCount", 5))


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"setting {name} must be an integer, got {raw!r}") from None


def _bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    return raw in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Settings:
    backend: str  # "sqlite" (embedded) or "azure" (Cosmos DB + Storage Queue)
    data_dir: Path
    rate_limit_per_minute: int
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

    @classmethod
    def from_env(cls) -> "Settings":
        data_dir = Path(os.environ.get("POS_DATA_DIR") or ".data")
        if not data_dir.is_absolute():
            data_dir = Path.cwd() / data_dir
        return cls(
            backend=(os.environ.get("POS_BACKEND") or "sqlite").strip().lower(),
            data_dir=data_dir,
            rate_limit_per_minute=_int("RATE_LIMIT_PER_MINUTE", 600),
            reconcile_delay_seconds=_int("RECONCILE_DELAY_SECONDS", 900),
            reconcile_sweep_grace_seconds=_int("RECONCILE_SWEEP_GRACE_SECONDS", 300),
            create_demo_partner=_bool("POS_CREATE_DEMO_PARTNER", True),
            cosmos_endpoint=os.environ.get("COSMOS_ENDPOINT", ""),
            cosmos_key=os.environ.get("COSMOS_KEY", ""),
            cosmos_database=os.environ.get("COSMOS_DATABASE", "pos"),
            cosmos_create_containers=_bool("COSMOS_CREATE_CONTAINERS", False),
            storage_connection=os.environ.get("AzureWebJobsStorage", ""),
            batch_marker_ttl_days=_int("BATCH_MARKER_TTL_DAYS", 0),  # 0: never expire; docs/decisions.md
            log_level=os.environ.get("LOG_LEVEL", "INFO"),
        )
