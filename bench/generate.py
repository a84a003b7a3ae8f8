"""Deterministic, realistic request bodies for the benchmarks: trade-record batches, daily closes and
the master data (stores, products, transaction type mapping), and their command line.

A quick-service restaurant's business day (the menu: bench/catalogue.py; one transaction:
bench/transactions.py). Every amount identity of spec 4.7 holds, so the service answers 202 without
warnings; `control_totals` gives the daily close that reconciles to MATCHED. Everything derives from
the seed: record i is the same whatever the batch size, and its extra lines (--target-bytes) only ever
add to it.

    python -m bench.generate --records 500 --seed 7 > batch.json
    python -m bench.generate --target-bytes 5000000 --out big.json      # 500 large records, < 5 MiB
    python -m bench.generate --kind stores | mapping | products | daily-close

Importable: `trade_batch_body`, `batch_bodies`, `sized_batch_body`, `stores_body`, `mapping_body`,
`products_body`, `daily_close_body` return request bodies as bytes; `trade_records` and
`control_totals` return the records and their totals.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
import uuid
import zoneinfo
from pathlib import Path

import orjson

from bench.catalogue import (
    COMBOS,
    MAPPING,
    MODIFIER_GROUPS,
    PAYMENT_DIRECTIONS,
    PRODUCTS,
    PROFILES,
    REVENUE_STANDARD_CODES,
    profile_for,
)
from bench.transactions import trade_record
from core.money import format_minor_units, to_minor_units

BATCH_LIMIT = 500
MAX_BODY_BYTES = 5 * 1024 * 1024
DEFAULT_DATE = dt.date(2026, 11, 20)
DEFAULT_SEED = 1


def batch_uuid(*parts) -> str:
    rng = random.Random(":".join(str(part) for part in parts))
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


# --- batches ------------------------------------------------------------------------------------------


def record_id_prefix(store_id: str, business_date: dt.date) -> str:
    return f"{store_id}-{business_date:%Y%m%d}-T"


def trade_records(
    count: int,
    *,
    seed: int = DEFAULT_SEED,
    currency: str = "USD",
    store_id: str | None = None,
    business_date: dt.date = DEFAULT_DATE,
    start: int = 0,
    id_prefix: str | None = None,
    extra_orders: int = 0,
) -> list[dict]:
    """Records start .. start+count-1 of a store-day. extra_orders: orders added to every record (to
    grow the body); an int, or a total spread over the records (see `sized_batch_body`)."""
    profile = profile_for(currency)
    store_id = store_id or profile.store_id
    prefix = record_id_prefix(store_id, business_date) if id_prefix is None else id_prefix
    return [
        trade_record(index, seed, profile, business_date, store_id, prefix, extra_orders)
        for index in range(start, start + count)
    ]


def trade_batch(
    records: list[dict], *, batch_seq: int = 1, batch_id: str | None = None, seed: int = DEFAULT_SEED
) -> dict:
    if not records or len(records) > BATCH_LIMIT:
        raise ValueError(f"a batch holds 1 to {BATCH_LIMIT} records, not {len(records)}")
    first = records[0]
    return {
        "batch_id": batch_id
        or batch_uuid(seed, first["store_id"], first["business_date"], batch_seq, first["trade_record_id"]),
        "store_id": first["store_id"],
        "business_date": first["business_date"],
        "batch_seq": batch_seq,
        "trade_records": records,
    }


def dumps(document) -> bytes:
    return orjson.dumps(document)


def trade_batch_body(
    records: int = BATCH_LIMIT,
    *,
    seed: int = DEFAULT_SEED,
    currency: str = "USD",
    store_id: str | None = None,
    business_date: dt.date = DEFAULT_DATE,
    batch_seq: int = 1,
    id_prefix: str | None = None,
    extra_orders: int = 0,
) -> bytes:
    """One POST /trade-records body of `records` records."""
    return dumps(
        trade_batch(
            trade_records(
                records,
                seed=seed,
                currency=currency,
                store_id=store_id,
                business_date=business_date,
                start=(batch_seq - 1) * BATCH_LIMIT,
                id_prefix=id_prefix,
                extra_orders=extra_orders,
            ),
            batch_seq=batch_seq,
            seed=seed,
        )
    )


_TAG = "~~~~~~"  # stands for a per-copy tag in record ids; replaced byte for byte


def batch_bodies(
    copies: int,
    records: int | None = BATCH_LIMIT,
    *,
    target_bytes: int | None = None,
    seed: int = DEFAULT_SEED,
    currency: str = "USD",
    store_id: str | None = None,
    business_date: dt.date = DEFAULT_DATE,
    tag: str = "R",
    first_seq: int = 1,
) -> list[bytes]:
    """`copies` bodies of the same records, each with its own batch_id, batch_seq (from first_seq on) and
    record and payment ids (so that each is a new batch of new transactions), all of the same size but for
    batch_seq. With target_bytes, the records are grown as by `sized_batch_body`. Bodies sent to the same
    store-day need batch_seqs of their own (else BATCH_SEQ_REPEATED): give each call its own first_seq."""
    profile = profile_for(currency)
    store_id = store_id or profile.store_id
    options = {
        "seed": seed,
        "currency": currency,
        "store_id": store_id,
        "business_date": business_date,
        "id_prefix": f"{store_id}-{business_date:%Y%m%d}-{_TAG}-",
    }
    if target_bytes is None:
        template = trade_batch_body(BATCH_LIMIT if records is None else records, **options)
    else:
        template = sized_batch_body(target_bytes, records, **options)
    template_batch_id = orjson.loads(template)["batch_id"].encode()
    bodies = []
    for copy in range(copies):
        marker = f"{tag}{copy:05d}"[-len(_TAG) :].rjust(len(_TAG), "0").encode()
        body = template.replace(_TAG.encode(), marker)
        body = body.replace(template_batch_id, batch_uuid(seed, store_id, business_date, tag, copy).encode())
        body = body.replace(b'"batch_seq":1,', b'"batch_seq":%d,' % (first_seq + copy), 1)
        bodies.append(body)
    return bodies


def _spread_records(count: int, total_extra: int, **options) -> list[dict]:
    """Records with total_extra orders spread over them: the first total_extra % count get one more."""
    per, rest = divmod(total_extra, count)
    records = []
    if rest:
        records += trade_records(rest, extra_orders=per + 1, **options)
    if count - rest:
        records += trade_records(count - rest, start=rest, extra_orders=per, **options)
    return records


def sized_records(target_bytes: int, records: int | None = None, **options) -> list[dict]:
    """Records whose batch body is about target_bytes (and never above it, nor above 5 MiB - 1 KiB): up
    to 500 records of the usual size, then more orders (lines) in every record."""
    target = min(target_bytes, MAX_BODY_BYTES - 1024)
    options = {key: value for key, value in options.items() if key != "start"}

    def size_of(count: int, extra: int) -> int:
        return len(dumps(trade_batch(_spread_records(count, extra, **options))))

    if records is None:
        probe = size_of(50, 0) / 50
        records = max(1, min(BATCH_LIMIT, int(target / probe)))
    if size_of(records, 0) >= target:
        return _spread_records(records, 0, **options)
    # Bytes per extra order, measured; then step to the largest total that stays under the target.
    step = records * 4
    per_order = (size_of(records, step) - size_of(records, 0)) / step
    extra = max(0, int((target - size_of(records, 0)) / per_order))
    while extra > 0 and size_of(records, extra) > target:
        extra = int(extra * 0.995)
    increment = max(1, records // 10)
    while size_of(records, extra + increment) <= target:
        extra += increment
    return _spread_records(records, extra, **options)


def sized_batch_body(
    target_bytes: int,
    records: int | None = None,
    *,
    seed: int = DEFAULT_SEED,
    currency: str = "USD",
    store_id: str | None = None,
    business_date: dt.date = DEFAULT_DATE,
    id_prefix: str | None = None,
    batch_seq: int = 1,
) -> bytes:
    """One body of about target_bytes (see `sized_records`)."""
    chosen = sized_records(
        target_bytes,
        records,
        seed=seed,
        currency=currency,
        store_id=store_id,
        business_date=business_date,
        id_prefix=id_prefix,
    )
    return dumps(trade_batch(chosen, batch_seq=batch_seq, seed=seed))


# --- what HQ and the partner send besides transactions -----------------------------------------------


def control_totals(records: list[dict], exponent: int = 2) -> dict:
    """The daily close's totals as the POS computes them (docs/partner-guide.md, "How HQ counts a store-day")."""
    revenue = {code for code, (standard, _) in MAPPING.items() if standard in REVENUE_STANDARD_CODES}
    net = tax = tip = paid = 0
    items = payment_rows = 0
    minor = lambda amount: to_minor_units(amount, exponent)  # noqa: E731
    for record in records:
        record_tax, record_tip = minor(record["tax_amount"]), minor(record["tip_amount"])
        tax += record_tax
        tip += record_tip
        if record["source_transaction_type"] in revenue:
            net += minor(record["total_amount"]) - record_tax - record_tip
        items += len(record["items"])
        payment_rows += len(record["payments"])
        paid += sum(minor(p["amount"]) * PAYMENT_DIRECTIONS[p["payment_type"]] for p in record["payments"])
    return {
        "trade_record_count": len({record["trade_record_id"] for record in records}),
        "item_row_count": items,
        "payment_row_count": payment_rows,
        "net_sales_amount": format_minor_units(net, exponent),
        "tax_amount": format_minor_units(tax, exponent),
        "tip_amount": format_minor_units(tip, exponent),
        "payment_total_amount": format_minor_units(paid, exponent),
    }


