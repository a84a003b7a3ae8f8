"""What every write batch shares: the batch marker, resends, and the common batch response.

Resending a known batch_id answers 200 ALREADY_RECEIVED with the original record_count (spec 1).
A resend is never silent about a different body: it carries a warning that the body was ignored.
Each write looks its batch_id up first (`known_batch_of`, in the prologue of every write:
ingest/write_flow.py), and again inside the write (`accept`: the marker is created if absent, so a concurrent
twin that wins the race turns this request into a resend). `accept` hands a new batch back to its write as a
`NewBatch`, which the write saves with its own storage call and answers from (`NewBatch.saved`): no callback.

The response echoes the batch_id exactly as this request wrote it; markers are keyed by its canonical
UUID (`WriteBatch.batch_key`), so the same UUID in upper case is the same batch, and the body's digest
is taken with the batch_id's text in that form (`body_digest`), so such a resend is the same body.

A validate-only request (`validate_only`) goes through the same use case, with every check and the
resend look-up; `accept` then stores nothing and the outcome is VALID (decision 0022).

The warnings that no single use case owns are built here too: members the service does not know
(ignored, so a misspelled field would lose its value without a word) and a repeated batch_seq.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from pydantic import ValidationError

from core import errors, faults
from core.clock import utc_now
from core.errors import FieldProblem
from core.kept_warnings import KeptWarning
from core.ports import Admission, BatchMarkers
from core.records import BatchMarker
from ingest import access
from ingest.body_digests import body_digest, meaning_digest, raw_digest
from ingest.parsing import i_json_problem, json_path
from ingest.wire.requests import WriteBatch
from ingest.wire.resend_keys import ResendKey
from ingest.wire.responses import BatchResponse, BatchWarning, answer

Key = TypeVar("Key", bound=ResendKey)


class ResendLookup(Admission, BatchMarkers, Protocol):
    """What answering a resend uses of storage: its marker, and the partner's stores (checked as for a new
    batch)."""


RESEND_BODY_IGNORED = "RESEND_BODY_IGNORED"
BATCH_ID_REUSED = "BATCH_ID_REUSED"
BATCH_SEQ_REPEATED = "BATCH_SEQ_REPEATED"
UNKNOWN_MEMBER_IGNORED = "UNKNOWN_MEMBER_IGNORED"
EMPTY_VALUE_READ_AS_ABSENT = "EMPTY_VALUE_READ_AS_ABSENT"
BATCH_WARNING_CODES = {
    RESEND_BODY_IGNORED: "this batch_id was already received with a different body; the new body was ignored",
    BATCH_ID_REUSED: "this batch_id was first used on another endpoint; this request was ignored",
    BATCH_SEQ_REPEATED: "another batch of trade records of this store and business date already had this "
    "batch_seq; the records are stored, but reconciliation counts batches by batch_seq",
    UNKNOWN_MEMBER_IGNORED: "a member name the service does not know was ignored with its value (a misspelled "
    "field, or one of a later version of the interface)",
    EMPTY_VALUE_READ_AS_ABSENT: 'a timestamp, amount, listed code or card_last4 was sent as an empty string (""), '
    "which is no value of its form; it was read as absent, as if omitted",
}


@dataclass
class BatchOutcome:
    batch_id: str
    record_count: int
    replayed: bool = False
    validate_only: bool = False  # checked as a real send would be, nothing stored: VALID in place of ACCEPTED
    warnings: list[BatchWarning] = field(default_factory=list)
    # The marker a replay was answered from, so that a use case finishing a retry needs no second read.
    stored: BatchMarker | None = field(default=None, compare=False, repr=False)

    @property
    def http_status(self) -> int:
        return 202 if self.status == "ACCEPTED" else 200

    @property
    def status(self) -> str:
        if self.replayed:
            return "ALREADY_RECEIVED"
        return "VALID" if self.validate_only else "ACCEPTED"

    def as_dict(self) -> dict[str, Any]:
        """The common batch response (BatchResponse): a warning's field is absent when it is None."""
        return answer(
            BatchResponse,
            {
                "batch_id": self.batch_id,
                "status": self.status,
                "record_count": self.record_count,
                "warnings": self.warnings,
            },
        )


