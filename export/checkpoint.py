"""The export timer's catch-up: each run exports the store-days whose result was checked since the export's
checkpoint, then moves the checkpoint (decision 0085).

The checkpoint is a small file beside the files it describes (`_checkpoint.json` at the destination's root):
the instant up to which every store-day checked has been exported there. A run that fails or never runs
leaves it where it was, so the next run exports what that one missed; a destination emptied or new starts
from no checkpoint, and gets every checked day. A day checked again after its export (its records changed,
a newer close, a new mapping) has a later checked_at, so a later run exports it again over the same files.

A result's checked_at is taken when its run starts computing it and saved a moment later: a run reads only
the days checked up to SETTLE ago, so a result being saved now is not passed over by the checkpoint."""

from __future__ import annotations

import datetime as dt

import orjson

from core.clock import from_utc_text, to_utc_text, utc_now
from core.ports import ExportDestination
from export.layout import CHECKPOINT
from export.store_days import Exported, ExportStorage, Progress, export_days

SETTLE = dt.timedelta(minutes=10)


def exported_through(destination: ExportDestination) -> dt.datetime | None:
    """The instant up to which every store-day checked has been exported to `destination`; None before its
    first run. Whatever deletes what has been exported (retention) deletes nothing checked after it."""
    data = destination.read(CHECKPOINT)
    return None if data is None else from_utc_text(orjson.loads(data)["exported_through"])


def export_newly_checked(
    storage: ExportStorage,
    destination: ExportDestination,
    now: dt.datetime | None = None,
    progress: Progress | None = None,
) -> tuple[Exported, dt.datetime | None]:
    """Export every store-day checked after the checkpoint and up to SETTLE before `now`, then move the
    checkpoint there; returns what was written and the checkpoint now."""
    after = exported_through(destination)
    through = (now or utc_now()) - SETTLE
    if after is not None and through <= after:
        return Exported(), after
    exported = export_days(storage, destination, storage.days_checked(after, through), progress)
    note = {"exported_through": to_utc_text(through), "store_days": exported.days, "files": exported.files}
    destination.write(CHECKPOINT, orjson.dumps(note, option=orjson.OPT_INDENT_2))
    return exported, through