def daily_close_body(
    records: list[dict],
    *,
    batch_count: int,
    currency: str = "USD",
    seed: int = DEFAULT_SEED,
    closed_at: str | None = None,
) -> bytes:
    profile = profile_for(currency)
    first = records[0]
    day = dt.date.fromisoformat(first["business_date"])
    closed = closed_at or (
        dt.datetime.combine(day + dt.timedelta(days=1), dt.time(3, 30))
        .replace(tzinfo=zoneinfo.ZoneInfo(profile.time_zone))
        .isoformat()
    )
    return dumps(
        {
            "batch_id": batch_uuid(seed, first["store_id"], first["business_date"], "close", len(records)),
            "store_id": first["store_id"],
            "business_date": first["business_date"],
            "batch_count": batch_count,
            **control_totals(records, profile.exponent),
            "currency": profile.currency,
            "closed_at": closed,
        }
    )


def store_document(currency: str = "USD", store_id: str | None = None) -> dict:
    profile = profile_for(currency)
    return {
        "store_id": store_id or profile.store_id,
        "store_name": profile.store_name,
        "country_code": profile.country_code,
        "currency": profile.currency,
        "time_zone": profile.time_zone,
        "locale": profile.locale,
        "workday_start": profile.workday_start,
        "prices_include_tax": profile.prices_include_tax,
        "status": "ACTIVE",
        "last_modified_at": "2026-11-01T09:00:00Z",
    }