def new_marker(
    partner_id: str,
    batch: WriteBatch,
    kind: str,
    record_count: int,
    body: bytes,
    meaning: str | None = None,
    **day: Any,
) -> BatchMarker:
    """meaning: the batch's `meaning_digest`, when the caller has it (trade records); else it is taken here."""
    return BatchMarker(
        partner_id,
        batch.batch_key,
        kind,
        record_count,
        body_digest(body),
        utc_now(),
        meaning_digest=meaning_digest(batch) if meaning is None else meaning,
        **day,
    )


def same_body(stored: BatchMarker, body: bytes) -> bool:
    """Whether body is the one the marker was stored for: the same bytes but for how the batch_id is
    written; a marker stored before the canonical digest also matches the very same bytes."""
    return stored.body_digest == body_digest(body) or stored.body_digest == raw_digest(body)


def says_the_same(stored: BatchMarker, body: bytes, meaning_of: Callable[[bytes], str | None] | None) -> bool:
    """Whether body is the one the marker was stored for (`same_body`, cheap: a retry sends the same bytes),
    or says the same written otherwise (`meaning_of` reads it: only then, and only for a marker that kept
    what its body said)."""
    if same_body(stored, body):
        return True
    if stored.meaning_digest is None or meaning_of is None:
        return False
    return meaning_of(body) == stored.meaning_digest


# Both batch warnings concern the request as a whole ("$", as a problem about the whole body is located)
# and name batch_id as the field: the remedy is a new batch_id.
def replay(stored: BatchMarker, kind: str, same: bool, sent_batch_id: str) -> BatchOutcome:
    """ALREADY_RECEIVED, with the warnings of the first answer (decision 0030: the first answer is often the one
    that was lost, hence the resend), after a word on this request when its body or endpoint differs."""
    warnings = []
    if stored.kind != kind:
        warnings.append(
            BatchWarning(
                BATCH_ID_REUSED,
                "$",
                f"this batch_id was first used for {stored.kind}; this request was ignored",
                field="batch_id",
            )
        )
    elif not same:
        warnings.append(
            BatchWarning(
                RESEND_BODY_IGNORED,
                "$",
                "this batch_id was already received with a different body; the new body was "
                "ignored. Send changed data with a new batch_id.",
                field="batch_id",
            )
        )
    if stored.kind == kind:
        warnings += first_answer_warnings(stored)
    return BatchOutcome(sent_batch_id, stored.record_count, replayed=True, warnings=warnings, stored=stored)


def kept(warnings: list[BatchWarning]) -> tuple[KeptWarning, ...]:
    return tuple(KeptWarning(w.code, w.path, w.message, w.field) for w in warnings)


def first_answer_warnings(stored: BatchMarker) -> list[BatchWarning]:
    """The warnings a batch's first answer carried, from its marker. A marker stored before they were kept
    whole still counts them by code: one warning per code then says how many there were, at "$"."""
    if stored.answer is not None:
        return [BatchWarning(w.code, w.path, w.message, field=w.field) for w in stored.answer]
    return [
        BatchWarning(
            code,
            "$",
            f"the first answer to this batch carried {count} {code} warning{'s' if count > 1 else ''}; it was "
            "received before the service kept where they were (ask HQ for the records concerned)",
        )
        for code, count in stored.warnings.items()
    ]


@dataclass(frozen=True, slots=True)
class NewBatch:
    """A batch whose batch_id no marker holds yet (`accept`): the write saves it with `marker`, which carries
    its answer's warnings (its rows first, the marker last, create-if-absent), then answers with `saved`."""

    marker: BatchMarker
    sent_batch_id: str  # the batch_id as the request wrote it, which the response echoes
    warnings: list[BatchWarning]

    def saved(self, existing: BatchMarker | None) -> BatchOutcome:
        """The answer once saved; existing: the marker a concurrent twin stored first (then it is a resend)."""
        return _answer(self.marker, existing, self.sent_batch_id, self.warnings, validate_only=False)


