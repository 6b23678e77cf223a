"""The shop's SQL catalog: search (English and Japanese), stores, stock, coupons, carts, prefs, reviews,
and the deterministic demo catalog. SQLite always; the PostgreSQL variants need a server on
127.0.0.1:5432 (skipped without one unless CONCIERGE_REQUIRE_SERVICES=1)."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agents.shopping.catalog import CartError, CatalogStore, _kinds_named, _tokens, search_terms
from agents.shopping.demo import DemoCatalog, demo_catalog, seed_catalog
from agents.shopping.models import (
    CATEGORIES,
    Coupon,
    FulfillmentOption,
    Product,
    Review,
    StockRow,
    Store,
    Variant,
)
from bot.sqldb import DatabaseError
from tests.conftest import POSTGRES_URL, require_service

TODAY = date(2026, 1, 1)
TOKYO_STATION = (35.6812, 139.7671)


# --- fixtures ------------------------------------------------------------------------------


def _sqlite_url(path: Path) -> str:
    return f"sqlite:///{path.as_posix()}"


def _run(coro: Coroutine[Any, Any, None]) -> None:
    """Run a coroutine to completion from sync code, even when an event loop is already running here."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coro).result()


async def _seed(url: str) -> None:
    store = await CatalogStore.open(url)
    try:
        await seed_catalog(store)
    finally:
        await store.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _create_schema() -> tuple[str, str]:
    """A scratch schema of this test's own (and a sweep of those left by killed runs)."""
    schema = f"shop_test_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        for (name,) in conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'shop\\_test\\_%'"
        ).fetchall():
            parts = name.split("_")
            if len(parts) == 4 and parts[2].isdigit() and not _alive(int(parts[2])):
                conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        conn.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in POSTGRES_URL else "?"
    return schema, f"{POSTGRES_URL}{separator}options=-csearch_path%3D{schema}"


def _drop_schema(schema: str) -> None:
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo catalog seeded once into a SQLite file; tests get a copy of it."""
    path = tmp_path_factory.mktemp("shop") / "template.db"
    _run(_seed(_sqlite_url(path)))
    return path


def _copy_template(template: Path, tmp_path: Path) -> str:
    target = tmp_path / "shop.db"
    for suffix in ("", "-wal"):
        source = template.with_name(template.name + suffix)
        if source.exists():
            shutil.copyfile(source, target.with_name(target.name + suffix))
    return _sqlite_url(target)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.services)])
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of the test's own, on each backend."""
    if request.param == "sqlite":
        yield _sqlite_url(tmp_path / "shop.db")
        return
    require_service("PostgreSQL", "127.0.0.1", 5432)
    schema, url = _create_schema()
    try:
        yield url
    finally:
        _drop_schema(schema)


@pytest.fixture
async def empty(backend_url: str) -> AsyncIterator[CatalogStore]:
    store = await CatalogStore.open(backend_url)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
async def seeded(backend_url: str, seeded_template: Path, tmp_path: Path) -> AsyncIterator[CatalogStore]:
    """The demo catalog on each backend, free to write to."""
    url = backend_url
    if url.startswith("sqlite:///"):
        url = _copy_template(seeded_template, tmp_path)
    else:
        await _seed(url)
    store = await CatalogStore.open(url)
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
async def shop(seeded_template: Path, tmp_path: Path) -> AsyncIterator[CatalogStore]:
    """The demo catalog on SQLite only, free to write to."""
    store = await CatalogStore.open(_copy_template(seeded_template, tmp_path))
    try:
        yield store
    finally:
        await store.close()


def _product(pid: str, **fields: Any) -> Product:
    values: dict[str, Any] = {"id": pid, "name": pid.title(), "category": "audio", "price": 10.0}
    values.update(fields)
    return Product.model_validate(values)


@pytest.fixture(scope="module")
def catalog() -> DemoCatalog:
    return demo_catalog()


# --- the demo catalog ---------------------------------------------------------------------


