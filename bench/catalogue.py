"""The bench store's world: its two store profiles (New York in USD, tax on top; Tokyo in JPY, tax
included), the quick-service menu (products, combos, modifier groups, prices in US cents), the
transaction type mapping the bench partner uploads and the weights of what guests order and how they
pay. Data only; bench/transactions.py draws transactions from it."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

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
    "G-HOLD": (
        "Hold an ingredient",
        [("O-NO-ONION", "No onions", 0), ("O-NO-PICKLE", "No pickles", 0), ("O-NO-SAUCE", "No sauce", 0)],
    ),
    "G-SAUCE": (
        "Dipping sauce",
        [("O-BBQ", "BBQ sauce", 0), ("O-RANCH", "Ranch dip", 50), ("O-HONEY-MUSTARD", "Honey mustard", 50)],
    ),
    "G-MILK": ("Milk", [("O-OAT", "Oat milk", 60), ("O-SOY", "Soy milk", 60)]),
    "G-COMBO-SIDE": (
        "Combo side",
        [
            ("P-FRIES-M", "Fries (M)", 0),
            ("P-ONION-RINGS", "Onion Rings upgrade", 100),
            ("P-SALAD", "Side Salad upgrade", 50),
        ],
    ),
    "G-COMBO-DRINK": (
        "Combo drink",
        [
            ("P-COLA-M", "Cola (M)", 0),
            ("P-LEMONADE", "Lemonade", 30),
            ("P-SHAKE-VAN", "Vanilla Shake upgrade", 150),
            ("P-SHAKE-CHOC", "Chocolate Shake upgrade", 150),
        ],
    ),
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
MAPPING = {
    "S01": ("SALE", "Sale"),
    "R01": ("REFUND", "Refund"),
    "RT1": ("RETURN", "Return"),
    "EX1": ("EXCHANGE", "Exchange"),
    "V01": ("VOID", "Void"),
}
REVENUE_STANDARD_CODES = {"SALE", "REFUND", "RETURN", "EXCHANGE"}
PAYMENT_DIRECTIONS = {"SALE": 1, "REFUND": -1, "DEPOSIT": 1, "DEPOSIT_APPLIED": 0, "ADJUSTMENT": 1}
# (source code, cumulative weight): mostly sales
TRANSACTION_MIX = (("S01", 0.90), ("V01", 0.94), ("R01", 0.96), ("RT1", 0.98), ("EX1", 1.0))
ORDER_TYPES = (("DINE_IN", 0.45), ("TO_GO", 0.75), ("DRIVE_THRU", 0.85), ("DELIVERY", 0.95), ("PICK_UP", 1.0))
PLATFORMS = ("UberEats", "DoorDash", "Grubhub")
CARD_NETWORKS = ("VISA", "MASTERCARD", "AMEX", "DISCOVER")
WALLETS = ("Apple Pay", "Google Pay")


def profile_for(currency: str = "USD") -> StoreProfile:
    return PROFILES[currency]
