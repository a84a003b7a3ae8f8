"""PUT and GET /mappings/transaction-types: the partner's source codes to HQ standard types (4.1, 4.2).
The upload has the shape of every write (ingest/write_flow.py): its checks read the mapping it replaces.

An upload replaces the whole mapping. Transactions store their source code, and reconciliation
resolves the standard type from the mapping in effect, so a new mapping re-maps stored
transactions without rewriting them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from core import faults
from core.clock import UTC
from core.errors import ApiError, FieldProblem
from core.ports import Admission, BatchMarkers, BatchWrites, MasterReads, Reconciliations
from core.queue_ports import DelayedQueue
from core.reconcile_reruns import rerun_after_mapping
from core.records import Partner
from ingest.batches import BatchOutcome, NewBatch, unknown_member_warnings
from ingest.body_digests import meaning_of_body
from ingest.parsing import Refused, duplicates, raise_if_any
from ingest.stored_size import oversized
from ingest.wire.requests import MappingsBatch
from ingest.wire.resend_keys import ResendKey
from ingest.wire.responses import MappingResponse, answer
from ingest.write_flow import Checked, Opened, Write, accept_opened, open_batch
from reference.codes import standard_transaction_type

UNKNOWN_CODE_MESSAGE = (
    "not in the standard transaction type list; codes are case-sensitive (SALE, not sale), "
    "and GET /pos/v1/reference/transaction-types lists them"
)


class PutMappingStorage(Admission, BatchMarkers, BatchWrites, MasterReads, Reconciliations, Protocol):
    """What PUT /mappings/transaction-types uses of storage: the checked days whose result the new mapping
    changes are reconciled again."""


def _duplicate_codes(source_codes: list[Any]) -> list[FieldProblem]:
    return duplicates(source_codes, "mappings", "source_code")


def _unknown_codes(standard_codes: list[str | None]) -> list[FieldProblem]:
    """A problem for each standard_code (a string, or None: not readable) not in the standard list."""
    return [
        FieldProblem(f"mappings[{i}].standard_code", UNKNOWN_CODE_MESSAGE)
        for i, code in enumerate(standard_codes)
        if code is not None and standard_transaction_type(code) is None
    ]


def _readable_problems(refused: Refused) -> list[FieldProblem]:
    """A refused upload's repeated source codes and unknown standard codes, among those that can be read."""
    codes = [
        m.get("standard_code")
        if isinstance(m, dict)
        and isinstance(m.get("standard_code"), str)
        and not refused.failed("mappings", i, "standard_code")
        else None
        for i, m in enumerate(refused.entries("mappings"))
    ]
    return _duplicate_codes(refused.readable_values("mappings", "source_code")) + _unknown_codes(codes)


MAPPINGS = Write(
    "mappings",
    MappingsBatch,
    ResendKey,
    meaning_of_body(MappingsBatch),
    _readable_problems,
    None,  # no store codes
)


@dataclass(slots=True)
class CheckedMapping(Checked):
    entries: list[dict[str, Any]] = field(default_factory=list)  # what is saved: the whole mapping
    changed: set[str] = field(default_factory=set)  # the source codes whose standard type it changes


def put_mapping(
    storage: PutMappingStorage, queue: DelayedQueue, partner: Partner, body: bytes, *, validate_only: bool = False
) -> BatchOutcome:
    opened = open_batch(storage, partner.partner_id, MAPPINGS, body)
    if isinstance(opened, BatchOutcome):  # a resend: it re-runs the days still on the old mapping too
        return _after_save(storage, queue, partner.partner_id, opened, set(), validate_only)
    before = read_needs(storage, partner.partner_id)
    checked = check(opened, before)
    _refuse_if_any(checked.problems, body)
    outcome = save(storage, partner.partner_id, opened, checked, validate_only)
    changed = set() if outcome.replayed else checked.changed  # a concurrent twin stored it first
    return _after_save(storage, queue, partner.partner_id, outcome, changed, validate_only)


def read_needs(storage: MasterReads, partner_id: str) -> dict[str, str]:
    """The mapping in effect before this upload (source code -> standard code), to tell what it changes."""
    return storage.get_mapping(partner_id).standard_code_of()


def check(opened: Opened[MappingsBatch], before: dict[str, str]) -> CheckedMapping:
    """Each source code at most once and each standard code in the standard list; then the size of the
    mapping as stored, and the source codes whose standard type it changes from `before`."""
    batch = opened.batch
    problems = _duplicate_codes([m.source_code for m in batch.mappings])
    problems += _unknown_codes([m.standard_code for m in batch.mappings])
    if problems:
        return CheckedMapping(problems)
    entries = [m.model_dump(mode="json") for m in batch.mappings]
    problems = oversized(
        "mappings",
        len(orjson.dumps(entries)),
        "mapping",
        "the mapping is stored whole; send the codes your stores use",
    )
    if problems:
        return CheckedMapping(problems)
    after = {entry["source_code"]: entry["standard_code"] for entry in entries}
    changed = {code for code in before.keys() | after.keys() if before.get(code) != after.get(code)}
    return CheckedMapping(warnings=unknown_member_warnings(opened.unknown), entries=entries, changed=changed)


def _refuse_if_any(problems: list[FieldProblem], body: bytes) -> None:
    """Unknown codes alone are the specification's UNKNOWN_STANDARD_CODE; with any other problem, they are
    listed in one INVALID_PAYLOAD (every problem in one answer)."""
    if problems and all(problem.message == UNKNOWN_CODE_MESSAGE for problem in problems):
        raise ApiError(
            400,
            "UNKNOWN_STANDARD_CODE",
            "A standard_code is not in the standard transaction type list.",
            errors=problems,
        )
    raise_if_any(problems, body)


def save(
    storage: PutMappingStorage,
    partner_id: str,
    opened: Opened[MappingsBatch],
    checked: CheckedMapping,
    validate_only: bool,
) -> BatchOutcome:
    accepted = accept_opened(
        storage,
        partner_id,
        MAPPINGS,
        opened,
        len(checked.entries),
        checked.warnings,
        validate_only,
    )
    if isinstance(accepted, NewBatch):
        return accepted.saved(storage.replace_mapping(accepted.marker, checked.entries))
    return accepted


def _after_save(
    storage: PutMappingStorage,
    queue: DelayedQueue,
    partner_id: str,
    outcome: BatchOutcome,
    changed: set[str],
    validate_only: bool,
) -> BatchOutcome:
    """Reconcile again the checked days whose result the mapping changes. Also on a resend: when the first
    attempt failed after storing the mapping, its retry re-runs the days that still carry a result of the
    old mapping (nothing, when there are none)."""
    if validate_only:
        return outcome  # nothing stored, so nothing to reconcile again
    faults.point("mapping.before_rerun")
    rerun_after_mapping(storage, queue, partner_id, changed)
    return outcome


def get_mapping(storage: MasterReads, partner: Partner) -> dict[str, Any]:
    mapping = storage.get_mapping(partner.partner_id)
    updated_at = None if mapping.updated_at is None else mapping.updated_at.astimezone(UTC)
    return answer(
        MappingResponse,
        {
            "partner_id": partner.partner_id,
            "batch_id": mapping.batch_id,
            "updated_at": updated_at,
            "mappings": mapping.entries,
        },
    )