def test_the_demo_catalog_covers_every_category_and_city(catalog: DemoCatalog) -> None:
    assert len(catalog.products) >= 300
    assert {p.category for p in catalog.products} == set(CATEGORIES)
    assert len({p.id for p in catalog.products}) == len(catalog.products)
    assert len({p.name for p in catalog.products}) == len(catalog.products)
    assert len(catalog.stores) >= 20
    assert len({s.city for s in catalog.stores}) >= 4
    assert {s.timezone for s in catalog.stores} >= {"Asia/Tokyo", "America/New_York", "Europe/London"}
    for product in catalog.products:
        assert product.subcategory and product.brand and product.description, product.id
        assert any(not k.isascii() for k in product.keywords), f"{product.id} has no Japanese keyword"
        assert any(f.kind == "ship" for f in product.fulfillment), product.id
    kinds = {f.kind for p in catalog.products for f in p.fulfillment}
    assert kinds == {"ship", "pickup", "same_day"}


def test_the_demo_catalog_has_the_specs_that_matter(catalog: DemoCatalog) -> None:
    by_sub: dict[str, list[Product]] = {}
    for p in catalog.products:
        by_sub.setdefault(p.subcategory, []).append(p)
    for earbuds in by_sub["earbuds"]:
        assert {"battery_hours", "noise_cancelling"} <= set(earbuds.specs)
        assert {"ワイヤレスイヤホン", "イヤホン", "earbuds", "wireless"} <= set(earbuds.keywords)
    assert {p.specs["noise_cancelling"] for p in by_sub["earbuds"]} == {"active", "none"}
    for laptop in by_sub["laptops"]:
        assert {"ram_gb", "storage_gb"} <= set(laptop.specs)
        assert len(laptop.variants) >= 2 and laptop.price == laptop.variants[0].price
    for shoe in by_sub["running shoes"]:
        assert [v.label for v in shoe.variants][:2] == ["US 6 (24 cm)", "US 7 (25 cm)"]
    # Price ceilings in both currencies have several hits: $100, and 1万円 ≈ $67.
    assert sum(p.price <= 100 for p in by_sub["earbuds"]) >= 5
    assert sum(p.price <= 67 for p in by_sub["earbuds"]) >= 3


def test_the_demo_stock_and_coupons_are_consistent(catalog: DemoCatalog) -> None:
    products = {p.id: p for p in catalog.products}
    stores = {s.id for s in catalog.stores}
    for row in catalog.stock:
        assert row.store_id in stores
        variants = {v.id for v in products[row.product_id].variants}
        assert row.variant_id in variants if variants else row.variant_id == ""
    assert any(r.quantity == 0 for r in catalog.stock) and any(r.quantity > 0 for r in catalog.stock)
    assert any(r.variant_id for r in catalog.stock)
    coupons = catalog.coupons
    assert len(coupons) >= 6
    assert {c.kind for c in coupons} == {"percent", "amount"}
    assert any(c.min_spend > 0 for c in coupons) and any(c.categories for c in coupons)
    assert any(c.expires < TODAY for c in coupons)
    assert any(c.expires.year >= 2030 for c in coupons)


def test_the_demo_catalog_is_the_same_on_every_call() -> None:
    first, second = demo_catalog(), demo_catalog()
    assert first == second
    assert demo_catalog(8).products != first.products


async def test_seeding_is_quick_and_idempotent(tmp_path: Path) -> None:
    store = await CatalogStore.open(_sqlite_url(tmp_path / "shop.db"))
    try:
        assert not await store.is_seeded()
        started = time.perf_counter()
        changed = await seed_catalog(store)
        assert time.perf_counter() - started < 5
        catalog = demo_catalog()
        assert changed == len(catalog.products) + len(catalog.stores) + len(catalog.stock) + len(catalog.coupons)
        assert await store.is_seeded()
        assert await seed_catalog(store) == 0
        assert await store.product_count() == len(catalog.products)
    finally:
        await store.close()


# --- opening ------------------------------------------------------------------------------


async def test_bad_urls_are_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(DatabaseError, match="sqlite:///PATH or postgresql"):
        await CatalogStore.open("mysql://localhost/shop")
    with pytest.raises(DatabaseError, match="shop catalog needs a file"):
        await CatalogStore.open("sqlite:///:memory:")


async def test_meta_and_seeded_flag(empty: CatalogStore) -> None:
    assert await empty.get_meta("feed") is None
    await empty.set_meta("feed", "v1")
    await empty.set_meta("feed", "v2")
    assert await empty.get_meta("feed") == "v2"
    assert not await empty.is_seeded()
    await empty.mark_seeded()
    assert await empty.is_seeded()


