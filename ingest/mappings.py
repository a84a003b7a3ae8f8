"""PUT and GET /mappings/transaction-types: the partner's source codes to HQ standard types (4.1, 4.2).

An upload replaces the whole mapping. Transactions store their source code, and reconciliation
resolves the standard type from the mapping in effect, so a new mapping re-maps stored
transactions without rewriting them.
"""

from __future__ import annotations

from typing import Protocol

import orjson

from core import faults
from core.clock import UTC
from core.errors import ApiError, FieldProblem
from core.ports import Admission, BatchMarkers, BatchWrites, DelayedQueue, MasterReads, Reconciliations
from core.reconcile_reruns import rerun_after_mapping
from core.records import Partner
from ingest.batches import BatchOutcome, accept, known_batch, new_marker, unknown_member_warnings
from ingest.body_digests import meaning_of_body
from ingest.parsing import Refused, duplicates, parse, raise_if_any
from ingest.stored_size import oversized
from ingest.wire.requests import MappingsBatch
from ingest.wire.resend_keys import ResendKey
from ingest.wire.responses import MappingResponse, answer
from reference.codes import standard_transaction_type

UNKNOWN_CODE_MESSAGE = (
    "not in the standard transaction type list; codes are case-sensitive (SALE, not sale), "
    "and GET /pos/v1/reference/transaction-types lists them"
)


class PutMappingStorage(Admission, BatchMarkers, BatchWrites, MasterReads, Reconciliations, Protocol):
    """What PUT /mappings/transaction-types uses of storage: the checked days whose result the new mapping
    changes are reconciled again."""


def put_mapping(
    storage: PutMappingStorage, queue: DelayedQueue, partner: Partner, body: bytes, *, validate_only: bool = False
) -> BatchOutcome:
    changed: set[str] = set()
    outcome = known_batch(storage, partner.partner_id, "mappings", body, ResendKey, meaning_of_body(MappingsBatch))
    if outcome is None:
        outcome, changed = _replace_mapping(storage, partner, body, validate_only)
    if validate_only:
        return outcome  # nothing stored, so nothing to reconcile again
    # Also on a resend: when the first attempt failed after storing the mapping, its retry re-runs
    # the days that still carry a result of the old mapping (nothing, when there are none).
    faults.point("mapping.before_rerun")
    rerun_after_mapping(storage, queue, partner.partner_id, changed)
    return outcome


def _replace_mapping(
    storage: PutMappingStorage, partner: Partner, body: bytes, validate_only: bool
) -> tuple[BatchOutcome, set[str]]:
    """The upload's outcome, and the source codes whose standard type it changed."""
    batch, unknown_members = parse(MappingsBatch, body, _readable_problems)
    unknown = _unknown_codes([m.standard_code for m in batch.mappings])
    # Any other problem makes it an INVALID_PAYLOAD that lists the unknown codes too (every problem in
    # one answer); unknown codes alone are the specification's UNKNOWN_STANDARD_CODE.
    duplicated = _duplicate_codes([m.source_code for m in batch.mappings])
    if duplicated:
        raise_if_any(duplicated + unknown, body)
    if unknown:
        raise ApiError(
            400,
            "UNKNOWN_STANDARD_CODE",
            "A standard_code is not in the standard transaction type list.",
            errors=unknown,
        )
    entries = [m.model_dump(mode="json") for m in batch.mappings]
    raise_if_any(
        oversized(
            "mappings",
            len(orjson.dumps(entries)),
            "mapping",
            "the mapping is stored whole; send the codes your stores use",
        ),
        body,
    )
    marker = new_marker(partner.partner_id, batch, "mappings", len(entries), body)
    before = storage.get_mapping(partner.partner_id).standard_code_of()
    outcome = accept(
        storage,
        marker,
        lambda m: storage.replace_mapping(m, entries),
        unknown_member_warnings(unknown_members),
        sent_batch_id=batch.batch_id,
        validate_only=validate_only,
    )
    if outcome.replayed:  # a concurrent twin stored it first
        return outcome, set()
    after = {entry["source_code"]: entry["standard_code"] for entry in entries}
    return outcome, {code for code in before.keys() | after.keys() if before.get(code) != after.get(code)}


def _duplicate_codes(source_codes: list) -> list[FieldProblem]:
    return duplicates(source_codes, "mappings", "source_code")


def _unknown_codes(standard_codes: list) -> list[FieldProblem]:
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


def get_mapping(storage: MasterReads, partner: Partner) -> dict:
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
