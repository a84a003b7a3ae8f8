"""Deterministic, realistic trade-record batches for the benchmarks (spec 2 TradeRecord, 4.7).

A quick-service restaurant's business day: singles with modifiers (extra cheese, bacon, sauces),
combos with one child line per component and the drink or side actually served (upgrades priced on
the combo line and recorded in its modifiers), line and order discounts, voided lines, several
payments per transaction (card with tip, cash, gift card or loyalty points plus card, mobile wallet,
delivery platforms), tax lines, and a few refunds, returns, exchanges and voided transactions.

Every amount identity of spec 4.7 holds and every line_amount is quantity x unit_price -
discount_amount, so the service answers 202 without warnings; `control_totals` gives the daily
close that reconciles to MATCHED. Everything derives from the seed: record i is the same whatever
the batch size, and its extra lines (--target-bytes) only ever add to it.

    python bench/generate.py --records 500 --seed 7 > batch.json
    python bench/generate.py --target-bytes 5000000 --out big.json      # 500 large records, < 5 MiB
    python bench/generate.py --kind stores | mapping | products | daily-close

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
from dataclasses import dataclass
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal
from pathlib import Path

import orjson

BATCH_LIMIT = 500
MAX_BODY_BYTES = 5 * 1024 * 1024
DEFAULT_DATE = dt.date(2026, 11, 20)
DEFAULT_SEED = 1


# --- the store --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class StoreProfile:
    store_id: str
    store_name: str
    country_code: str
    currency: str
    exponent: int
    time_zone: str
    locale: str
    workday_start: str
    prices_include_tax: bool

    def price(self, cents: int) -> int:
        """A catalogue price (US cents) in this store's minor units."""
        if self.currency == "JPY":
            return int(Decimal(cents * 3 / 20).quantize(Decimal(1), ROUND_HALF_UP)) * 10  # 6.49 -> 970 yen
        return cents

    def tax_lines(self, order_type: str) -> tuple[tuple[str, str, bool], ...]:
        """(tax_code, rate, is_inclusive) of every tax levied on an order."""
        if self.currency == "JPY":  # consumption tax included in prices; take-out food at the reduced rate
            return (("JP-CT-10", "0.10", True),) if order_type == "DINE_IN" else (("JP-CT-8", "0.08", True),)
        return (("US-NY-STATE", "0.04", False), ("US-NY-NYC", "0.045", False), ("US-NY-MCTD", "0.00375", False))

    def tax_category(self, order_type: str) -> str:
        return "REDUCED" if self.currency == "JPY" and order_type != "DINE_IN" else "STANDARD"


PROFILES = {
    "USD": StoreProfile("BENCH-NYC-001", "Bench Midtown", "US", "USD", 2, "America/New_York", "en-US", "04:00", False),
    "JPY": StoreProfile("BENCH-TKY-001", "Bench Shibuya", "JP", "JPY", 0, "Asia/Tokyo", "ja-JP", "05:00", True),
}


# --- the catalogue (prices in US cents) ----------------------------------------------------------------

MODIFIER_GROUPS = {
    "G-EXTRA-CHEESE": ("Extra cheese", [("O-CHEDDAR", "Extra cheddar", 75), ("O-SWISS", "Extra Swiss", 75)]),
    "G-BACON": ("Bacon", [("O-BACON", "Bacon strips", 125)]),
    "G-HOLD": ("Hold an ingredient", [("O-NO-ONION", "No onions", 0), ("O-NO-PICKLE", "No pickles", 0),
                                       ("O-NO-SAUCE", "No sauce", 0)]),
    "G-SAUCE": ("Dipping sauce", [("O-BBQ", "BBQ sauce", 0), ("O-RANCH", "Ranch dip", 50),
                                   ("O-HONEY-MUSTARD", "Honey mustard", 50)]),
    "G-MILK": ("Milk", [("O-OAT", "Oat milk", 60), ("O-SOY", "Soy milk", 60)]),
    "G-COMBO-SIDE": ("Combo side", [("P-FRIES-M", "Fries (M)", 0), ("P-ONION-RINGS", "Onion Rings upgrade", 100),
                                     ("P-SALAD", "Side Salad upgrade", 50)]),
    "G-COMBO-DRINK": ("Combo drink", [("P-COLA-M", "Cola (M)", 0), ("P-LEMONADE", "Lemonade", 30),
                                       ("P-SHAKE-VAN", "Vanilla Shake upgrade", 150),
                                       ("P-SHAKE-CHOC", "Chocolate Shake upgrade", 150)]),
}