def stores_body(currency: str = "USD", store_id: str | None = None, seed: int = DEFAULT_SEED) -> bytes:
    store = store_document(currency, store_id)
    return dumps({"batch_id": batch_uuid(seed, "stores", store["store_id"]), "stores": [store]})


def mapping_body(seed: int = DEFAULT_SEED) -> bytes:
    return dumps(
        {
            "batch_id": batch_uuid(seed, "mapping"),
            "mappings": [
                {"source_code": code, "source_name": name, "standard_code": standard}
                for code, (standard, name) in MAPPING.items()
            ],
        }
    )


def products_body(currency: str = "USD", seed: int = DEFAULT_SEED) -> bytes:
    profile = profile_for(currency)
    money = lambda cents: format_minor_units(profile.price(cents), profile.exponent)  # noqa: E731
    common = {
        "currency": profile.currency,
        "status": "ACTIVE",
        "version": 1,
        "last_modified_at": "2026-11-01T09:00:00Z",
    }
    products = [
        {
            "product_id": product_id,
            "name": {"en-US": name},
            "unit_price": money(cents),
            "product_type": kind,
            "modifier_group_ids": list(groups),
            **common,
        }
        for product_id, (name, kind, cents, groups) in PRODUCTS.items()
    ]
    for combo_id, (name, cents, main, side, drink, swappable) in COMBOS.items():
        components = [{"product_id": main, "quantity": "1", "is_substitutable": False}]
        for component, group in ((side, "G-COMBO-SIDE"), (drink, "G-COMBO-DRINK")):
            components.append(
                {
                    "product_id": component,
                    "quantity": "1",
                    "is_substitutable": swappable,
                    **({"substitute_group_id": group} if swappable else {}),
                }
            )
        products.append(
            {
                "product_id": combo_id,
                "name": {"en-US": name},
                "unit_price": money(cents),
                "product_type": "COMBO",
                "combo_components": components,
                "modifier_group_ids": ["G-EXTRA-CHEESE"],
                **common,
            }
        )
    groups = [
        {
            "group_id": group_id,
            "name": {"en-US": name},
            "min_select": 0,
            "max_select": 1,
            "options": [
                {
                    "option_id": option_id,
                    "name": {"en-US": option_name},
                    "price_delta": money(cents),
                    "is_default": cents == 0 and index == 0,
                }
                for index, (option_id, option_name, cents) in enumerate(options)
            ],
        }
        for group_id, (name, options) in MODIFIER_GROUPS.items()
    ]
    return dumps({"batch_id": batch_uuid(seed, "products", currency), "products": products, "modifier_groups": groups})


