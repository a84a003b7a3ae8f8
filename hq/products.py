"""`hq products missing`: product_ids of a store-day not (yet) in the product master.

A transaction may arrive before its product (spec 4.6): it is accepted, and matched once the product
arrives. This shows what is still waiting, per store-day.
"""

from __future__ import annotations

import argparse

from backends.admin_rules import require_partner
from backends.factory import Backend, open_backend
from hq import arguments
from hq.arguments import Subcommands
from hq.output import table


def add_group(groups: Subcommands) -> None:
    group = groups.add_parser("products", help="product_ids of a store-day not (yet) in the product master")
    group.set_defaults(opens=open_backend)
    sub = group.add_subparsers(dest="action", required=True)
    missing = sub.add_parser("missing", help="item lines whose product the partner has not sent yet, by product_id")
    for argument in ("partner_id", "store_id", "business_date"):
        missing.add_argument(argument)
    missing.set_defaults(run=products_missing)


def products_missing(backend: Backend, args: argparse.Namespace) -> None:
    require_partner(backend.storage.get_partner, args.partner_id)
    day = arguments.business_date(args.business_date)
    missing = backend.storage.unknown_products(args.partner_id, args.store_id, day)
    where = f"{args.partner_id} {args.store_id} {day}"
    if not missing:
        print(f"Every product_id of {where} is in the product master (or the day has no trade records).")
        return
    print(
        table(
            ["PRODUCT_ID", "ITEM_LINES", "TRADE_RECORDS"],
            [[product.product_id, str(product.item_lines), str(product.trade_records)] for product in missing],
        )
    )
    print(
        f"{len(missing)} product_id(s) of {where} not (yet) in the product master, for this store or for all "
        "stores. The transactions are stored; they match once the partner sends these products with "
        "PUT /products."
    )