# product_id: (name, product_type, price in cents, modifier groups)
PRODUCTS = {
    "P-CLASSIC": ("Classic Burger", "SINGLE", 599, ("G-EXTRA-CHEESE", "G-BACON", "G-HOLD")),
    "P-CHEESEBURGER": ("Cheeseburger", "SINGLE", 649, ("G-EXTRA-CHEESE", "G-BACON", "G-HOLD")),
    "P-DOUBLE": ("Double Stack Burger", "SINGLE", 849, ("G-EXTRA-CHEESE", "G-BACON", "G-HOLD")),
    "P-CHICKEN": ("Crispy Chicken Sandwich", "SINGLE", 699, ("G-HOLD",)),
    "P-VEGGIE": ("Garden Veggie Burger", "SINGLE", 679, ("G-EXTRA-CHEESE", "G-HOLD")),
    "P-NUGGETS-6": ("Chicken Nuggets (6 pc)", "SINGLE", 499, ("G-SAUCE",)),
    "P-NUGGETS-10": ("Chicken Nuggets (10 pc)", "SINGLE", 729, ("G-SAUCE",)),
    "P-FRIES-M": ("Fries (M)", "SIDE", 299, ()),
    "P-FRIES-L": ("Fries (L)", "SIDE", 349, ()),
    "P-ONION-RINGS": ("Onion Rings", "SIDE", 429, ("G-SAUCE",)),
    "P-SALAD": ("Side Salad", "SIDE", 399, ()),
    "P-APPLE-SLICES": ("Apple Slices", "SIDE", 199, ()),
    "P-COLA-M": ("Cola (M)", "DRINK", 249, ()),
    "P-COLA-L": ("Cola (L)", "DRINK", 289, ()),
    "P-LEMONADE": ("Lemonade", "DRINK", 279, ()),
    "P-APPLE-JUICE": ("Apple Juice", "DRINK", 199, ()),
    "P-LATTE": ("Café Latte", "DRINK", 379, ("G-MILK",)),
    "P-SHAKE-VAN": ("Vanilla Shake", "DRINK", 449, ()),
    "P-SHAKE-CHOC": ("Chocolate Shake", "DRINK", 449, ()),
    "P-SUNDAE": ("Caramel Sundae", "SINGLE", 329, ()),
    "P-COOKIE": ("Chocolate Chip Cookie", "SINGLE", 149, ()),
}

# combo product_id: (name, price in cents, main product, default side, default drink, side and drink swappable)
COMBOS = {
    "P-COMBO-CLASSIC": ("Classic Burger Combo", 1099, "P-CLASSIC", "P-FRIES-M", "P-COLA-M", True),
    "P-COMBO-CHEESE": ("Cheeseburger Combo", 1149, "P-CHEESEBURGER", "P-FRIES-M", "P-COLA-M", True),
    "P-COMBO-DOUBLE": ("Double Stack Combo", 1349, "P-DOUBLE", "P-FRIES-M", "P-COLA-M", True),
    "P-COMBO-CHICKEN": ("Crispy Chicken Combo", 1199, "P-CHICKEN", "P-FRIES-M", "P-COLA-M", True),
    "P-COMBO-KIDS": ("Kids Meal", 699, "P-NUGGETS-6", "P-APPLE-SLICES", "P-APPLE-JUICE", False),
}

SINGLES = [p for p, (_, kind, _, _) in PRODUCTS.items() if kind == "SINGLE"]
SIDES_AND_DRINKS = [p for p, (_, kind, _, _) in PRODUCTS.items() if kind in ("SIDE", "DRINK")]
COMBO_IDS = list(COMBOS)

# source code: (standard code, name); the mapping the bench partner uploads
MAPPING = {"S01": ("SALE", "Sale"), "R01": ("REFUND", "Refund"), "RT1": ("RETURN", "Return"),
           "EX1": ("EXCHANGE", "Exchange"), "V01": ("VOID", "Void")}
