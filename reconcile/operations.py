"""HQ's reconciliation use cases: which closes to list, the close to reconcile now, payment-type
directions and the days a new direction should re-run.

`python -m hq` calls these with a partner it has already looked up (tests may call them without the
command line); the command line only words and prints what they return.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from core.ports import AdminError, MasterReads, Storage
from core.reconcile_reruns import request_for
from core.records import ClosedDay, Partner
from reconcile.service import reconcile
from reference.codes import payment_directions_in_effect

# -- closes ---------------------------------------------------------------------------------------


def closes(
    storage: Storage,
    partner: Partner | None,
    status: str | None = None,
    store_id: str | None = None,
    first: dt.date | None = None,
    last: dt.date | None = None,
) -> list[tuple[str, ClosedDay]]:
    """The daily closes of the partner (of every partner when None), each with its partner id, by
    status, store and business dates (inclusive) when given."""
    partners = [partner] if partner is not None else storage.list_partners()
    partner_ids = [each.partner_id for each in partners]
    # The port reads one partner's closes (one partition on Cosmos DB), by status when asked; the store
    # and dates are filtered here.
    return [
        (partner_id, day)
        for partner_id in partner_ids
        for day in storage.closed_days(partner_id, status)
        if (store_id is None or day.store_id == store_id)
        and (first is None or day.business_date >= first)
        and (last is None or day.business_date <= last)
    ]


class NoDailyClose(AdminError):
    """No daily close of that store-day; `registered` says whether the store is registered at all."""

    def __init__(self, registered: bool) -> None:
        super().__init__("no daily close received")
        self.registered = registered


def latest_close(storage: Storage, partner_id: str, store_id: str, business_date: dt.date) -> ClosedDay:
    """The store-day's latest daily close, with its result when reconciled; NoDailyClose otherwise."""
    day = storage.get_closed_day(partner_id, store_id, business_date)
    if day is None:
        raise NoDailyClose(registered=not storage.unregistered(partner_id, {store_id}))
    return day


def reconcile_now(storage: Storage, partner_id: str, store_id: str, business_date: dt.date) -> None:
    """Reconciles the store-day's latest close now, whatever its status (the queue's request may follow:
    reconciling is idempotent)."""
    reconcile(storage, request_for(partner_id, latest_close(storage, partner_id, store_id, business_date)))


# -- payment-type directions ----------------------------------------------------------------------


@dataclass(frozen=True)
class Direction:
    """The direction a payment type has for a partner, and where it comes from."""

    code: str
    direction: int
    suggested: int | None  # the reference list's direction, None for a partner's own code
    own: bool  # the partner set it (same as the suggested one, or overriding it)


@dataclass(frozen=True)
class DirectionSet:
    previous: int | None  # the partner's own direction before, if any
    suggested: int | None
    days_left_out: list[ClosedDay]  # reconciled days that left the code out: re-run them to count it


def suggested_directions() -> dict[str, int]:
    return payment_directions_in_effect({})


def directions(storage: MasterReads, partner: Partner) -> list[Direction]:
    """Every suggested payment type in the reference list's order, then the partner's own codes sorted."""
    own = storage.payment_directions(partner.partner_id)
    suggested = suggested_directions()
    listed = [
        Direction(code, own.get(code, direction), direction, code in own) for code, direction in suggested.items()
    ]
    return listed + [Direction(code, own[code], None, True) for code in sorted(set(own) - set(suggested))]


def set_direction(storage: Storage, partner_id: str, code: str, direction: int) -> DirectionSet:
    """Records the partner's direction of a payment type (the adapter refuses an unknown partner). New
    trade records and reconciliations use it; days already reconciled keep their result until re-run."""
    previous = storage.payment_directions(partner_id).get(code)
    storage.set_payment_direction(partner_id, code, direction)
    return DirectionSet(previous, suggested_directions().get(code), days_left_out(storage, partner_id, code))


def days_left_out(storage: Storage, partner_id: str, code: str) -> list[ClosedDay]:
    """Days already reconciled that left `code` out as a payment type of unknown direction."""
    return [
        day
        for day in storage.closed_days(partner_id)
        if day.status != "RECEIVED" and day.details is not None and code in day.details.get("unknown_payment_types", [])
    ]


def unset_direction(storage: Storage, partner_id: str, code: str) -> int | None:
    """Removes the partner's own direction of a payment type; returns the suggested direction it falls
    back to (None: its payments are left out again). Refuses when the partner has none of its own."""
    suggested = suggested_directions().get(code)
    if not storage.delete_payment_direction(partner_id, code):  # refuses an unknown partner
        also = f"; {code} keeps its suggested direction {suggested}" if suggested is not None else ""
        raise AdminError(f"partner {partner_id} has no direction of its own for payment type {code}{also}")
    return suggested