# --- command line ------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.generate",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--kind", default="trade-records", choices=("trade-records", "daily-close", "stores", "mapping", "products")
    )
    parser.add_argument(
        "--records",
        type=int,
        default=None,
        help="trade records (default 500, or as many as --target-bytes needs up to 500); "
        "more than 500 makes a JSON array of batches",
    )
    parser.add_argument(
        "--target-bytes",
        type=lambda text: int(text.replace("_", "")),
        default=None,
        help="grow the records (more lines) to about this many bytes of body, below 5 MiB",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--store", default=None, help="store_id (default BENCH-NYC-001, or BENCH-TKY-001 for JPY)")
    parser.add_argument("--date", type=dt.date.fromisoformat, default=DEFAULT_DATE, help="business date YYYY-MM-DD")
    parser.add_argument(
        "--currency",
        default="USD",
        choices=sorted(PROFILES),
        help="USD: New York, tax added on top; JPY: Tokyo, tax included",
    )
    parser.add_argument("--out", type=Path, default=None, help="write here instead of stdout")
    parser.add_argument("--pretty", action="store_true", help="indent the JSON")
    args = parser.parse_args(argv)

    options = {"seed": args.seed, "currency": args.currency, "store_id": args.store, "business_date": args.date}
    if args.kind == "stores":
        document = orjson.loads(stores_body(args.currency, args.store, args.seed))
    elif args.kind == "mapping":
        document = orjson.loads(mapping_body(args.seed))
    elif args.kind == "products":
        document = orjson.loads(products_body(args.currency, args.seed))
    else:
        if args.target_bytes is not None:
            if args.records is not None and args.records > BATCH_LIMIT:
                parser.error("--target-bytes sizes one batch: --records must be at most 500")
            records = sized_records(args.target_bytes, args.records, **options)
        else:
            records = trade_records(BATCH_LIMIT if args.records is None else args.records, **options)
        batches = [
            trade_batch(records[start : start + BATCH_LIMIT], batch_seq=number, seed=args.seed)
            for number, start in enumerate(range(0, len(records), BATCH_LIMIT), start=1)
        ]
        if args.kind == "daily-close":
            document = orjson.loads(
                daily_close_body(records, batch_count=len(batches), currency=args.currency, seed=args.seed)
            )
        else:
            document = batches[0] if len(batches) == 1 else batches
    text = orjson.dumps(document, option=orjson.OPT_INDENT_2 if args.pretty else 0) + b"\n"
    if args.out is None:
        sys.stdout.buffer.write(text)
    else:
        args.out.write_bytes(text)
        print(f"{args.out}: {len(text)} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