REVENUE_STANDARD_CODES = {"SALE", "REFUND", "RETURN", "EXCHANGE"}
PAYMENT_DIRECTIONS = {"SALE": 1, "REFUND": -1, "DEPOSIT": 1, "DEPOSIT_APPLIED": 0, "ADJUSTMENT": 1}
# (source code, cumulative weight): mostly sales
TRANSACTION_MIX = (("S01", 0.90), ("V01", 0.94), ("R01", 0.96), ("RT1", 0.98), ("EX1", 1.0))
ORDER_TYPES = (("DINE_IN", 0.45), ("TO_GO", 0.75), ("DRIVE_THRU", 0.85), ("DELIVERY", 0.95), ("PICK_UP", 1.0))
PLATFORMS = ("UberEats", "DoorDash", "Grubhub")
CARD_NETWORKS = ("VISA", "MASTERCARD", "AMEX", "DISCOVER")
WALLETS = ("Apple Pay", "Google Pay")


def _weighted(rng: random.Random, table) -> str:
    draw = rng.random()
    return next(value for value, upto in table if draw < upto)


def _money(minor: int, exponent: int) -> str:
    if exponent == 0:
        return str(minor)
    sign = "-" if minor < 0 else ""
    whole, fraction = divmod(abs(minor), 10**exponent)
    return f"{sign}{whole}.{fraction:0{exponent}d}"


def _minor(text: str) -> int:
    """A decimal string with the currency's places -> minor units."""
    return int(text.replace(".", ""))


def batch_uuid(*parts) -> str:
    rng = random.Random(":".join(str(part) for part in parts))
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


# --- one transaction --------------------------------------------------------------------------------

@dataclass
class _Line:
    product_id: str
    product_type: str
    quantity: int
    unit_price: int
    discount: int = 0
    parent: int | None = None  # index of the combo line in the record
    modifiers: tuple = ()
    voided: bool = False

    @property
    def amount(self) -> int:
        return self.quantity * self.unit_price - self.discount


def _modifier(group_id: str, option: tuple, profile: StoreProfile) -> dict:
    option_id, name, cents = option
    return {"group_id": group_id, "option_id": option_id, "option_name": name, "quantity": "1",
            "price_delta": _money(profile.price(cents), profile.exponent)}


def _order_lines(rng: random.Random, profile: StoreProfile) -> list[_Line]:
    """One thing a guest orders: a combo (its line and one child line per component), a single with
    modifiers, or a side or drink."""
    kind = rng.random()
    if kind < 0.42:
        combo_id = rng.choice(COMBO_IDS)
        _, cents, main, side, drink, swappable = COMBOS[combo_id]
        modifiers = []
        price = profile.price(cents)
        if swappable and rng.random() < 0.25:
            option = rng.choice(MODIFIER_GROUPS["G-COMBO-SIDE"][1][1:])
            side = option[0]
            modifiers.append(_modifier("G-COMBO-SIDE", option, profile))
            price += profile.price(option[2])
        if swappable and rng.random() < 0.3:
            option = rng.choice(MODIFIER_GROUPS["G-COMBO-DRINK"][1][1:])
            drink = option[0]
            modifiers.append(_modifier("G-COMBO-DRINK", option, profile))
            price += profile.price(option[2])
        if "G-EXTRA-CHEESE" in PRODUCTS[main][3] and rng.random() < 0.2:
            option = rng.choice(MODIFIER_GROUPS["G-EXTRA-CHEESE"][1])
            modifiers.append(_modifier("G-EXTRA-CHEESE", option, profile))
            price += profile.price(option[2])
        quantity = 2 if rng.random() < 0.1 else 1
        discount = profile.price(100) if rng.random() < 0.05 else 0  # app coupon: $1 off the combo
        lines = [_Line(combo_id, "COMBO", quantity, price, discount, modifiers=tuple(modifiers))]
        for component in (main, side, drink):
            lines.append(_Line(component, PRODUCTS[component][1], quantity, 0, parent=0))
        return lines
    product_id = rng.choice(SINGLES) if kind < 0.75 else rng.choice(SIDES_AND_DRINKS)
    _, product_type, cents, groups = PRODUCTS[product_id]
    price = profile.price(cents)
    modifiers = []
    for group_id in groups:
        if rng.random() < 0.22:
            option = rng.choice(MODIFIER_GROUPS[group_id][1])
            modifiers.append(_modifier(group_id, option, profile))
            price += profile.price(option[2])
    draw = rng.random()
    quantity = 1 if draw < 0.8 else 2 if draw < 0.95 else 3
    discount = min(price * quantity, profile.price(50)) if rng.random() < 0.04 else 0
    return [_Line(product_id, product_type, quantity, price, discount, modifiers=tuple(modifiers))]