def accept(
    storage: BatchMarkers,
    marker: BatchMarker,
    warnings: list[BatchWarning] | None = None,
    *,
    sent_batch_id: str,
    validate_only: bool = False,
    looked_up: bool = False,
) -> BatchOutcome | NewBatch:
    """Answer a known batch_id from its marker, or a validate-only request VALID without saving; otherwise the
    batch to save (`NewBatch`: the write saves it, then answers with `NewBatch.saved`). sent_batch_id: the
    batch_id as the request wrote it, which the response echoes. looked_up: the prologue found no marker
    (`known_batch_of`), so it is not looked up again: the save's create-if-absent answers a twin stored since
    (decision 0121)."""
    faults.point("batch.validated")
    stored = None if looked_up else storage.find_batch(marker.partner_id, marker.batch_id)
    if stored is None and not validate_only:
        # The marker keeps the answer's warnings by code, for HQ's dashboard. A concurrent twin may still
        # win the race: then it is a resend.
        counted = dict(Counter(warning.code for warning in warnings or []))
        kept_marker = replace(marker, warnings=counted, answer=kept(warnings or []))
        return NewBatch(kept_marker, sent_batch_id, list(warnings or []))
    return _answer(marker, stored, sent_batch_id, list(warnings or []), validate_only=validate_only)


def _answer(
    marker: BatchMarker,
    stored: BatchMarker | None,
    sent_batch_id: str,
    warnings: list[BatchWarning],
    *,
    validate_only: bool,
) -> BatchOutcome:
    faults.point("batch.before_response")
    if stored is not None:
        same = stored.body_digest == marker.body_digest or (
            stored.meaning_digest is not None and stored.meaning_digest == marker.meaning_digest
        )
        return replay(stored, marker.kind, same, sent_batch_id)
    return BatchOutcome(sent_batch_id, marker.record_count, validate_only=validate_only, warnings=warnings)


def resend_key(body: bytes, key: type[Key], values: dict[str, Any] | None = None) -> Key | None:
    """The batch_id and store codes of a write body (`key`), or None when they cannot be read; from values, the
    key's fields already read from the body (ingest/one_parse.py), when they are given."""
    try:
        return key.model_validate_json(body) if values is None else key.model_validate(values)
    except ValidationError:
        return None


def known_batch_of(
    storage: ResendLookup,
    partner_id: str,
    kind: str,
    body: bytes,
    read: ResendKey,
    meaning_of: Callable[[bytes], str | None] | None = None,
) -> BatchOutcome | None:
    """The answer to a resend of a known batch_id, found before the body is validated (a resend costs a
    look-up, not a validation); None for a new batch_id. read: the body's resend key (`resend_key`; when it
    cannot be read, the validation says why). The partner's key was checked by the caller and markers are
    per partner, so a partner only ever finds its own; the store codes are checked as for a new batch.
    A body that differs from the one received must still be I-JSON: with a repeated batch_id, the
    partner's parser and ours could disagree on which batch it names. meaning_of: what a body written
    otherwise says (`meaning_of_body`), to tell a resend that changed only its bytes."""
    stored = storage.find_batch(partner_id, read.batch_key)
    if stored is None:
        return None
    access.require_registered(storage, partner_id, read.store_ids())
    same = says_the_same(stored, body, meaning_of if stored.kind == kind else None)
    if not same and (problem := i_json_problem(body)):
        raise errors.invalid_payload([FieldProblem("$", problem)])
    return replay(stored, kind, same, read.batch_id)


# --- members the service does not know -------------------------------------------------------------