# --- search -------------------------------------------------------------------------------


async def test_english_search_with_a_price_ceiling(seeded: CatalogStore) -> None:
    found = await seeded.search_products("wireless earbuds under $100", max_price=100)
    assert len(found) >= 5
    assert all(p.price <= 100 for p in found)
    assert all(p.subcategory == "earbuds" for p in found[:5])


async def test_japanese_search_with_a_yen_ceiling(seeded: CatalogStore) -> None:
    found = await seeded.search_products("ワイヤレスイヤホン 1万円以下", max_price=67)
    assert len(found) >= 3
    assert all(p.price <= 67 for p in found)
    assert all(p.subcategory == "earbuds" for p in found[:3])
    assert [p.id for p in await seeded.search_products("ワイヤレスイヤホン1万円以下", max_price=67)][:3] == [
        p.id for p in found[:3]
    ]


async def test_japanese_queries_match_keywords_inside_them(empty: CatalogStore) -> None:
    await empty.upsert_products([
        _product("wireless", keywords=["ワイヤレスイヤホン"], rating=4.0),
        _product("wired", keywords=["イヤホン"], rating=4.9),
        _product("headphones", keywords=["ヘッドホン"], rating=5.0),
    ])
    found = [p.id for p in await empty.search_products("ワイヤレスイヤホン")]
    assert found == ["wireless", "wired"]  # the exact phrase first, whatever the rating
    assert [p.id for p in await empty.search_products("イヤホン")] == ["wired", "wireless"]
    sentence = await empty.search_products("安いワイヤレスイヤホンを探して")
    assert [p.id for p in sentence] == ["wireless", "wired"]


async def test_search_is_deterministic_on_ties(empty: CatalogStore) -> None:
    await empty.upsert_products([
        _product("b-item", keywords=["kettle"], rating=4.0),
        _product("a-item", keywords=["kettle"], rating=4.0),
        _product("c-item", keywords=["kettle"], rating=4.5),
    ])
    assert [p.id for p in await empty.search_products("kettle")] == ["c-item", "a-item", "b-item"]


async def test_search_filters_and_sorts(shop: CatalogStore) -> None:
    by_price = await shop.search_products("running shoes", sort="price", limit=8)
    assert [p.price for p in by_price] == sorted(p.price for p in by_price)
    assert all(p.subcategory == "running shoes" for p in by_price)
    by_rating = await shop.search_products("laptop", sort="rating", limit=8)
    assert [p.rating for p in by_rating] == sorted((p.rating for p in by_rating), reverse=True)
    assert all(p.category == "computers" for p in by_rating)
    rated = await shop.search_products("smartwatch", min_rating=4.5, min_price=100)
    assert rated and all(p.rating >= 4.5 and p.price >= 100 for p in rated)
    kitchen = await shop.search_products("", category="Kitchen", sort="price", limit=5)
    assert len(kitchen) == 5 and all(p.category == "kitchen" for p in kitchen)
    assert [p.price for p in kitchen] == sorted(p.price for p in kitchen)
    assert await shop.search_products("", category="groceries") == []
    assert await shop.search_products("zzyzx quux") == []
    assert len(await shop.search_products("under the", limit=3)) == 3  # only stop words: browse


async def test_search_forgives_plurals_width_and_case(shop: CatalogStore) -> None:
    plain = [p.id for p in await shop.search_products("earbuds", limit=5)]
    assert [p.id for p in await shop.search_products("Earbud", limit=5)] == plain
    assert [p.id for p in await shop.search_products("ＥＡＲＢＵＤＳ", limit=5)] == plain
    assert all(p.subcategory == "headphones" for p in await shop.search_products("headphone", limit=5))
    assert all(p.subcategory == "rice cookers" for p in await shop.search_products("炊飯器", limit=5))


async def test_search_reads_the_other_spellings_shoppers_type(shop: CatalogStore) -> None:
    """ヘッドフォン and イヤフォン are how many people write ヘッドホン and イヤホン, ノイキャン is short for
    ノイズキャンセリング: each finds what the catalog's spelling finds; スマートフォン is left alone."""
    for typed, usual in (("ヘッドフォン", "ヘッドホン"), ("ワイヤレスイヤフォン", "ワイヤレスイヤホン")):
        found = [p.id for p in await shop.search_products(typed, limit=5)]
        assert found and found == [p.id for p in await shop.search_products(usual, limit=5)]
    anc = await shop.search_products("予算3万円でノイキャンのヘッドホン", max_price=200, limit=5)
    assert anc and all(p.specs.get("noise_cancelling") == "active" for p in anc)
    assert all(p.subcategory == "smartphones" for p in await shop.search_products("スマートフォン", limit=5))


