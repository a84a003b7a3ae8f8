"""One generated transaction (a trade record, spec 2 TradeRecord, 4.7) of a quick-service restaurant.

Singles with modifiers, combos with one child line per component and the drink or side actually served
(upgrades priced on the combo line and recorded in its modifiers), line and order discounts, voided
lines, several payments per transaction, tax lines, and a few refunds, returns, exchanges and voided
transactions. Every amount identity of spec 4.7 holds and every line_amount is quantity x unit_price -
discount_amount. Record i derives from the seed and i alone (bench/generate.py builds batches of them).
"""

from __future__ import annotations

import datetime as dt
import random
import zoneinfo
from dataclasses import dataclass
from decimal import ROUND_FLOOR, ROUND_HALF_UP, Decimal

from bench.catalogue import (
    CARD_NETWORKS,
    COMBO_IDS,
    COMBOS,
    MODIFIER_GROUPS,
    ORDER_TYPES,
    PLATFORMS,
    PRODUCTS,
    SIDES_AND_DRINKS,
    SINGLES,
    TRANSACTION_MIX,
    WALLETS,
    StoreProfile,
)
from core.money import format_minor_units, to_minor_units


def _weighted(rng: random.Random, table) -> str:
    draw = rng.random()
    return next(value for value, upto in table if draw < upto)


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
    return {
        "group_id": group_id,
        "option_id": option_id,
        "option_name": name,
        "quantity": "1",
        "price_delta": format_minor_units(profile.price(cents), profile.exponent),
    }


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
    money = lambda minor: format_minor_units(minor, profile.exponent)  # noqa: E731
    category = profile.tax_category(order_type)
    items = []
    for number, line in enumerate(lines, start=1):
        quantity = sign * line.quantity
        items.append(
            {
                "line_no": number,
                "parent_line_no": None if line.parent is None else line.parent + 1,
                "product_id": line.product_id,
                "product_name": PRODUCTS[line.product_id][0]
                if line.product_id in PRODUCTS
                else COMBOS[line.product_id][0],
                "product_type": line.product_type,
                "quantity": str(quantity),
                "unit_price": money(line.unit_price),
                "discount_amount": money(sign * line.discount),
                "line_amount": money(quantity * line.unit_price - sign * line.discount),
                "tax_category": category,
                "modifiers": list(line.modifiers),
                "is_voided": line.voided,
            }
        )
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
        lines.append(
            {
                "tax_code": code,
                "tax_rate": rate,
                "taxable_amount": format_minor_units(sign * taxable, profile.exponent),
                "tax_amount": format_minor_units(sign * tax, profile.exponent),
                "is_inclusive": inclusive,
            }
        )
    return total, lines


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat()


def _sale_payments(
    rng: random.Random,
    record_id: str,
    total: int,
    tip: int,
    order_type: str,
    platform: str | None,
    paid_at: str,
    profile: StoreProfile,
) -> list[dict]:
    """Payments of a sale: amounts positive and adding up to total; the tip rides on a card payment."""
    money = lambda minor: format_minor_units(minor, profile.exponent)  # noqa: E731
    payments: list[dict] = []

    def pay(
        payment_type: str,
        method: str,
        amount: int,
        detail: str | None = None,
        tip_amount: int | None = None,
        last4: bool = False,
    ) -> None:
        payment = {
            "payment_id": f"{record_id}-P{len(payments) + 1}",
            "payment_type": payment_type,
            "payment_method": method,
        }
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
    pay(
        "SALE",
        rng.choice(("CREDIT_CARD", "CREDIT_CARD", "DEBIT_CARD")),
        total,
        rng.choice(CARD_NETWORKS),
        tip,
        last4=True,
    )
    return payments


def trade_record(
    index: int,
    seed: int,
    profile: StoreProfile,
    business_date: dt.date,
    store_id: str,
    id_prefix: str,
    extra_orders: int,
) -> dict:
    rng = random.Random(f"{seed}:{index}")
    source = _weighted(rng, TRANSACTION_MIX)
    order_type = _weighted(rng, ORDER_TYPES)
    record_id = f"{id_prefix}{index:06d}"
    exponent = profile.exponent
    money = lambda minor: format_minor_units(minor, exponent)  # noqa: E731

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
        lines.append(_Line(product_id, PRODUCTS[product_id][1], 1, profile.price(PRODUCTS[product_id][2]), voided=True))

    platform = rng.choice(PLATFORMS) if order_type == "DELIVERY" else None
    guests = None
    if order_type == "DINE_IN":
        guests = rng.choice((1, 1, 2, 2, 2, 3, 4)) if rng.random() < 0.97 else rng.randrange(6, 11)
    order_source = {
        "DINE_IN": rng.choice(("POS", "POS", "KIOSK")),
        "TO_GO": rng.choice(("POS", "KIOSK")),
        "DRIVE_THRU": "POS",
        "DELIVERY": "DELIVERY_PLATFORM",
        "PICK_UP": rng.choice(("MOBILE_APP", "WEB")),
    }[order_type]
    member_id = f"M-{rng.randrange(1, 10**6):06d}" if rng.random() < 0.25 else None

    subtotal = sum(line.amount for line in lines if line.parent is None and not line.voided)
    discount = (subtotal * 10 // 100) if member_id and rng.random() < 0.2 else 0  # member 10% off
    service = (subtotal - discount) * 18 // 100 if guests and guests >= 6 else 0  # large party service charge
    base = subtotal - discount + service
    tip = 0
    if profile.currency == "USD" and (
        order_type == "DINE_IN" and rng.random() < 0.5 or platform and rng.random() < 0.7
    ):
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
        tax_lines = [
            {
                **line,
                "taxable_amount": money(-to_minor_units(line["taxable_amount"], exponent)),
                "tax_amount": money(-to_minor_units(line["tax_amount"], exponent)),
            }
            for line in tax_lines
        ]
        method = rng.choice(("CREDIT_CARD", "CASH"))
        payments = [
            {
                "payment_id": f"{record_id}-P1",
                "payment_type": "REFUND",
                "payment_method": method,
                **(
                    {"payment_method_detail": rng.choice(CARD_NETWORKS), "card_last4": f"{rng.randrange(10000):04d}"}
                    if method == "CREDIT_CARD"
                    else {}
                ),
                "amount": money(-total),
                "tip_amount": money(0),
                "paid_at": paid_at,
                "original_payment_id": f"{original_id}-P1",
            }
        ]
    elif source == "EX1":
        if total == 0:
            payments = []
        else:
            payments = [
                {
                    "payment_id": f"{record_id}-P1",
                    "payment_type": "SALE" if total > 0 else "REFUND",
                    "payment_method": "CASH",
                    "amount": money(abs(total)),
                    "tip_amount": money(0),
                    "paid_at": paid_at,
                    "original_payment_id": None,
                }
            ]
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
