"""What every write batch shares: the batch marker, resends, and the common batch response.

Resending a known batch_id answers 200 ALREADY_RECEIVED with the original record_count (spec 1).
A resend is never silent about a different body: it carries a warning that the body was ignored.
Each write looks its batch_id up first (`known_batch`), and again inside the write (`accept`: the
marker is created if absent, so a concurrent twin that wins the race turns this request into a resend).

The response echoes the batch_id exactly as this request wrote it; markers are keyed by its canonical
UUID (`WriteBatch.batch_key`), so the same UUID in upper case is the same batch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable

from pydantic import ValidationError

from core import errors, faults
from core.clock import utc_now
from core.errors import FieldProblem
from core.ports import BatchMarker, Storage
from ingest import access
from ingest.parsing import i_json_problem
from ingest.wire import ResendKey, WriteBatch


RESEND_BODY_IGNORED = "RESEND_BODY_IGNORED"
BATCH_ID_REUSED = "BATCH_ID_REUSED"
BATCH_WARNING_CODES = {
    RESEND_BODY_IGNORED: "this batch_id was already received with a different body; the new body was ignored",
    BATCH_ID_REUSED: "this batch_id was first used on another endpoint; this request was ignored",
}


@dataclass(frozen=True)
class Warning:
    """A warning of the common batch response. path locates the record, as the specification shows
    it ("trade_records[17]"); field names the one field concerned, relative to the record
    ("total_amount", "items[2].line_amount"), or is None when the warning is about the whole record."""

    code: str
    path: str
    message: str
    field: str | None = None

    def as_dict(self) -> dict:
        answer = {"code": self.code, "path": self.path, "message": self.message}
        if self.field is not None:
            answer["field"] = self.field
        return answer


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


def new_marker(partner_id: str, batch: WriteBatch, kind: str, record_count: int, body: bytes, **day) -> BatchMarker:
    return BatchMarker(partner_id, batch.batch_key, kind, record_count, body_digest(body), utc_now(), **day)


# Both batch warnings concern the request as a whole ("$", as a problem about the whole body is located)
# and name batch_id as the field: the remedy is a new batch_id.
def replay(stored: BatchMarker, kind: str, digest: str, sent_batch_id: str) -> BatchOutcome:
    warnings = []
    if stored.kind != kind:
        warnings.append(Warning(BATCH_ID_REUSED, "$",
                                f"this batch_id was first used for {stored.kind}; this request was ignored",
                                field="batch_id"))
    elif stored.body_digest != digest:
        warnings.append(Warning(RESEND_BODY_IGNORED, "$",
                                "this batch_id was already received with a different body; the new body was "
                                "ignored. Send changed data with a new batch_id.", field="batch_id"))
    return BatchOutcome(sent_batch_id, stored.record_count, replayed=True, warnings=warnings)


def accept(storage: Storage, marker: BatchMarker, save: Callable[[BatchMarker], BatchMarker | None],
           warnings: list[Warning] | None = None, *, sent_batch_id: str) -> BatchOutcome:
    """Answer a known batch_id from its marker; otherwise save (marker last, create-if-absent).
    sent_batch_id: the batch_id as the request wrote it, which the response echoes."""
    faults.point("batch.validated")
    stored = storage.find_batch(marker.partner_id, marker.batch_id)
    if stored is None:
        stored = save(marker)  # a concurrent twin may still win the race: then it is a resend
    faults.point("batch.before_response")
    if stored is not None:
        return replay(stored, marker.kind, marker.body_digest, sent_batch_id)
    return BatchOutcome(sent_batch_id, marker.record_count, warnings=list(warnings or []))


def known_batch(storage: Storage, partner_id: str, kind: str, body: bytes,
                key: type[ResendKey]) -> BatchOutcome | None:
    """The answer to a resend of a known batch_id, found before the body is validated (a resend costs a
    look-up, not a validation); None for a new batch_id, or when the batch_id or a store code cannot be
    read (the validation then says why). The partner's key was checked by the caller and markers are
    per partner, so a partner only ever finds its own; the store codes are checked as for a new batch.
    A body that differs from the one received must still be I-JSON: with a repeated batch_id, the
    partner's parser and ours could disagree on which batch it names."""
    try:
        read = key.model_validate_json(body)
    except ValidationError:
        return None
    stored = storage.find_batch(partner_id, read.batch_key)
    if stored is None:
        return None
    access.require_registered(storage, partner_id, read.store_ids())
    digest = body_digest(body)
    if digest != stored.body_digest and (problem := i_json_problem(body)):
        raise errors.invalid_payload([FieldProblem("$", problem)])
    return replay(stored, kind, digest, read.batch_id)