async def test_search_terms_cover_names_brands_and_japanese() -> None:
    terms = search_terms(_product(
        "p1", name="Kumo Audio Aria Wireless Earbuds", name_ja="クモ アリア ワイヤレスイヤホン", brand="Kumo Audio",
        subcategory="earbuds", keywords=["ワイヤレス イヤホン", "noise cancelling"],
    ))
    assert {"kumo", "aria", "earbud", "wireless", "ワイヤレスイヤホン", "noise", "cancelling", "audio"} <= set(terms)
    assert terms["earbud"] == 3.0 and terms["kumo"] == 2.0


async def test_products_by_id_keep_the_order_asked(shop: CatalogStore) -> None:
    ids = ["laptops-002", "earbuds-001", "missing", "earbuds-001"]
    assert [p.id for p in await shop.get_products(ids)] == ["laptops-002", "earbuds-001", "earbuds-001"]
    assert await shop.get_product("missing") is None
    product = await shop.get_product("laptops-002")
    assert product is not None and product.variants and product.fulfillment


# --- catalog writes -----------------------------------------------------------------------


async def test_upserts_count_only_real_changes(empty: CatalogStore) -> None:
    products = [_product("p1", keywords=["kettle"]), _product("p2", keywords=["toaster"])]
    assert await empty.upsert_products(products) == 2
    assert await empty.upsert_products(products) == 0
    assert await empty.upsert_products([products[0].model_copy(update={"keywords": ["teapot"]}), products[1]]) == 1
    assert [p.id for p in await empty.search_products("teapot")] == ["p1"]
    assert await empty.search_products("kettle") == []  # the old terms went with the old content
    store = Store(id="s1", name="One", city="Tokyo", latitude=35.0, longitude=139.0)
    assert await empty.upsert_stores([store]) == 1
    assert await empty.upsert_stores([store]) == 0
    stock = [StockRow(store_id="s1", product_id="p1", quantity=3)]
    assert await empty.upsert_stock(stock) == 1
    assert await empty.upsert_stock(stock) == 0
    assert await empty.upsert_stock([StockRow(store_id="s1", product_id="p1", quantity=0)]) == 1
    coupon = Coupon(code="Hello5", kind="amount", value=5, min_spend=0, expires=TODAY)
    assert await empty.upsert_coupons([coupon]) == 1
    assert await empty.upsert_coupons([coupon]) == 0
    assert (await empty.get_coupon("HELLO5")) == coupon


# --- stores and stock ---------------------------------------------------------------------


async def test_stores_near_a_point_nearest_first(shop: CatalogStore) -> None:
    near = await shop.stores_near(*TOKYO_STATION, limit=3)
    assert len(near) == 3
    assert all(s.city == "Tokyo" for s, _ in near)
    distances = [km for _, km in near]
    assert distances == sorted(distances) and 0 < distances[0] < 5
    far = await shop.stores_near(51.5074, -0.1278, limit=30)
    assert far[0][0].city == "London" and far[-1][1] > 9000


async def test_stores_by_city_in_any_case_or_in_japanese(shop: CatalogStore) -> None:
    tokyo = [s.id for s in await shop.stores_in_city("Tokyo")]
    assert len(tokyo) >= 4
    assert [s.id for s in await shop.stores_in_city("  tokyo ")] == tokyo
    assert [s.id for s in await shop.stores_in_city("東京")] == tokyo
    assert [s.city for s in await shop.stores_in_city("大阪")] == ["Osaka"] * len(await shop.stores_in_city("osaka"))
    assert await shop.stores_in_city("NYC") == await shop.stores_in_city("New York")
    assert await shop.stores_in_city("Atlantis") == []
    assert set(await shop.cities()) >= {"Tokyo", "Osaka", "New York", "San Francisco", "London"}
    store = await shop.get_store(tokyo[0])
    assert store is not None and store.timezone == "Asia/Tokyo"
    assert await shop.get_store("nowhere") is None


