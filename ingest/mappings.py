"""PUT and GET /mappings/transaction-types: the partner's source codes to HQ standard types (4.1, 4.2).

An upload replaces the whole mapping. Transactions store their source code, and reconciliation
resolves the standard type from the mapping in effect, so a new mapping re-maps stored
transactions without rewriting them.
"""

from __future__ import annotations

from core import faults
from core.clock import to_api_text
from core.errors import ApiError, FieldProblem
from core.ports import DelayedQueue, Partner, Storage
from ingest.batches import BatchOutcome, accept, known_batch, new_marker
from ingest.parsing import duplicates, parse, raise_if_any
from ingest.wire import MappingsBatch, ResendKey
from reconcile.service import rerun_after_mapping
from reference.codes import standard_transaction_type


def put_mapping(storage: Storage, queue: DelayedQueue, partner: Partner, body: bytes) -> BatchOutcome:
    changed: set[str] = set()
    outcome = known_batch(storage, partner.partner_id, "mappings", body, ResendKey)
    if outcome is None:
        outcome, changed = _replace_mapping(storage, partner, body)
    # Also on a resend: when the first attempt failed after storing the mapping, its retry re-runs
    # the days that still carry a result of the old mapping (nothing, when there are none).
    faults.point("mapping.before_rerun")
    rerun_after_mapping(storage, queue, partner.partner_id, changed)
    return outcome


def _replace_mapping(storage: Storage, partner: Partner, body: bytes) -> tuple[BatchOutcome, set[str]]:
    """The upload's outcome, and the source codes whose standard type it changed."""
    batch = parse(MappingsBatch, body)
    raise_if_any(duplicates([m.source_code for m in batch.mappings], lambda i: f"mappings[{i}].source_code"))
    unknown = [FieldProblem(f"mappings[{i}].standard_code", "not in the standard transaction type list "
                                                            "(GET /reference/transaction-types)")
               for i, m in enumerate(batch.mappings) if standard_transaction_type(m.standard_code) is None]
    if unknown:
        raise ApiError(400, "UNKNOWN_STANDARD_CODE",
                       "A standard_code is not in the standard transaction type list.", errors=unknown)
    entries = [m.model_dump(mode="json") for m in batch.mappings]
    marker = new_marker(partner.partner_id, batch, "mappings", len(entries), body)
    before = storage.get_mapping(partner.partner_id).standard_code_of()
    outcome = accept(storage, marker, lambda m: storage.replace_mapping(m, entries), sent_batch_id=batch.batch_id)
    if outcome.replayed:  # a concurrent twin stored it first
        return outcome, set()
    after = {entry["source_code"]: entry["standard_code"] for entry in entries}
    return outcome, {code for code in before.keys() | after.keys() if before.get(code) != after.get(code)}


def get_mapping(storage: Storage, partner: Partner) -> dict:
    mapping = storage.get_mapping(partner.partner_id)
    return {
        "partner_id": partner.partner_id,
        "batch_id": mapping.batch_id,
        "updated_at": None if mapping.updated_at is None else to_api_text(mapping.updated_at),
        "mappings": mapping.entries,
    }
