"""POST /trade-records: a batch of one store's transactions for one business date (spec 4.7), in the shape
of every write (ingest/write_flow.py): `open_trade_records` (the prologue, with the one parse), `read_needs`,
`check` (pure), `save`.

Order of checks: a known batch_id is answered from its marker (ingest/batches.py), then a body the model
refuses (400, with what its readable parts show), the store (403), then one 400 for the body's own checks
and what needs stored data: the store's currency and country.
Recording rules that HQ can check become warnings; the records are still accepted. Each stored
record carries its totals in minor units so that reconciliation never re-reads whole records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from core import faults
from core.errors import FieldProblem
from core.money import currency_exponent
from core.ports import Admission, BatchMarkers, BatchWrites, MasterReads, Reconciliations, TradeRecordReads
from core.queue_ports import DelayedQueue
from core.reconcile_reruns import reopen_changed_days
from core.records import (
    BatchMarker,
    Partner,
    StoreDay,
    StoreMaster,
    TradeRecordRow,
    record_changes,
)
from core.retention import Retention
from core.trade_inputs import TradeInputReads, TradeInputs
from ingest.access import refuse_unregistered
from ingest.amounts import MoneyReader
from ingest.batches import (
    MAX_SEQ_TWINS_COUNTED,
    BatchOutcome,
    accept,
    repeated_batch_seq,
    resend_key,
    unknown_member_warnings,
)
from ingest.data_protection import may_hold_card_numbers, protection_problems, protection_warnings
from ingest.empty_values import empty_value_warnings, warned_empty_values
from ingest.one_parse import read_batch, read_slow_way, validated_once
from ingest.parsing import raise_if_any
from ingest.payment_ids import batch_payment_ids, reused_payment_ids
from ingest.record_amounts import read_amounts
from ingest.record_documents import document_json
from ingest.record_structure import readable_problems, structure_problems
from ingest.retention import EVERY_DAY_HELD, HeldDays, held_days
from ingest.store_checks import no_store_master, store_currency_problem
from ingest.stored_size import oversized_records
from ingest.trade_batches import (
    finish_resent,
    meaning_of_records,
    moved_warnings,
    resent_meaning,
    resent_moved_warnings,
    trade_records_marker,
)
from ingest.trade_rules import record_warnings
from ingest.trade_rules.common import RecordAmounts
from ingest.wire.requests import TradeRecord, TradeRecordsBatch
from ingest.wire.resend_keys import StoreDayKey
from ingest.wire.responses import BatchWarning
from ingest.write_flow import Checked, Opened, Write, answer_resend, require_stores
from reference.codes import payment_directions_in_effect

if TYPE_CHECKING:
    from hashlib import _Hash as Hash


class TradeRecordsStorage(
    Admission,
    BatchMarkers,
    BatchWrites,
    MasterReads,
    TradeInputReads,
    TradeRecordReads,
    Reconciliations,
    Retention,
    Protocol,
):
    """What POST /trade-records uses of storage: the store, mapping and payment directions for its warnings,
    the partner's payment_ids, the day's batch_seqs, and the checked days its records change."""


TRADE_RECORDS = Write(
    "trade-records",
    TradeRecordsBatch,
    StoreDayKey,
    resent_meaning,
    readable_problems,
    lambda batch: [batch.store_id],
)


@dataclass(frozen=True, slots=True)
class OpenedRecords(Opened[TradeRecordsBatch]):
    """A new batch of trade records past the prologue (`open_trade_records`)."""

    places: int | None  # the places of every amount, when the one parse confirmed them; None: read the slow way
    # its store's registration and master data, the mapping and payment directions, read together before the
    # one parse (core/trade_inputs.py); None: not read (the body's store_id could not be read)
    inputs: TradeInputs | None
    looked_up: bool = False  # the prologue found no marker of its batch_id: not looked up again (decision 0121)
    # whether its records' free texts may hold a card number, when the one parse's bulk checks read them
    card_number_candidates: bool | None = None


@dataclass(frozen=True, slots=True)
class RecordsNeeds:
    """What the checks of a batch of trade records read from storage (`read_needs`)."""

    store: StoreMaster | None  # None: no master data yet, and the batch is refused
    standard_of: dict[str, str]  # the partner's mapping: source code -> standard transaction type
    payment_types: set[str]  # the payment types with a direction in effect
    payment_id_users: dict[str, set[str]]  # the stored trade records using each of the batch's payment_ids
    batch_seq_twins: list[str]  # the batch_ids of the store-day's batches with the batch's batch_seq
    held: HeldDays = EVERY_DAY_HELD  # the store-days the hot store still holds (TRADE_RECORD_RETENTION_DAYS)


@dataclass(slots=True)
class CheckedRecords(Checked):
    rows: list[TradeRecordRow] = field(default_factory=list)  # what is saved
    meaning: str = ""  # what the batch says (its marker's meaning_digest)


def post_trade_records(
    storage: TradeRecordsStorage,
    queue: DelayedQueue,
    partner: Partner,
    body: bytes,
    delay_seconds: int,
    *,
    validate_only: bool = False,
) -> BatchOutcome:
    opened = open_trade_records(storage, partner.partner_id, body)
    if isinstance(opened, BatchOutcome):  # a resend: it finishes what its first attempt changed
        return _finish_resend(
            storage, queue, partner.partner_id, opened, opened.stored, body, delay_seconds, validate_only
        )
    needs = read_needs(storage, partner.partner_id, opened)
    checked = check(opened, needs)
    raise_if_any(checked.problems, body)
    return save(storage, queue, partner.partner_id, opened, checked, delay_seconds, validate_only)


def open_trade_records(storage: TradeRecordsStorage, partner_id: str, body: bytes) -> BatchOutcome | OpenedRecords:
    """The prologue of every write (ingest/write_flow.py) with the one parse (ingest/one_parse.py): the body is
    decoded once and its resend key read from that; a new batch is confirmed with the places of its store's
    currency (the store is read for them), or read the slow way (`parse`), which says why or confirms."""
    read = read_batch(TradeRecordsBatch, body)
    key = resend_key(body, StoreDayKey, None if read is None else read.values(StoreDayKey.model_fields))
    resent = answer_resend(storage, partner_id, TRADE_RECORDS, body, key)
    if resent is not None:
        return resent
    inputs = None if key is None else storage.trade_inputs(partner_id, key.store_id)
    store = None if inputs is None else inputs.store
    places = None if store is None else currency_exponent(store.currency)
    exact = None if places is None or read is None else validated_once(TradeRecordsBatch, body, read, places)
    card_candidates = None if exact is None or read is None else read.card_number_candidates
    del read  # a batch the slow way reads no longer needs it
    batch, unknown = (exact, []) if exact is not None else read_slow_way(TradeRecordsBatch, body, readable_problems)
    if inputs is not None and inputs.store_id == batch.store_id:
        refuse_unregistered(set() if inputs.registered else {batch.store_id})
    else:
        require_stores(storage, partner_id, TRADE_RECORDS, batch)
        inputs = storage.trade_inputs(partner_id, batch.store_id)
    places_confirmed = None if exact is None else places
    return OpenedRecords(batch, body, unknown, places_confirmed, inputs, key is not None, card_candidates)


def read_needs(storage: TradeRecordsStorage, partner_id: str, opened: OpenedRecords) -> RecordsNeeds:
    """Every read the checks of a new batch need, besides what the prologue read (its store's master data,
    the partner's mapping and payment directions for the recording rules): the stored records using its
    payment_ids and the store-day's batches with its batch_seq."""
    batch, inputs = opened.batch, opened.inputs
    if inputs is None or inputs.store_id != batch.store_id:
        inputs = storage.trade_inputs(partner_id, batch.store_id)
    day, payment_ids = StoreDay(batch.store_id, batch.business_date), batch_payment_ids(batch.trade_records)
    stored = storage.stored_for_checks(partner_id, day, batch.batch_seq, payment_ids, MAX_SEQ_TWINS_COUNTED + 1)
    return RecordsNeeds(
        inputs.store,
        inputs.mapping.standard_code_of(),
        set(payment_directions_in_effect(inputs.payment_directions)),
        stored.payment_id_users,
        stored.batch_seq_twins,
        held_days(storage),
    )


def check(opened: OpenedRecords, needs: RecordsNeeds) -> CheckedRecords:
    """The checks of a new batch, without storage, and the rows it saves. Refused (400) for a store without
    master data (that problem alone), else for every problem of its records (`record_problems`), else for a
    record too large to store. Else the warnings of its answer, in this order: each record's recording rules
    and data protection, payment_ids other records use, a repeated batch_seq, values sent as "" and members
    the service does not know."""
    batch, store = opened.batch, needs.store
    if store is None:
        return CheckedRecords(no_store_master(batch.store_id))
    problems, amounts = record_problems(batch, store, opened.places, opened.card_number_candidates)
    problems += needs.held.problems(batch.business_date)
    if problems:
        return CheckedRecords(problems)
    warnings = per_record_warnings(batch, amounts, store, needs)
    warnings += reused_payment_ids(batch.trade_records, needs.payment_id_users)
    rows, meaning = stored_rows(batch, amounts)
    problems = oversized_records(rows)
    if problems:
        return CheckedRecords(problems)
    warnings += repeated_batch_seq(batch.batch_key, batch.batch_seq, needs.batch_seq_twins)
    if opened.places is None:  # the fast path refuses "" where the answer warns: only the slow way meets one
        warnings += empty_value_warnings(warned_empty_values(TradeRecordsBatch, opened.body))
    warnings += unknown_member_warnings(opened.unknown)
    return CheckedRecords(warnings=warnings, rows=rows, meaning=meaning)


def save(
    storage: TradeRecordsStorage,
    queue: DelayedQueue,
    partner_id: str,
    opened: OpenedRecords,
    checked: CheckedRecords,
    delay_seconds: int,
    validate_only: bool,
) -> BatchOutcome:
    """Accept the batch (its records, then its marker: ingest/batches.py `accept`), then reopen the checked
    days its records changed. A validate-only request reads what saving would change instead."""
    batch, rows = opened.batch, checked.rows
    marker = trade_records_marker(partner_id, batch, len(rows), opened.body, checked.meaning)
    accepted = accept(
        storage,
        marker,
        checked.warnings,
        sent_batch_id=batch.batch_id,
        validate_only=validate_only,
        looked_up=opened.looked_up,
    )
    if isinstance(accepted, BatchOutcome):  # a known batch_id, or a validate-only request
        if accepted.replayed:
            return _finish_twin(storage, queue, marker, accepted, opened.body, delay_seconds, validate_only)
        stored = storage.trade_record_versions(partner_id, [row.trade_record_id for row in rows])
        accepted.warnings += moved_warnings(batch, record_changes(rows, stored).moves)  # what saving would change
        return accepted
    saved = storage.save_trade_records(accepted.marker, rows, looked_up=opened.looked_up)
    outcome = accepted.saved(saved.existing)
    if outcome.replayed:  # a concurrent twin won the race
        return _finish_twin(storage, queue, marker, outcome, opened.body, delay_seconds, validate_only)
    outcome.warnings += moved_warnings(batch, saved.changes.moves)
    faults.point("records.saved")
    reopen_changed_days(
        storage, queue, partner_id, StoreDay(batch.store_id, batch.business_date), saved.changes, delay_seconds
    )
    return outcome


def _finish_twin(
    storage: TradeRecordsStorage,
    queue: DelayedQueue,
    marker: BatchMarker,
    outcome: BatchOutcome,
    body: bytes,
    delay_seconds: int,
    validate_only: bool,
) -> BatchOutcome:
    """A batch whose twin (its batch_id) was stored first: answered, and finished, as its resend."""
    if validate_only:
        return outcome
    twin = storage.find_batch(marker.partner_id, marker.batch_id)
    return _finish_resend(storage, queue, marker.partner_id, outcome, twin, body, delay_seconds, validate_only)


def _finish_resend(
    storage: TradeRecordsStorage,
    queue: DelayedQueue,
    partner_id: str,
    outcome: BatchOutcome,
    stored: BatchMarker | None,
    body: bytes,
    delay_seconds: int,
    validate_only: bool,
) -> BatchOutcome:
    """A batch received before (a retry, or a concurrent twin): reopen what its first attempt changed, in case
    it failed before, and tell the first answer's TRADE_RECORD_MOVED warnings again."""
    if not validate_only:
        finish_resent(storage, queue, partner_id, stored, delay_seconds)
    if stored is not None and stored.kind == "trade-records":
        outcome.warnings += resent_moved_warnings(stored, body)
    return outcome


# --- the checks of a new batch's records --------------------------------------------------------------


def record_problems(
    batch: TradeRecordsBatch, store: StoreMaster, places: int | None, card_candidates: bool | None = None
) -> tuple[list[FieldProblem], list[RecordAmounts]]:
    """The problems of every record of a parsed batch and their amounts, in one pass over the records:
    its structure (`structure_problems`), its currency against the store's, its amounts (places: those the
    one parse confirmed, see MoneyReader) and data protection (the card number check of every record only
    when the quick search of the whole batch's free text finds a candidate; card_candidates: its answer,
    when the one parse's bulk checks searched). raise_if_any puts the problems in the body's order."""
    problems: list[FieldProblem] = []  # only extended in place: the readers note their problems into it
    amounts: list[RecordAmounts] = []
    card_numbers = may_hold_card_numbers(batch.trade_records) if card_candidates is None else card_candidates
    readers: dict[str, MoneyReader] = {}  # one per currency (nearly always the store's), not one per record
    for index, record in enumerate(batch.trade_records):
        path = f"trade_records[{index}]"
        problems += structure_problems(path, record, batch.store_id, batch.business_date)
        if record.currency != store.currency:  # its path is built only then
            problems += store_currency_problem(f"{path}.currency", record.currency, store)
        reader = readers.get(record.currency)
        if reader is None:
            reader = readers[record.currency] = MoneyReader(record.currency, places)
            reader.problems = problems  # a record's amount problems come after its structure's, as before
        amounts.append(read_amounts(path, record, reader))
        problems += protection_problems(path, record, store.country_code, may_hold_card_numbers=card_numbers)
    return problems, amounts


def per_record_warnings(
    batch: TradeRecordsBatch, amounts: list[RecordAmounts], store: StoreMaster, needs: RecordsNeeds
) -> list[BatchWarning]:
    """Each record's recording rules (ingest/trade_rules) and data protection warnings, in the records' order."""
    standard_of, payment_types = needs.standard_of, needs.payment_types
    warnings: list[BatchWarning] = []
    for index, (record, money) in enumerate(zip(batch.trade_records, amounts, strict=True)):
        path = f"trade_records[{index}]"
        warnings += record_warnings(
            path,
            record,
            money,
            standard_of.get(record.source_transaction_type),
            payment_types,
            store.time_zone,
            store.workday_start,
        )
        warnings += protection_warnings(path, record, store.country_code)
    return warnings


def stored_rows(batch: TradeRecordsBatch, amounts: list[RecordAmounts]) -> tuple[list[TradeRecordRow], str]:
    """The rows of a batch's records as stored, and what the batch says (its `meaning_digest`, to which each
    document is added as it is written)."""
    meaning = meaning_of_records(batch)
    rows = [_row(record, money, meaning) for record, money in zip(batch.trade_records, amounts, strict=True)]
    return rows, meaning.hexdigest()


def _row(record: TradeRecord, amounts: RecordAmounts, meaning: Hash | None = None) -> TradeRecordRow:
    # Positional, in the order of TradeRecordRow's fields: 15 keywords took twice as long for a batch's
    # 500 rows (1.8 against 0.9 ms); tests/unit/test_record_rows.py checks each field by name.
    return TradeRecordRow(
        record.trade_record_id,
        record.version,
        record.last_modified_at,
        record.store_id,
        record.business_date,
        record.source_transaction_type,
        len(record.items),  # item_rows
        len(record.payments),  # payment_rows
        amounts.total_amount,
        amounts.tax_amount,
        amounts.tip_amount,
        amounts.payments_by_type,
        document_json(record, meaning),
        tuple([payment.payment_id for payment in record.payments]),
        product_lines(record),
    )


def product_lines(record: TradeRecord) -> dict[str, int]:
    """Item lines per product_id: what HQ's list of products not (yet) in the master counts."""
    lines: dict[str, int] = {}
    for item in record.items:  # a third of the time of dict(Counter(...)), which builds two mappings
        lines[item.product_id] = lines.get(item.product_id, 0) + 1
    return lines