async def test_stock_by_product_and_store(shop: CatalogStore, catalog: DemoCatalog) -> None:
    row = next(r for r in catalog.stock if r.variant_id)
    rows = await shop.stock(row.product_id)
    assert row in rows
    assert rows == sorted(rows, key=lambda r: (r.store_id, r.variant_id))
    only = await shop.stock(row.product_id, store_ids=[row.store_id])
    assert only and {r.store_id for r in only} == {row.store_id}
    assert await shop.stock(row.product_id, store_ids=[]) == []
    assert await shop.stock("missing") == []


# --- coupons ------------------------------------------------------------------------------


async def test_coupons_for_a_product_on_a_day(shop: CatalogStore) -> None:
    earbuds = await shop.get_product("earbuds-001")
    assert earbuds is not None
    codes = {c.code for c in await shop.coupons_for(earbuds, today=TODAY)}
    assert {"WELCOME10", "AUDIO15", "SAVE20"} <= codes
    assert not codes & {"NEWYEAR2025", "SHOES30", "HOME25"}
    earlier = {c.code for c in await shop.coupons_for(earbuds, today=date(2025, 12, 31))}
    assert "NEWYEAR2025" in earlier  # valid through its expiry day
    coupon = await shop.get_coupon("audio15")
    assert coupon is not None and coupon.code == "AUDIO15"
    assert await shop.get_coupon("NOPE") is None


# --- carts --------------------------------------------------------------------------------


async def test_cart_add_set_and_remove(seeded: CatalogStore) -> None:
    cart = await seeded.cart_add("u1", "earbuds-001", 2)
    cart = await seeded.cart_add("u1", "earbuds-001", 1)
    assert [(i.product_id, i.quantity) for i in cart.items] == [("earbuds-001", 3)]
    laptop = await seeded.get_product("laptops-001")
    assert laptop is not None
    big = laptop.variants[1]
    cart = await seeded.cart_add("u1", "laptops-001", 1, variant_id=big.id)
    line = cart.items[1]
    assert (line.variant_id, line.unit_price) == (big.id, big.price) and big.label in line.name
    cart = await seeded.cart_set("u1", "laptops-001", 2)  # the one line of that product
    assert cart.items[1].quantity == 2 and cart.items[1].variant_id == big.id
    earbuds = await seeded.get_product("earbuds-001")
    assert earbuds is not None
    assert cart.subtotal == round(3 * earbuds.price + 2 * big.price, 2) and cart.total == cart.subtotal
    cart = await seeded.cart_set("u1", "earbuds-001", 0)
    assert [i.product_id for i in cart.items] == ["laptops-001"]
    small = laptop.variants[0]
    await seeded.cart_add("u1", "laptops-001", 1, variant_id=small.id)
    with pytest.raises(CartError, match="several variants"):
        await seeded.cart_set("u1", "laptops-001", 3)
    cart = await seeded.cart_set("u1", "laptops-001", 0, variant_id=small.id)
    assert [(i.variant_id, i.quantity) for i in cart.items] == [(big.id, 2)]
    cart = await seeded.cart_remove("u1", "laptops-001")
    assert cart.items == [] and cart.total == 0
    with pytest.raises(CartError, match="not in the cart"):
        await seeded.cart_remove("u1", "laptops-001")
    assert (await seeded.get_cart("someone-else")).items == []


async def test_cart_refuses_bad_quantities_products_and_variants(shop: CatalogStore) -> None:
    for quantity in (0, -1, 100):
        with pytest.raises(CartError, match="between 1 and 99"):
            await shop.cart_add("u1", "earbuds-001", quantity)
    with pytest.raises(CartError, match="between 0 and 99"):
        await shop.cart_set("u1", "earbuds-001", 100)
    await shop.cart_add("u1", "earbuds-001", 98)
    with pytest.raises(CartError, match="at most 99"):
        await shop.cart_add("u1", "earbuds-001", 2)
    with pytest.raises(CartError, match="no product 'nope'"):
        await shop.cart_add("u1", "nope", 1)
    with pytest.raises(CartError, match="has no variant"):
        await shop.cart_add("u1", "laptops-001", 1, variant_id="laptops-001-9-9")
    assert [(i.product_id, i.quantity) for i in (await shop.get_cart("u1")).items] == [("earbuds-001", 98)]


