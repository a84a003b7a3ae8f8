"""The export timer: each run exports the store-days reconciled since the last one as Parquet, to the
destination EXPORT_DESTINATION names (in Azure: the export container of the app's storage account, signed in
with the app's managed identity), at EXPORT_SCHEDULE (every 15 minutes by default). Each run is bounded and
the next goes on: export/checkpoint.py. Then the store-days past TRADE_RECORD_RETENTION_DAYS that the export
has leave the hot store (reconcile/retention.py)."""

from __future__ import annotations

import logging

import azure.functions as func

from backends.export_destinations import open_destination
from core.clock import utc_now
from core.ports import ExportDestination
from core.settings import Settings
from export.checkpoint import caught_up, export_newly_checked
from reconcile.retention import retire_after_export
from triggers.composition import current_backend

bp = func.Blueprint()
log = logging.getLogger("pos.export")


def export_destination(settings: Settings) -> ExportDestination | None:
    """EXPORT_DESTINATION; when it is empty, POS_DATA_DIR/exports on the embedded backend (the local host),
    and none on Azure, where a folder of the instance would be lost (the timer then does nothing)."""
    if settings.export_destination:
        return open_destination(settings.export_destination, settings.export_storage_connection)
    if settings.backend == "sqlite":
        return open_destination(str(settings.data_dir / "exports"))
    return None


@bp.timer_trigger(arg_name="timer", schedule="%EXPORT_SCHEDULE%", run_on_startup=False)
def export_reconciled_days(timer: func.TimerRequest) -> None:
    backend = current_backend()
    destination = export_destination(backend.settings)
    if destination is None:
        log.warning("export skipped: EXPORT_DESTINATION is not set")
        return
    started = utc_now()
    exported, through = export_newly_checked(backend.storage, destination, started)
    log.info(
        "exported %d store-days checked up to %s to %s: %d files, %d rows, %d bytes%s%s",
        exported.days,
        through,
        destination.location,
        exported.files,
        exported.rows,
        exported.bytes,
        f"; {len(exported.changed)} changed while read, exported after their next result" if exported.changed else "",
        "" if caught_up(through, started) else "; not caught up: the next run goes on from there",
    )
    retired = retire_after_export(backend.retirement, backend.settings.trade_record_retention_days, through, utc_now())
    if retired.days:
        log.info("retired %d store-days past the retention: %d rows deleted", retired.days, retired.rows)