# A partner on a later version of the interface may send a new member in every record: the first ones
# are listed, then one warning counts the rest.
MAX_UNKNOWN_MEMBER_WARNINGS = 100
# A member name is the partner's own text: it is repeated only when it reads as a field name. Stricter
# than the paths' language-tag rule (ingest/parsing.py _PLAIN_KEY), which lets "Visa 4111111111111111"
# through: no spaces or dots, and at most 4 digits (a card number has 13 or more, a phone number 7).
_FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,39}$")


def unknown_member_warnings(locations: list[tuple[Any, ...]]) -> list[BatchWarning]:
    """UNKNOWN_MEMBER_IGNORED for each member location (ingest/parsing.py `unknown_members`), at most
    MAX_UNKNOWN_MEMBER_WARNINGS of them, then one that counts the others."""
    warnings = [_unknown_member(location) for location in locations[:MAX_UNKNOWN_MEMBER_WARNINGS]]
    if len(locations) > MAX_UNKNOWN_MEMBER_WARNINGS:
        more = len(locations) - MAX_UNKNOWN_MEMBER_WARNINGS
        warnings.append(
            BatchWarning(
                UNKNOWN_MEMBER_IGNORED,
                "$",
                f"{more} more members that the service does not know were ignored with their "
                f"values; only the first {MAX_UNKNOWN_MEMBER_WARNINGS} are listed",
            )
        )
    return warnings


def record_location(location: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
    """The path of the record holding a member location, and the location of the member's object inside it.
    A member of a record (an entry of one of the body's lists) is located at the record, as every warning
    is; a member of the body itself at "$"."""
    if len(location) > 2 and isinstance(location[1], int):
        return json_path(location[:2]), location[:-1][2:]
    return "$", location[:-1]


def _unknown_member(location: tuple[Any, ...]) -> BatchWarning:
    path, inside = record_location(location)
    name = location[-1]
    holder = json_path(inside) if inside else None
    if is_field_name(name):
        return BatchWarning(
            UNKNOWN_MEMBER_IGNORED,
            path,
            f"{name} is not a field the service knows here; it was ignored with its value. Check its "
            "spelling against the OpenAPI document (names are case-sensitive).",
            field=name if holder is None else f"{holder}.{name}",
        )
    where = "this request" if path == "$" and holder is None else "this record" if holder is None else "this object"
    return BatchWarning(
        UNKNOWN_MEMBER_IGNORED,
        path,
        f"a member of {where} whose name is not a field the service knows was ignored with its value "
        "(its name is not repeated here: it does not read as a field name)",
        field=holder,
    )


def is_field_name(name: str) -> bool:
    return bool(_FIELD_NAME.match(name)) and sum(character.isdigit() for character in name) <= 4


# --- a batch_seq received twice ----------------------------------------------------------------------

# How many other batches with the same batch_seq are counted at most (the message then says "or more").
MAX_SEQ_TWINS_COUNTED = 100


def repeated_batch_seq(batch_key: str, batch_seq: int, twins: list[str]) -> list[BatchWarning]:
    """BATCH_SEQ_REPEATED when another batch of trade records of the store-day already had this batch's
    batch_seq (`twins`: read by `stored_for_checks`, core/trade_inputs.py; a retry of this very batch,
    batch_key, whose entry a crash may have left, is not another). Like RESEND_BODY_IGNORED it is about the
    request (path "$"), with the field concerned, batch_seq."""
    others = [batch_id for batch_id in twins if batch_id != batch_key][:MAX_SEQ_TWINS_COUNTED]
    if not others:
        return []
    count = (
        f"{len(others)} or more other batches"
        if len(others) == MAX_SEQ_TWINS_COUNTED
        else ("another batch" if len(others) == 1 else f"{len(others)} other batches")
    )
    return [
        BatchWarning(
            BATCH_SEQ_REPEATED,
            "$",
            f"batch_seq {batch_seq} was already received for this store and business date in "
            f"{count}; the records are stored, but reconciliation counts the batches of a day by "
            "batch_seq: number them 1, 2, 3... within the store-day",
            field="batch_seq",
        )
    ]