async def test_concurrent_adds_to_one_cart_all_count(seeded: CatalogStore) -> None:
    await asyncio.gather(*(seeded.cart_add("u1", "earbuds-001", 1) for _ in range(10)))
    assert [(i.product_id, i.quantity) for i in (await seeded.get_cart("u1")).items] == [("earbuds-001", 10)]


async def test_coupon_errors_leave_the_cart_unchanged(seeded: CatalogStore) -> None:
    with pytest.raises(CartError, match="cart is empty"):
        await seeded.cart_apply_coupon("u1", "WELCOME10", today=TODAY)
    await seeded.cart_add("u1", "earbuds-006", 1)  # cheap earbuds, under every minimum spend
    with pytest.raises(CartError, match="no coupon 'BOGUS'"):
        await seeded.cart_apply_coupon("u1", "BOGUS", today=TODAY)
    with pytest.raises(CartError, match="expired on 2025-12-31"):
        await seeded.cart_apply_coupon("u1", "newyear2025", today=TODAY)
    with pytest.raises(CartError, match=r"at least \$50\.00 on audio"):
        await seeded.cart_apply_coupon("u1", "AUDIO15", today=TODAY)
    with pytest.raises(CartError, match="only for shoes"):
        await seeded.cart_apply_coupon("u1", "SHOES30", today=TODAY)
    cart = await seeded.get_cart("u1")
    assert cart.coupon is None and cart.discount == 0


async def test_discount_math(seeded: CatalogStore) -> None:
    earbuds = await seeded.get_product("earbuds-003")  # premium: over AUDIO15's $50
    shoes = await seeded.get_product("running-shoes-001")
    assert earbuds is not None and shoes is not None and earbuds.price >= 50
    await seeded.cart_add("u1", earbuds.id, 1)
    await seeded.cart_add("u1", shoes.id, 1, variant_id=shoes.variants[3].id)
    cart = await seeded.cart_apply_coupon("u1", "audio15", today=TODAY)
    assert cart.coupon == "AUDIO15"
    assert cart.discount == round(earbuds.price * 0.15, 2)  # the audio line only
    assert cart.total == round(earbuds.price + shoes.price - cart.discount, 2)
    cart = await seeded.cart_apply_coupon("u1", "SHOES30", today=TODAY)  # one coupon per order: replaces
    assert (cart.coupon, cart.discount) == ("SHOES30", round(shoes.price * 0.30, 2))
    await seeded.upsert_coupons([Coupon(code="BIG500", kind="amount", value=500, min_spend=0, categories=["shoes"],
                                        expires=date(2030, 1, 1))])
    cart = await seeded.cart_apply_coupon("u1", "BIG500", today=TODAY)
    assert cart.discount == shoes.price  # capped at what it applies to
    # Recomputed on every read: below the minimum spend it is worth nothing, and it expires.
    cart = await seeded.cart_apply_coupon("u1", "SAVE20", today=TODAY)
    assert cart.discount == 20
    cart = await seeded.cart_remove("u1", earbuds.id)
    assert cart.coupon == "SAVE20" and cart.discount == (20 if shoes.price >= 100 else 0)
    assert (await seeded.get_cart("u1", today=date(2027, 7, 1))).discount == 0
    await seeded.cart_clear("u1")
    cart = await seeded.get_cart("u1")
    assert (cart.items, cart.coupon, cart.discount) == ([], None, 0)


# --- preferences --------------------------------------------------------------------------


async def test_user_prefs_round_trip(empty: CatalogStore) -> None:
    prefs = await empty.get_prefs("u1")
    assert prefs.user_id == "u1" and prefs.city is None
    await empty.set_prefs(prefs.model_copy(update={"city": "Osaka", "store_id": "osaka-umeda", "fulfillment": "pickup"}))
    again = await empty.get_prefs("u1")
    assert (again.city, again.store_id, again.fulfillment) == ("Osaka", "osaka-umeda", "pickup")
    assert (await empty.get_prefs("u2")).city is None


# --- reviews ------------------------------------------------------------------------------