def _items(lines: list[_Line], profile: StoreProfile, order_type: str, sign: int = 1) -> list[dict]:
    """Item lines; sign -1 turns every quantity and amount negative (returns and refunds)."""
    money = lambda minor: _money(minor, profile.exponent)  # noqa: E731
    category = profile.tax_category(order_type)
    items = []
    for number, line in enumerate(lines, start=1):
        quantity = sign * line.quantity
        items.append({
            "line_no": number,
            "parent_line_no": None if line.parent is None else line.parent + 1,
            "product_id": line.product_id,
            "product_name": PRODUCTS[line.product_id][0] if line.product_id in PRODUCTS else COMBOS[line.product_id][0],
            "product_type": line.product_type,
            "quantity": str(quantity),
            "unit_price": money(line.unit_price),
            "discount_amount": money(sign * line.discount),
            "line_amount": money(quantity * line.unit_price - sign * line.discount),
            "tax_category": category,
            "modifiers": list(line.modifiers),
            "is_voided": line.voided,
        })
    return items


def _taxes(base: int, profile: StoreProfile, order_type: str) -> tuple[int, list[dict]]:
    """Tax of a taxable base (minor units, any sign) and its tax lines."""
    total, lines = 0, []
    for code, rate, inclusive in profile.tax_lines(order_type):
        r = Decimal(rate)
        if inclusive:  # the tax inside a tax-included price, rounded down (Japanese practice)
            tax = int((Decimal(abs(base)) * r / (1 + r)).quantize(Decimal(1), ROUND_FLOOR))
            taxable = abs(base) - tax
        else:
            tax = int((Decimal(abs(base)) * r).quantize(Decimal(1), ROUND_HALF_UP))
            taxable = abs(base)
        sign = -1 if base < 0 else 1
        total += sign * tax
        lines.append({"tax_code": code, "tax_rate": rate, "taxable_amount": _money(sign * taxable, profile.exponent),
                      "tax_amount": _money(sign * tax, profile.exponent), "is_inclusive": inclusive})
    return total, lines


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat()


def _sale_payments(rng: random.Random, record_id: str, total: int, tip: int, order_type: str, platform: str | None,
                   paid_at: str, profile: StoreProfile) -> list[dict]:
    """Payments of a sale: amounts positive and adding up to total; the tip rides on a card payment."""
    money = lambda minor: _money(minor, profile.exponent)  # noqa: E731
    payments: list[dict] = []

    def pay(payment_type: str, method: str, amount: int, detail: str | None = None, tip_amount: int | None = None,
            last4: bool = False) -> None:
        payment = {"payment_id": f"{record_id}-P{len(payments) + 1}", "payment_type": payment_type,
                   "payment_method": method}
        if detail is not None:
            payment["payment_method_detail"] = detail
        if last4:
            payment["card_last4"] = f"{rng.randrange(10000):04d}"
        payment["amount"] = money(amount)
        if tip_amount is not None:
            payment["tip_amount"] = money(tip_amount)
        payment["paid_at"] = paid_at
        payment["original_payment_id"] = None
        payments.append(payment)

    if total <= 0:
        return payments
    if platform is not None:  # the platform collects and pays out, tip included
        pay("SALE", "OTHER", total, platform, tip)
        return payments
    draw = rng.random()
    if tip == 0 and draw < 0.22:
        pay("SALE", "CASH", total, tip_amount=0 if draw < 0.11 else None)
        return payments
    if tip == 0 and draw > 0.92 and order_type != "DINE_IN":
        pay("SALE", "MOBILE_WALLET", total, rng.choice(WALLETS))
        return payments
    if draw < 0.36 and total - tip > profile.price(500):  # part with a gift card or points, the rest by card
        method, detail = rng.choice((("GIFT_CARD", "Store gift card"), ("LOYALTY_POINTS", "Rewards points")))
        part = min(total - tip - profile.price(100), profile.price(rng.choice((200, 300, 500, 1000))))
        pay("SALE", method, part, detail, 0)
        total -= part
    elif draw > 0.84 and total - tip > profile.price(800):  # split: some cash, the rest by card with the tip
        cash = profile.price(500)
        pay("SALE", "CASH", cash, tip_amount=0)
        total -= cash
    pay("SALE", rng.choice(("CREDIT_CARD", "CREDIT_CARD", "DEBIT_CARD")), total, rng.choice(CARD_NETWORKS), tip,
        last4=True)
    return payments


