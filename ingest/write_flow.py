"""The one shape of the five partner writes (PUT /stores, PUT /products, PUT /mappings/transaction-types,
POST /trade-records, POST /daily-close; decision 0082). Each use case reads:

    opened = open_batch(...)          # the prologue: a resend answered from its marker, or the body
    if isinstance(opened, BatchOutcome):  # parsed and its stores registered for the partner
        return ...                    # (what a resend finishes, for the two writes that finish one)
    needs = read_needs(storage, ...)  # every storage read its checks need, in one function
    checked = check(opened, needs)    # pure: no storage; the problems (400) and the warnings
    raise_if_any(checked.problems, body)
    return save(...)                  # accept (ingest/batches.py): a known batch_id's answer, or a NewBatch
                                      # the write saves with one storage call (the marker last) and answers
                                      # from, then what follows a save

so that a rule is read and tested without storage, and a write's storage calls are in its prologue, its
reads and its save only. POST /trade-records opens its batch with the one parse (ingest/one_parse.py) from
the same steps (`answer_resend`, `require_stores`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from core.errors import FieldProblem
from core.ports import BatchMarkers
from ingest import access
from ingest.batches import BatchOutcome, NewBatch, ResendLookup, accept, known_batch_of, new_marker, resend_key
from ingest.parsing import Salvage, parse
from ingest.wire.requests import WriteBatch
from ingest.wire.resend_keys import ResendKey
from ingest.wire.responses import BatchWarning

Batch = TypeVar("Batch", bound=WriteBatch)


@dataclass(frozen=True, slots=True)
class Write(Generic[Batch]):
    """What the prologue knows of a write."""

    kind: str  # its batch markers' kind: "stores", "products", "mappings", "trade-records", "daily-close"
    model: type[Batch]
    key: type[ResendKey]  # what a resend is answered from (ingest/wire/resend_keys.py)
    meaning_of: Callable[[bytes], str | None]  # what a resent body says (`says_the_same`)
    readable_problems: Salvage  # a refused body's problems beyond pydantic's (ingest/parsing.py `parse`)
    # the store codes the partner must have registered; None: a write without store codes (the mapping)
    store_ids: Callable[[Batch], Collection[str]] | None


@dataclass(frozen=True, slots=True)
class Opened(Generic[Batch]):
    """A new batch past the prologue: parsed, and its stores registered for the partner."""

    batch: Batch
    body: bytes
    unknown: list[tuple[str | int, ...]]  # the members no model knows (ingest/parsing.py `unknown_members`)


@dataclass(slots=True)
class Checked:
    """What a write's checks found, without storage: the problems that refuse its batch (400, any order:
    `raise_if_any` puts them in the body's), else the warnings of its answer. Each write adds what it saves."""

    problems: list[FieldProblem] = field(default_factory=list)
    warnings: list[BatchWarning] = field(default_factory=list)


def open_batch(
    storage: ResendLookup, partner_id: str, write: Write[Batch], body: bytes
) -> BatchOutcome | Opened[Batch]:
    """The prologue of a write: the answer to a resend of a known batch_id (looked up before the body is
    validated: ingest/batches.py `known_batch_of`), or the body parsed and its stores checked."""
    resent = answer_resend(storage, partner_id, write, body, resend_key(body, write.key))
    if resent is not None:
        return resent
    batch, unknown = parse(write.model, body, write.readable_problems)
    require_stores(storage, partner_id, write, batch)
    return Opened(batch, body, unknown)


def answer_resend(
    storage: ResendLookup, partner_id: str, write: Write[Batch], body: bytes, key: ResendKey | None
) -> BatchOutcome | None:
    """The answer to a resend of a known batch_id; None for a new one, or when the key cannot be read (None:
    the validation then says why)."""
    return None if key is None else known_batch_of(storage, partner_id, write.kind, body, key, write.meaning_of)


def require_stores(storage: ResendLookup, partner_id: str, write: Write[Batch], batch: Batch) -> None:
    """403 STORE_NOT_ALLOWED unless the partner registered every store of the batch."""
    if write.store_ids is not None:
        access.require_registered(storage, partner_id, write.store_ids(batch))


def accept_opened(
    storage: BatchMarkers,
    partner_id: str,
    write: Write[Batch],
    opened: Opened[Batch],
    record_count: int,
    warnings: list[BatchWarning],
    validate_only: bool,
) -> BatchOutcome | NewBatch:
    """The marker of a batch that needs nothing but its marker, accepted (ingest/batches.py `accept`): the
    answer, or the `NewBatch` its write saves (the marker last) and answers from."""
    marker = new_marker(partner_id, opened.batch, write.kind, record_count, opened.body)
    return accept(storage, marker, warnings, sent_batch_id=opened.batch.batch_id, validate_only=validate_only)