def _reviews() -> list[Review]:
    return [
        Review(id="r1", product_id="p1", rating=5, text="Great sound.", created=date(2025, 5, 1), aspects=["sound"]),
        Review(id="r2", product_id="p1", rating=3, text="Battery is short.", aspects=["battery"]),
        Review(id="r3", product_id="p2", rating=4, text="音がいい。", lang="ja"),
    ]


async def test_reviews_are_embedded_once_per_change(empty: CatalogStore) -> None:
    reviews = _reviews()
    assert await empty.upsert_reviews(reviews) == (3, 0)
    assert await empty.upsert_reviews(reviews) == (0, 3)
    due = await empty.reviews_to_embed()
    assert [r.id for r, _ in due] == ["r1", "r2", "r3"]
    assert due[0][0] == reviews[0]
    assert [r.id for r, _ in await empty.reviews_to_embed(["p2"])] == ["r3"]
    assert len(await empty.reviews_to_embed(limit=2)) == 2
    await empty.mark_embedded([(r.id, h) for r, h in due])
    assert await empty.reviews_to_embed() == []
    edited = reviews[1].model_copy(update={"text": "Battery lasts a day after the update."})
    assert await empty.upsert_reviews([edited, reviews[0]]) == (1, 1)
    again = await empty.reviews_to_embed()
    assert [(r.id, r.text) for r, _ in again] == [("r2", edited.text)]
    assert again[0][1] != dict((r.id, h) for r, h in due)["r2"]
    await empty.mark_embedded([("r2", "a-stale-hash")])  # embedded an older text: still due
    assert [r.id for r, _ in await empty.reviews_to_embed()] == ["r2"]
    await empty.mark_embedded([("r2", again[0][1])])
    assert await empty.reviews_to_embed() == []
    assert [r.id for r in await empty.get_reviews(["r3", "nope", "r1"])] == ["r3", "r1"]
    assert (await empty.review_count(), await empty.review_count("p1"), await empty.review_count("p9")) == (3, 2, 0)


async def test_ratings_follow_the_reviews(empty: CatalogStore) -> None:
    await empty.upsert_products([_product("p1", rating=1.0, review_count=99), _product("p3", rating=4.2, review_count=7)])
    await empty.upsert_reviews(_reviews())
    assert await empty.update_ratings() == 1
    p1 = await empty.get_product("p1")
    p3 = await empty.get_product("p3")
    assert p1 is not None and (p1.rating, p1.review_count) == (4.0, 2)
    assert p3 is not None and (p3.rating, p3.review_count) == (4.2, 7)  # no reviews: the catalog's figures
    # A changed product from the feed keeps the rating its reviews give it.
    await empty.upsert_products([_product("p1", price=12.0, rating=1.0, review_count=99)])
    p1 = await empty.get_product("p1")
    assert p1 is not None and (p1.price, p1.rating, p1.review_count) == (12.0, 4.0, 2)
    assert [p.id for p in await empty.search_products("", sort="rating")] == ["p3", "p1"]


async def test_products_round_trip_every_field(empty: CatalogStore) -> None:
    product = _product(
        "full", name_ja="フル", brand="B", subcategory="earbuds", keywords=["a1", "イヤホン"], price=19.99,
        rating=4.4, review_count=12, description="d", specs={"battery_hours": "8"},
        variants=[Variant(id="full-black", label="Black", price=19.99)],
        fulfillment=[FulfillmentOption(kind="ship", days=3, fee=0), FulfillmentOption(kind="pickup", days=0, fee=0)],
        image_url="https://example.com/p.jpg",
    )
    await empty.upsert_products([product])
    assert await empty.get_product("full") == product


@pytest.mark.parametrize(
    ("query", "kinds"),
    [("bluetooth speaker under $30", ["speakers"]), ("running shoes", ["running shoes"]), ("shoes", ["shoes"]),
     ("phone case for my phone", ["phone cases"]), ("wireless earbuds or headphones", ["earbuds", "headphones"]),
     ("ワイヤレスイヤホン", []), ("", [])],
)
def test_the_kinds_a_query_names(query: str, kinds: list[str]) -> None:
    """Every word of a kind's name in the query, and the longest such kind ("running shoes", not a
    "shoes" kind beside it)."""
    subcategories = ["earbuds", "headphones", "speakers", "running shoes", "shoes", "sandals", "phone cases", ""]
    named = _kinds_named(_tokens(query), subcategories)
    assert named == kinds
