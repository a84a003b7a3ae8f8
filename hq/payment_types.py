"""`hq payment-type`: the directions of a partner's payment_type values.

The direction of a payment_type says how its amounts count toward payment_total_amount. The suggested
types (reference/data/payment-types.json) have theirs; a partner's own values (or an override of a
suggested one) are stored per partner and used by reconciliation and the PAYMENT_TYPE_UNKNOWN_DIRECTION
warning of POST /trade-records. The use cases are in reconcile/operations.py.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from backends.admin_rules import require_partner
from backends.factory import Backend, open_backend
from hq import arguments
from hq.arguments import Subcommands
from hq.output import table

if TYPE_CHECKING:
    from reconcile import operations

DIRECTION_MEANING = {
    1: "money in, added to payment_total_amount",
    -1: "money given back, subtracted from payment_total_amount",
    0: "not counted in payment_total_amount (like DEPOSIT_APPLIED, already counted as DEPOSIT)",
}


def add_group(groups: Subcommands) -> None:
    group = groups.add_parser("payment-type", help="directions of a partner's payment_type values")
    group.set_defaults(opens=open_backend)
    sub = group.add_subparsers(dest="action", required=True)
    set_parser = sub.add_parser("set", help="record how a payment_type counts toward payment_total_amount")
    set_parser.add_argument("partner_id")
    set_parser.add_argument("code", metavar="CODE", help="the payment_type value, as the partner sends it")
    set_parser.add_argument(
        "--direction",
        type=int,
        choices=(1, -1, 0),
        required=True,
        help="1 money in, -1 money given back, 0 not counted",
    )
    set_parser.set_defaults(run=payment_type_set)
    unset = sub.add_parser("unset", help="remove the partner's own direction of a payment_type")
    unset.add_argument("partner_id")
    unset.add_argument("code", metavar="CODE")
    unset.set_defaults(run=payment_type_unset)
    listing = sub.add_parser("list", help="suggested directions and the partner's own")
    listing.add_argument("partner_id")
    listing.set_defaults(run=payment_type_list)


def payment_type_set(backend: Backend, args: argparse.Namespace) -> None:
    from reconcile import operations

    code = arguments.payment_type(args.code)
    done = operations.set_direction(backend.storage, args.partner_id, code, args.direction)
    was = f" (was {done.previous})" if done.previous is not None and done.previous != args.direction else ""
    print(
        f"Payment type {code} of partner {args.partner_id}: direction {args.direction}{was}, "
        f"{DIRECTION_MEANING[args.direction]}."
    )
    if done.suggested is not None and done.suggested != args.direction:
        print(f"This overrides the suggested direction {done.suggested} for this partner.")
    elif done.suggested is not None:
        print(
            f"The suggested direction is {done.suggested} too; the partner's own stays even if the suggested "
            "one changes (payment-type unset removes it)."
        )
    print(
        "New trade records and reconciliations use it from now on; days already reconciled keep their "
        "result until reconciled again."
    )
    if done.days_left_out:
        print(f"{len(done.days_left_out)} reconciled day(s) left {code} out as unknown; reconcile them again with:")
        for day in done.days_left_out:
            print(f"  python -m hq reconcile run {args.partner_id} {day.store_id} {day.business_date}")


def payment_type_unset(backend: Backend, args: argparse.Namespace) -> None:
    from reconcile import operations

    code = arguments.payment_type(args.code)
    suggested = operations.unset_direction(backend.storage, args.partner_id, code)
    if suggested is not None:
        after = f"it has the suggested direction {suggested} again"
    else:
        after = (
            "its payments are left out of payment_total_amount again, and new trade records with it get "
            "PAYMENT_TYPE_UNKNOWN_DIRECTION"
        )
    print(f"Removed partner {args.partner_id}'s direction for payment type {code}: {after}.")


def payment_type_list(backend: Backend, args: argparse.Namespace) -> None:
    from reconcile import operations

    partner = require_partner(backend.storage.get_partner, args.partner_id)
    print(
        table(
            ["PAYMENT_TYPE", "DIRECTION", "SOURCE"],
            [
                [entry.code, str(entry.direction), _source(entry)]
                for entry in operations.directions(backend.storage, partner)
            ],
        )
    )
    print(
        "Direction 1: money in (added to payment_total_amount); -1: money given back (subtracted); 0: not "
        "counted. Any other payment_type is left out of payment_total_amount, and trade records with it get "
        "PAYMENT_TYPE_UNKNOWN_DIRECTION, until set with: "
        f"python -m hq payment-type set {args.partner_id} CODE --direction 1|-1|0"
    )


def _source(entry: operations.Direction) -> str:
    if not entry.own:
        return "suggested"
    if entry.suggested is None:
        return "partner"
    if entry.direction != entry.suggested:
        return f"partner (overrides suggested {entry.suggested})"
    return "partner (same as suggested)"