def _record(index: int, seed: int, profile: StoreProfile, business_date: dt.date, store_id: str, id_prefix: str,
            extra_orders: int) -> dict:
    rng = random.Random(f"{seed}:{index}")
    source = _weighted(rng, TRANSACTION_MIX)
    order_type = _weighted(rng, ORDER_TYPES)
    record_id = f"{id_prefix}{index:06d}"
    exponent = profile.exponent
    money = lambda minor: _money(minor, exponent)  # noqa: E731

    # When: store-local 06:30 to 01:30 the next morning, which is still this business date (workday_start 04:00).
    zone = zoneinfo.ZoneInfo(profile.time_zone)
    opened_local = dt.datetime.combine(business_date, dt.time(6, 30)) + dt.timedelta(minutes=rng.randrange(19 * 60))
    opened = opened_local.replace(tzinfo=zone)
    closed = opened + dt.timedelta(minutes=rng.randrange(2, 50), seconds=rng.randrange(60))
    opened_at, closed_at = _iso(opened), _iso(closed)

    order_count = 1 + (rng.random() < 0.45) + (rng.random() < 0.2) + (rng.random() < 0.05)
    order_rngs = [random.Random(f"{seed}:{index}:{n}") for n in range(order_count + extra_orders)]
    lines: list[_Line] = []
    for order_rng in order_rngs:
        order = _order_lines(order_rng, profile)
        for line in order:
            if line.parent is not None:  # index within the order -> index within the record
                line.parent += len(lines)
        lines += order
    if source == "S01" and rng.random() < 0.04:  # an item rung up and deleted before checkout
        product_id = rng.choice(SIDES_AND_DRINKS)
        lines.append(_Line(product_id, PRODUCTS[product_id][1], 1, profile.price(PRODUCTS[product_id][2]),
                           voided=True))

    platform = rng.choice(PLATFORMS) if order_type == "DELIVERY" else None
    guests = None
    if order_type == "DINE_IN":
        guests = rng.choice((1, 1, 2, 2, 2, 3, 4)) if rng.random() < 0.97 else rng.randrange(6, 11)
    order_source = {"DINE_IN": rng.choice(("POS", "POS", "KIOSK")), "TO_GO": rng.choice(("POS", "KIOSK")),
                    "DRIVE_THRU": "POS", "DELIVERY": "DELIVERY_PLATFORM",
                    "PICK_UP": rng.choice(("MOBILE_APP", "WEB"))}[order_type]
    member_id = f"M-{rng.randrange(1, 10**6):06d}" if rng.random() < 0.25 else None

    subtotal = sum(line.amount for line in lines if line.parent is None and not line.voided)
    discount = (subtotal * 10 // 100) if member_id and rng.random() < 0.2 else 0  # member 10% off
    service = (subtotal - discount) * 18 // 100 if guests and guests >= 6 else 0  # large party service charge
    base = subtotal - discount + service
    tip = 0
    if profile.currency == "USD" and (order_type == "DINE_IN" and rng.random() < 0.5 or platform and rng.random() < 0.7):
        tip = (base * rng.choice((10, 15, 18, 20)) // 100) // 25 * 25
    original_id = None
    sign = 1
    status = "COMPLETED"
    payments: list[dict]

    if source in ("R01", "RT1"):  # the whole order given back: everything negative, paid back with REFUND
        sign, tip, service = -1, 0, 0
        base = subtotal - discount
        original_id = f"{id_prefix}{rng.randrange(index):06d}" if index else f"{id_prefix}PREV-{seed}"
    elif source == "EX1":  # one item brought back, another given: returned line negative, new lines positive
        returned = rng.choice(SIDES_AND_DRINKS)
        lines.insert(0, _Line(returned, PRODUCTS[returned][1], -1, profile.price(PRODUCTS[returned][2])))
        for line in lines[1:]:
            if line.parent is not None:
                line.parent += 1
        discount = service = tip = 0
        subtotal = sum(line.amount for line in lines if line.parent is None)
        base = subtotal
        original_id = f"{id_prefix}{rng.randrange(index):06d}" if index else f"{id_prefix}PREV-{seed}"
    elif source == "V01":  # cancelled before completion: every line voided, nothing charged
        for line in lines:
            line.voided = True
        status = "VOIDED"
        subtotal = discount = service = tip = base = 0

    tax, tax_lines = _taxes(base, profile, order_type) if base else (0, [])
    included = profile.prices_include_tax
    total = base + tip + (0 if included else tax)
    paid_at = closed_at
    if source in ("R01", "RT1"):
        subtotal, discount, tax, total = -subtotal, -discount, -tax, -(base + (0 if included else tax))
        tax_lines = [{**line, "taxable_amount": money(-_minor(line["taxable_amount"])),
                      "tax_amount": money(-_minor(line["tax_amount"]))} for line in tax_lines]
        method = rng.choice(("CREDIT_CARD", "CASH"))
        payments = [{"payment_id": f"{record_id}-P1", "payment_type": "REFUND", "payment_method": method,
                     **({"payment_method_detail": rng.choice(CARD_NETWORKS), "card_last4": f"{rng.randrange(10000):04d}"}
                        if method == "CREDIT_CARD" else {}),
                     "amount": money(-total), "tip_amount": money(0), "paid_at": paid_at,
                     "original_payment_id": f"{original_id}-P1"}]
    elif source == "EX1":
        if total == 0:
            payments = []
        else:
            payments = [{"payment_id": f"{record_id}-P1", "payment_type": "SALE" if total > 0 else "REFUND",
                         "payment_method": "CASH", "amount": money(abs(total)), "tip_amount": money(0),
                         "paid_at": paid_at, "original_payment_id": None}]
    else:
        payments = _sale_payments(rng, record_id, total, tip, order_type, platform, paid_at, profile)

    return {
        "trade_record_id": record_id,
        "version": 1,
        "store_id": store_id,
        "business_date": business_date.isoformat(),
        "source_transaction_type": source,
        "order_type": order_type,
        "order_source": order_source,
        "order_source_detail": platform,
        "status": status,
        "opened_at": opened_at,
        "closed_at": closed_at,
        "currency": profile.currency,
        "prices_include_tax": included,
        "subtotal_amount": money(subtotal),
        "discount_amount": money(discount),
        "tax_amount": money(tax),
        "service_charge_amount": money(service),
        "tip_amount": money(tip),
        "rounding_amount": money(0),
        "total_amount": money(total),
        "original_trade_record_id": original_id,
        "fiscal_document_no": None,
        "employee_id": f"E-{100 + rng.randrange(40)}",
        "guest_count": guests,
        "member_id": member_id,
        "last_modified_at": closed_at,
        "items": _items(lines, profile, order_type, sign),
        "payments": payments,
        "tax_lines": tax_lines,
    }


# --- batches ------------------------------------------------------------------------------------------

def profile_for(currency: str = "USD") -> StoreProfile:
    return PROFILES[currency]


def record_id_prefix(store_id: str, business_date: dt.date) -> str:
    return f"{store_id}-{business_date:%Y%m%d}-T"


def trade_records(count: int, *, seed: int = DEFAULT_SEED, currency: str = "USD", store_id: str | None = None,
                  business_date: dt.date = DEFAULT_DATE, start: int = 0, id_prefix: str | None = None,
                  extra_orders: int = 0) -> list[dict]:
    """Records start .. start+count-1 of a store-day. extra_orders: orders added to every record (to
    grow the body); an int, or a total spread over the records (see `sized_batch_body`)."""
    profile = profile_for(currency)
    store_id = store_id or profile.store_id
    prefix = record_id_prefix(store_id, business_date) if id_prefix is None else id_prefix
    return [_record(index, seed, profile, business_date, store_id, prefix, extra_orders)
            for index in range(start, start + count)]


def trade_batch(records: list[dict], *, batch_seq: int = 1, batch_id: str | None = None, seed: int = DEFAULT_SEED) -> dict:
    if not records or len(records) > BATCH_LIMIT:
        raise ValueError(f"a batch holds 1 to {BATCH_LIMIT} records, not {len(records)}")
    first = records[0]
    return {"batch_id": batch_id or batch_uuid(seed, first["store_id"], first["business_date"], batch_seq,
                                               first["trade_record_id"]),
            "store_id": first["store_id"], "business_date": first["business_date"], "batch_seq": batch_seq,
            "trade_records": records}


def dumps(document) -> bytes:
    return orjson.dumps(document)


def trade_batch_body(records: int = BATCH_LIMIT, *, seed: int = DEFAULT_SEED, currency: str = "USD",
                     store_id: str | None = None, business_date: dt.date = DEFAULT_DATE, batch_seq: int = 1,
                     id_prefix: str | None = None, extra_orders: int = 0) -> bytes:
    """One POST /trade-records body of `records` records."""
    return dumps(trade_batch(trade_records(records, seed=seed, currency=currency, store_id=store_id,
                                           business_date=business_date, start=(batch_seq - 1) * BATCH_LIMIT,
                                           id_prefix=id_prefix, extra_orders=extra_orders),
                             batch_seq=batch_seq, seed=seed))


_TAG = "~~~~~~"  # stands for a per-copy tag in record ids; replaced byte for byte


def batch_bodies(copies: int, records: int | None = BATCH_LIMIT, *, target_bytes: int | None = None,
                 seed: int = DEFAULT_SEED, currency: str = "USD", store_id: str | None = None,
                 business_date: dt.date = DEFAULT_DATE, tag: str = "R", first_seq: int = 1) -> list[bytes]:
    """`copies` bodies of the same records, each with its own batch_id, batch_seq (from first_seq on) and
    record and payment ids (so that each is a new batch of new transactions), all of the same size but for
    batch_seq. With target_bytes, the records are grown as by `sized_batch_body`. Bodies sent to the same
    store-day need batch_seqs of their own (else BATCH_SEQ_REPEATED): give each call its own first_seq."""
    profile = profile_for(currency)
    store_id = store_id or profile.store_id
    options = {"seed": seed, "currency": currency, "store_id": store_id, "business_date": business_date,
               "id_prefix": f"{store_id}-{business_date:%Y%m%d}-{_TAG}-"}
    if target_bytes is None:
        template = trade_batch_body(BATCH_LIMIT if records is None else records, **options)
    else:
        template = sized_batch_body(target_bytes, records, **options)
    template_batch_id = orjson.loads(template)["batch_id"].encode()
    bodies = []
    for copy in range(copies):
        marker = f"{tag}{copy:05d}"[-len(_TAG):].rjust(len(_TAG), "0").encode()
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


def sized_batch_body(target_bytes: int, records: int | None = None, *, seed: int = DEFAULT_SEED,
                     currency: str = "USD", store_id: str | None = None, business_date: dt.date = DEFAULT_DATE,
                     id_prefix: str | None = None, batch_seq: int = 1) -> bytes:
    """One body of about target_bytes (see `sized_records`)."""
    chosen = sized_records(target_bytes, records, seed=seed, currency=currency, store_id=store_id,
                           business_date=business_date, id_prefix=id_prefix)
    return dumps(trade_batch(chosen, batch_seq=batch_seq, seed=seed))


# --- what HQ and the partner send besides transactions -----------------------------------------------

def control_totals(records: list[dict], exponent: int = 2) -> dict:
    """The daily close's totals as the POS computes them (README, Reconciliation result)."""
    revenue = {code for code, (standard, _) in MAPPING.items() if standard in REVENUE_STANDARD_CODES}
    net = tax = tip = paid = 0
    items = payment_rows = 0
    for record in records:
        record_tax, record_tip = _minor(record["tax_amount"]), _minor(record["tip_amount"])
        tax += record_tax
        tip += record_tip
        if record["source_transaction_type"] in revenue:
            net += _minor(record["total_amount"]) - record_tax - record_tip
        items += len(record["items"])
        payment_rows += len(record["payments"])
        paid += sum(_minor(p["amount"]) * PAYMENT_DIRECTIONS[p["payment_type"]] for p in record["payments"])
    return {"trade_record_count": len({record["trade_record_id"] for record in records}),
            "item_row_count": items, "payment_row_count": payment_rows,
            "net_sales_amount": _money(net, exponent), "tax_amount": _money(tax, exponent),
            "tip_amount": _money(tip, exponent), "payment_total_amount": _money(paid, exponent)}


def daily_close_body(records: list[dict], *, batch_count: int, currency: str = "USD", seed: int = DEFAULT_SEED,
                     closed_at: str | None = None) -> bytes:
    profile = profile_for(currency)
    first = records[0]
    day = dt.date.fromisoformat(first["business_date"])
    closed = closed_at or _iso(dt.datetime.combine(day + dt.timedelta(days=1), dt.time(3, 30))
                               .replace(tzinfo=zoneinfo.ZoneInfo(profile.time_zone)))
    return dumps({"batch_id": batch_uuid(seed, first["store_id"], first["business_date"], "close", len(records)),
                  "store_id": first["store_id"], "business_date": first["business_date"],
                  "batch_count": batch_count, **control_totals(records, profile.exponent),
                  "currency": profile.currency, "closed_at": closed})


def store_document(currency: str = "USD", store_id: str | None = None) -> dict:
    profile = profile_for(currency)
    return {"store_id": store_id or profile.store_id, "store_name": profile.store_name,
            "country_code": profile.country_code, "currency": profile.currency, "time_zone": profile.time_zone,
            "locale": profile.locale, "workday_start": profile.workday_start,
            "prices_include_tax": profile.prices_include_tax, "status": "ACTIVE",
            "last_modified_at": "2026-11-01T09:00:00Z"}


def stores_body(currency: str = "USD", store_id: str | None = None, seed: int = DEFAULT_SEED) -> bytes:
    store = store_document(currency, store_id)
    return dumps({"batch_id": batch_uuid(seed, "stores", store["store_id"]), "stores": [store]})


def mapping_body(seed: int = DEFAULT_SEED) -> bytes:
    return dumps({"batch_id": batch_uuid(seed, "mapping"),
                  "mappings": [{"source_code": code, "source_name": name, "standard_code": standard}
                               for code, (standard, name) in MAPPING.items()]})


def products_body(currency: str = "USD", seed: int = DEFAULT_SEED) -> bytes:
    profile = profile_for(currency)
    money = lambda cents: _money(profile.price(cents), profile.exponent)  # noqa: E731
    common = {"currency": profile.currency, "status": "ACTIVE", "version": 1,
              "last_modified_at": "2026-11-01T09:00:00Z"}
    products = [{"product_id": product_id, "name": {"en-US": name}, "unit_price": money(cents),
                 "product_type": kind, "modifier_group_ids": list(groups), **common}
                for product_id, (name, kind, cents, groups) in PRODUCTS.items()]
    for combo_id, (name, cents, main, side, drink, swappable) in COMBOS.items():
        components = [{"product_id": main, "quantity": "1", "is_substitutable": False}]
        for component, group in ((side, "G-COMBO-SIDE"), (drink, "G-COMBO-DRINK")):
            components.append({"product_id": component, "quantity": "1", "is_substitutable": swappable,
                               **({"substitute_group_id": group} if swappable else {})})
        products.append({"product_id": combo_id, "name": {"en-US": name}, "unit_price": money(cents),
                         "product_type": "COMBO", "combo_components": components,
                         "modifier_group_ids": ["G-EXTRA-CHEESE"], **common})
    groups = [{"group_id": group_id, "name": {"en-US": name}, "min_select": 0, "max_select": 1,
               "options": [{"option_id": option_id, "name": {"en-US": option_name}, "price_delta": money(cents),
                            "is_default": cents == 0 and index == 0}
                           for index, (option_id, option_name, cents) in enumerate(options)]}
              for group_id, (name, options) in MODIFIER_GROUPS.items()]
    return dumps({"batch_id": batch_uuid(seed, "products", currency), "products": products,
                  "modifier_groups": groups})


# --- command line ------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/generate.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kind", default="trade-records",
                        choices=("trade-records", "daily-close", "stores", "mapping", "products"))
    parser.add_argument("--records", type=int, default=None,
                        help="trade records (default 500, or as many as --target-bytes needs up to 500); "
                             "more than 500 makes a JSON array of batches")
    parser.add_argument("--target-bytes", type=lambda text: int(text.replace("_", "")), default=None,
                        help="grow the records (more lines) to about this many bytes of body, below 5 MiB")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--store", default=None, help="store_id (default BENCH-NYC-001, or BENCH-TKY-001 for JPY)")
    parser.add_argument("--date", type=dt.date.fromisoformat, default=DEFAULT_DATE, help="business date YYYY-MM-DD")
    parser.add_argument("--currency", default="USD", choices=sorted(PROFILES),
                        help="USD: New York, tax added on top; JPY: Tokyo, tax included")
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
        batches = [trade_batch(records[start:start + BATCH_LIMIT], batch_seq=number, seed=args.seed)
                   for number, start in enumerate(range(0, len(records), BATCH_LIMIT), start=1)]
        if args.kind == "daily-close":
            document = orjson.loads(daily_close_body(records, batch_count=len(batches), currency=args.currency,
                                                     seed=args.seed))
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
