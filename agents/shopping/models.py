"""The shop's records at the boundary: catalog, stores, inventory, coupons, carts, reviews.

Every price in the catalog is in the catalog's currency (`CATALOG_CURRENCY`); ingestion validates
each record with these models and reports the line of each bad one.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

CATALOG_CURRENCY = "USD"

CATEGORIES: tuple[str, ...] = (
    "audio", "computers", "phones", "wearables", "kitchen", "home", "shoes", "apparel", "outdoor", "beauty",
)

FulfillmentKind = Literal["ship", "pickup", "same_day"]


class Variant(BaseModel):
    id: str = Field(min_length=1, max_length=64)
    label: str = Field(min_length=1, max_length=80)  # "Black / 256 GB", "US 9"
    price: float = Field(ge=0)  # overrides the product's price when it differs


class FulfillmentOption(BaseModel):
    kind: FulfillmentKind
    days: int = Field(ge=0, le=60)  # 0: today (pickup, same-day)
    fee: float = Field(ge=0)


class Product(BaseModel):
    id: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=200)
    name_ja: str = ""
    brand: str = ""
    category: str
    subcategory: str = ""  # "earbuds", "running shoes"
    keywords: list[str] = Field(default_factory=list)  # search words, English and Japanese
    price: float = Field(ge=0)
    currency: str = CATALOG_CURRENCY
    rating: float = Field(0, ge=0, le=5)  # average of its reviews
    review_count: int = Field(0, ge=0)
    description: str = ""
    specs: dict[str, str] = Field(default_factory=dict)
    variants: list[Variant] = Field(default_factory=list)
    fulfillment: list[FulfillmentOption] = Field(default_factory=list)
    image_url: str | None = None

    @field_validator("category")
    @classmethod
    def _known_category(cls, value: str) -> str:
        value = value.strip().lower()
        if value not in CATEGORIES:
            raise ValueError(f"unknown category {value!r}; one of {', '.join(CATEGORIES)}")
        return value


class Store(BaseModel):
    id: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=120)
    city: str = Field(min_length=1)
    address: str = ""
    latitude: float = Field(ge=-90, le=90)
    longitude: float = Field(ge=-180, le=180)
    hours: str = "10:00-20:00"  # local opening hours, "HH:MM-HH:MM"
    timezone: str = "UTC"


class StockRow(BaseModel):
    store_id: str
    product_id: str
    variant_id: str = ""  # "" when the product has no variants
    quantity: int = Field(ge=0)


class Coupon(BaseModel):
    code: str = Field(min_length=1, max_length=40)
    description: str = ""
    kind: Literal["percent", "amount"]
    value: float = Field(gt=0)
    min_spend: float = Field(0, ge=0)
    categories: list[str] = Field(default_factory=list)  # empty: every category
    expires: date

    @model_validator(mode="after")
    def _sane(self) -> Coupon:
        if self.kind == "percent" and self.value > 90:
            raise ValueError("a percent coupon takes at most 90 %")
        return self


class CartItem(BaseModel):
    product_id: str
    variant_id: str = ""
    name: str
    name_ja: str = ""  # the catalog's Japanese name, when it has one
    quantity: int = Field(ge=1, le=99)
    unit_price: float = Field(ge=0)


class Cart(BaseModel):
    user_id: str
    items: list[CartItem] = Field(default_factory=list)
    coupon: str | None = None
    discount: float = 0.0
    currency: str = CATALOG_CURRENCY

    @property
    def subtotal(self) -> float:
        return round(sum(i.unit_price * i.quantity for i in self.items), 2)

    @property
    def total(self) -> float:
        return round(max(self.subtotal - self.discount, 0.0), 2)


class Review(BaseModel):
    id: str = Field(min_length=1, max_length=64)
    product_id: str = Field(min_length=1, max_length=64)
    rating: int = Field(ge=1, le=5)
    text: str = Field(min_length=1, max_length=4000)
    lang: str = "en"
    created: date | None = None
    aspects: list[str] = Field(default_factory=list)  # what the review talks about, when known (demo data)


class UserPrefs(BaseModel):
    """User-level state: kept across conversations for that user."""

    user_id: str
    city: str | None = None
    latitude: float | None = None
    longitude: float | None = None
    store_id: str | None = None
    fulfillment: FulfillmentKind | None = None
