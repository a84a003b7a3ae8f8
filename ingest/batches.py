"""What every write batch shares: the batch marker, resends, and the common batch response.

Resending a known batch_id answers 200 ALREADY_RECEIVED with the original record_count (spec 1).
A resend is never silent about a different body: it carries a warning that the body was ignored.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable

from core import faults
from core.clock import utc_now
from core.ports import BatchMarker, Storage


RESEND_BODY_IGNORED = "RESEND_BODY_IGNORED"
BATCH_ID_REUSED = "BATCH_ID_REUSED"
BATCH_WARNING_CODES = {
    RESEND_BODY_IGNORED: "this batch_id was already received with a different body; the new body was ignored",
    BATCH_ID_REUSED: "this batch_id was first used on another endpoint; this request was ignored",
}


@dataclass(frozen=True)
class Warning:
    code: str
    path: str
    message: str

    def as_dict(self) -> dict:
        return {"code": self.code, "path": self.path, "message": self.message}


@dataclass
class BatchOutcome:
    batch_id: str
    record_count: int
    replayed: bool = False
    warnings: list[Warning] = field(default_factory=list)

    @property
    def http_status(self) -> int:
        return 200 if self.replayed else 202

    def as_dict(self) -> dict:
        return {
            "batch_id": self.batch_id,
            "status": "ALREADY_RECEIVED" if self.replayed else "ACCEPTED",
            "record_count": self.record_count,
            "warnings": [warning.as_dict() for warning in self.warnings],
        }


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def new_marker(partner_id: str, batch_id, kind: str, record_count: int, body: bytes, **day) -> BatchMarker:
    return BatchMarker(partner_id, str(batch_id), kind, record_count, body_digest(body), utc_now(), **day)


def replay(stored: BatchMarker, attempted: BatchMarker) -> BatchOutcome:
    warnings = []
    if stored.kind != attempted.kind:
        warnings.append(Warning(BATCH_ID_REUSED, "batch_id",
                                f"this batch_id was first used for {stored.kind}; this request was ignored"))
    elif stored.body_digest != attempted.body_digest:
        warnings.append(Warning(RESEND_BODY_IGNORED, "$",
                                "this batch_id was already received with a different body; the new body was "
                                "ignored. Send changed data with a new batch_id."))
    return BatchOutcome(stored.batch_id, stored.record_count, replayed=True, warnings=warnings)


def accept(storage: Storage, marker: BatchMarker, save: Callable[[BatchMarker], BatchMarker | None],
           warnings: list[Warning] | None = None) -> BatchOutcome:
    """Answer a known batch_id from its marker; otherwise save (marker last, create-if-absent)."""
    faults.point("batch.validated")
    stored = storage.find_batch(marker.partner_id, marker.batch_id)
    if stored is None:
        stored = save(marker)  # a concurrent twin may still win the race: then it is a resend
    faults.point("batch.before_response")
    if stored is not None:
        return replay(stored, marker)
    return BatchOutcome(marker.batch_id, marker.record_count, warnings=list(warnings or []))
