"""The shop's SQL store: catalog, stores, stock, coupons, carts, user preferences and review texts.

One schema (tables prefixed `shop_`, versioned as the "shop" component) on SQLite or PostgreSQL
through `bot.sqldb`, on the process's one database handle; the SQL is written once with `?`
placeholders and portable types (TEXT, INTEGER, REAL — DOUBLE PRECISION on PostgreSQL, where REAL is
4-byte and would round prices). Nested fields are JSON in TEXT columns.

Writes are idempotent and cheap to repeat: every catalog row carries a hash of its content, an
upsert compares hashes first and writes only the rows that differ, and reports how many that was —
so the daily ingestion of an unchanged file writes nothing and says "loaded 0".

Search is keyword search, not semantic: each product is indexed as a set of normalised terms
(`shop_terms`) taken from its name, Japanese name, brand, category, subcategory and keywords.
Japanese has no spaces, so a Japanese query also matches every indexed Japanese term it contains
("ワイヤレスイヤホン1万円以下" contains "イヤホン"). Scores add the weights of the matched terms;
ties go to the better-rated product, then the smaller id, so results are deterministic.

Reviews live here as the source of truth for their text; each has a content hash and the hash it
was last embedded with, so the vector index (agents/shopping/reviews.py) re-embeds only what changed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import time
import unicodedata
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import UTC, date, datetime
from typing import Any, Literal

from pydantic import BaseModel

from agents.shopping.models import (
    CATEGORIES,
    Cart,
    CartItem,
    Coupon,
    Product,
    Review,
    StockRow,
    Store,
    UserPrefs,
)
from agents.shopping.phrasebook import categories_text, say, usual_spelling
from agents.shopping.render import money
from bot.sqldb import Database, DatabaseError, Migration, Transaction, migrate, open_database

__all__ = ["MAX_QUANTITY", "CartError", "CatalogStore", "DatabaseError", "normalize_text", "search_terms"]

MAX_QUANTITY = 99  # per cart line, as CartItem allows
_CHUNK = 500  # ids per IN (…) list: well under every SQLite build's parameter limit

# --- schema ---------------------------------------------------------------------------------

# {real} is REAL on SQLite and DOUBLE PRECISION on PostgreSQL (whose REAL is a 4-byte float).
_TABLES: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS shop_products (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, brand TEXT NOT NULL, category TEXT NOT NULL,
        subcategory TEXT NOT NULL, price {real} NOT NULL, rating {real} NOT NULL,
        review_count INTEGER NOT NULL, data TEXT NOT NULL, hash TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS shop_terms (
        product_id TEXT NOT NULL, term TEXT NOT NULL, weight {real} NOT NULL, cjk INTEGER NOT NULL,
        PRIMARY KEY (product_id, term))""",
    """CREATE TABLE IF NOT EXISTS shop_stores (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, city TEXT NOT NULL, city_key TEXT NOT NULL,
        latitude {real} NOT NULL, longitude {real} NOT NULL, data TEXT NOT NULL, hash TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS shop_stock (
        store_id TEXT NOT NULL, product_id TEXT NOT NULL, variant_id TEXT NOT NULL, quantity INTEGER NOT NULL,
        PRIMARY KEY (store_id, product_id, variant_id))""",
    """CREATE TABLE IF NOT EXISTS shop_coupons (
        code_key TEXT PRIMARY KEY, code TEXT NOT NULL, expires TEXT NOT NULL, data TEXT NOT NULL,
        hash TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS shop_carts (
        user_id TEXT PRIMARY KEY, coupon TEXT, updated {real} NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS shop_cart_items (
        user_id TEXT NOT NULL, product_id TEXT NOT NULL, variant_id TEXT NOT NULL, quantity INTEGER NOT NULL,
        seq INTEGER NOT NULL, PRIMARY KEY (user_id, product_id, variant_id))""",
    "CREATE TABLE IF NOT EXISTS shop_prefs (user_id TEXT PRIMARY KEY, data TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS shop_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS shop_reviews (
        id TEXT PRIMARY KEY, product_id TEXT NOT NULL, rating INTEGER NOT NULL, text TEXT NOT NULL,
        lang TEXT NOT NULL, created TEXT, aspects TEXT NOT NULL, hash TEXT NOT NULL, embedded_hash TEXT)""",
    "CREATE INDEX IF NOT EXISTS shop_terms_term ON shop_terms (term)",
    "CREATE INDEX IF NOT EXISTS shop_products_category_price ON shop_products (category, price)",
    "CREATE INDEX IF NOT EXISTS shop_stores_city_key ON shop_stores (city_key)",
    "CREATE INDEX IF NOT EXISTS shop_stock_product ON shop_stock (product_id)",
    "CREATE INDEX IF NOT EXISTS shop_reviews_product ON shop_reviews (product_id)",
)
TABLES = (
    "shop_products", "shop_terms", "shop_stores", "shop_stock", "shop_coupons", "shop_carts",
    "shop_cart_items", "shop_prefs", "shop_meta", "shop_reviews",
)
# The shop tables' schema, one versioned step at a time (bot/sqldb.py); append, never edit.
MIGRATIONS = (Migration("catalogue, stores, stock, coupons, carts, preferences, reviews", _TABLES),)

_PRODUCT_COLUMNS = ("id", "name", "brand", "category", "subcategory", "price", "rating", "review_count", "data", "hash")


def _upsert(table: str, columns: Sequence[str], key: Sequence[str], keep: Sequence[str] = ()) -> str:
    """INSERT … ON CONFLICT (key) DO UPDATE SET every other column (but `keep`), on both backends."""
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in key and c not in keep)
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)}) "
        f"ON CONFLICT ({', '.join(key)}) DO " + (f"UPDATE SET {updates}" if updates else "NOTHING")
    )


_UPSERT_PRODUCT = _upsert("shop_products", _PRODUCT_COLUMNS, ("id",))
# ON CONFLICT: two feeds upserting the same product at once must not collide on its terms.
_INSERT_TERM = _upsert("shop_terms", ("product_id", "term", "weight", "cjk"), ("product_id", "term"))
_UPSERT_STORE = _upsert(
    "shop_stores", ("id", "name", "city", "city_key", "latitude", "longitude", "data", "hash"), ("id",)
)
_UPSERT_STOCK = _upsert("shop_stock", ("store_id", "product_id", "variant_id", "quantity"),
                        ("store_id", "product_id", "variant_id"))
_UPSERT_COUPON = _upsert("shop_coupons", ("code_key", "code", "expires", "data", "hash"), ("code_key",))
# embedded_hash is kept: a changed review keeps its old mark, which no longer equals its hash.
_UPSERT_REVIEW = _upsert(
    "shop_reviews", ("id", "product_id", "rating", "text", "lang", "created", "aspects", "hash"), ("id",)
)
_RATINGS = (
    "UPDATE shop_products SET "
    "rating = (SELECT ROUND(AVG(r.rating), 1) FROM shop_reviews r WHERE r.product_id = shop_products.id), "
    "review_count = (SELECT COUNT(*) FROM shop_reviews r WHERE r.product_id = shop_products.id) "
    "WHERE id IN (SELECT product_id FROM shop_reviews)"
)


class CartError(ValueError):
    """A cart change that cannot be made; the cart is unchanged. The message says why in English;
    `key` and `values` say it in the shopper's language (`phrasebook.say`)."""

    def __init__(self, key: str, **values: Any) -> None:
        super().__init__(say(key, "en", **values))
        self.key, self.values = key, values


# --- text: normalisation and search terms ---------------------------------------------------

_LATIN = "a-z0-9\u00c0-\u024f"
_TOKEN = re.compile(f"[{_LATIN}]+|[^\\W_{_LATIN}]+")
# Words that say how to search, not what for: dropped from English queries.
_STOPWORDS = frozenset(
    "a an the for with without and or of in on to by at from under over below above less more than "
    "cheap cheaper cheapest best good great me my i find show want need looking look buy get some any "
    "around about between up usd dollar dollars yen jpy price prices cost costs is are that which "
    "please recommend suggest".split()
)
_FIELD_WEIGHTS = {"keywords": 3.0, "subcategory": 3.0, "name": 2.0, "name_ja": 2.0, "brand": 2.0, "category": 1.0}
_PARTIAL = 0.8  # a prefix or substring match counts at most this much of an exact one
_KEEP_FRACTION = 0.6  # price/rating sorts keep matches scoring at least this share of the best one

_CITY_ALIASES = {
    "東京": "tokyo", "とうきょう": "tokyo", "東京都": "tokyo",
    "大阪": "osaka", "おおさか": "osaka", "大阪市": "osaka",
    "ニューヨーク": "new york", "nyc": "new york", "new york city": "new york", "ny": "new york",
    "サンフランシスコ": "san francisco", "sf": "san francisco", "san fran": "san francisco",
    "ロンドン": "london",
    "京都": "kyoto", "名古屋": "nagoya", "横浜": "yokohama", "福岡": "fukuoka", "札幌": "sapporo",
    "ロサンゼルス": "los angeles", "la": "los angeles", "パリ": "paris", "シアトル": "seattle",
}


def normalize_text(text: str) -> str:
    """NFKC (full-width → ASCII, half-width kana → full), case-folded and in the catalog's spelling
    (ヘッドフォン → ヘッドホン): how terms and queries compare."""
    return usual_spelling(unicodedata.normalize("NFKC", text).casefold())


def _is_cjk(term: str) -> bool:
    return any(not ("a" <= ch <= "z" or "0" <= ch <= "9" or "\u00c0" <= ch <= "\u024f") for ch in term)


def _stem(token: str) -> str:
    """A crude English singular ('earbuds' → 'earbud', 'shoes' → 'shoe'), applied to both sides alike."""
    if not _is_cjk(token) and len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def _tokens(text: str) -> list[str]:
    """Words of a normalised text, split where the script changes ('iphone用ケース' → iphone, 用ケース)."""
    out = []
    for token in _TOKEN.findall(normalize_text(text)):
        if not _is_cjk(token) and len(token) < 2:
            continue
        out.append(_stem(token))
    return out


def _kinds_named(tokens: Sequence[str], subcategories: Iterable[str]) -> list[str]:
    """The kinds of product (subcategories) the query's words name, every word of the kind's name
    among them ("bluetooth speaker" → speakers, "running shoes" → running shoes, "shoes" → none);
    where one named kind's words hold another's, the longer one."""
    said = set(tokens)
    named = {kind: words for kind in subcategories if kind and (words := frozenset(_tokens(kind))) and words <= said}
    return sorted(kind for kind, words in named.items() if not any(words < other for other in named.values()))


def search_terms(product: Product) -> dict[str, float]:
    """The product's index terms with their weights: each field's words, plus whole Japanese phrases."""
    fields: dict[str, Iterable[str]] = {
        "keywords": product.keywords,
        "subcategory": [product.subcategory],
        "name": [product.name],
        "name_ja": [product.name_ja],
        "brand": [product.brand],
        "category": [product.category],
    }
    terms: dict[str, float] = {}
    for field, values in fields.items():
        weight = _FIELD_WEIGHTS[field]
        for value in values:
            words = _tokens(value)
            if len(words) > 1 and all(_is_cjk(w) for w in words):
                words.append("".join(words))  # "ワイヤレス イヤホン" is also "ワイヤレスイヤホン"
            for word in words:
                if len(word) <= 64 and terms.get(word, 0.0) < weight:
                    terms[word] = weight
    return terms


# --- rows ------------------------------------------------------------------------------------


def _content_hash(record: BaseModel) -> str:
    """A hash of the record's content (canonical JSON), independent of dict ordering."""
    text = json.dumps(record.model_dump(mode="json"), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _marks(n: int) -> str:
    return ", ".join("?" for _ in range(n))


def _unique(records: Iterable[Any], key: Callable[[Any], Any]) -> list[Any]:
    """One record per key, the last one winning (as a second upsert of the same row would)."""
    return list({key(r): r for r in records}.values())


def _product_from_row(data: str, rating: float, review_count: int) -> Product:
    product = Product.model_validate_json(data)
    # The columns win: update_ratings() keeps them in step with the reviews.
    return product.model_copy(update={"rating": float(rating), "review_count": int(review_count)})


def _review_from_row(row: Sequence[Any]) -> Review:
    rid, product_id, rating, text, lang, created, aspects = row[:7]
    return Review(
        id=rid, product_id=product_id, rating=int(rating), text=text, lang=lang,
        created=date.fromisoformat(created) if created else None, aspects=json.loads(aspects),
    )


def _city_key(city: str) -> str:
    key = " ".join(normalize_text(city).split())
    return _CITY_ALIASES.get(key, key)


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in kilometres."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(a)))


Fetch = Callable[[str, Sequence[Any]], Awaitable[list[tuple[Any, ...]]]]


class CatalogStore:
    """Everything the /shop agent reads and writes in SQL. Build with `await CatalogStore.open(url)`."""

    def __init__(self, db: Database):
        self._db = db
        self._closed = False

    @property
    def dialect(self) -> Literal["sqlite", "postgresql"]:
        return self._db.dialect

    @classmethod
    async def open(cls, database_url: str) -> CatalogStore:
        """Open `sqlite:///path/to.db` or `postgresql://…` and create the shop_ tables if needed."""
        store = cls(await open_database(database_url, name="shop catalog"))
        try:
            await store._setup()
        except BaseException:
            await store.close()
            raise
        return store

    async def close(self) -> None:
        """Give back this store's handle on the process's database (closing it when it was the last)."""
        if not self._closed:
            self._closed = True
            await self._db.close()

    async def _setup(self) -> None:
        await migrate(self._db, "shop", MIGRATIONS)

    async def _fetch_in(
        self,
        sql: str,
        ids: Sequence[Any],
        params: Sequence[Any] = (),
        *,
        before: Sequence[Any] = (),
        fetch: Fetch | None = None,
    ) -> list[tuple[Any, ...]]:
        """Run `sql` (with one `{ids}` slot for an IN list) over `ids` in chunks: parameters are
        `before`, then the chunk, then `params`."""
        run = fetch or self._db.fetch
        rows: list[tuple[Any, ...]] = []
        for chunk in _chunks(list(ids)):
            rows.extend(await run(sql.format(ids=_marks(len(chunk))), (*before, *chunk, *params)))
        return rows

    # --- metadata ---------------------------------------------------------------------------

    async def get_meta(self, key: str) -> str | None:
        rows = await self._db.fetch("SELECT value FROM shop_meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    async def set_meta(self, key: str, value: str) -> None:
        async def write(tx: Transaction) -> None:
            await tx.execute(_upsert("shop_meta", ("key", "value"), ("key",)), (key, value))

        await self._db.transaction(write)

    async def is_seeded(self) -> bool:
        return await self.get_meta("seeded_at") is not None

    async def mark_seeded(self) -> None:
        await self.set_meta("seeded_at", datetime.now(UTC).isoformat(timespec="seconds"))

    # --- catalog writes ---------------------------------------------------------------------

    async def _changed(
        self, tx: Transaction, table: str, key: str, items: Sequence[tuple[str, str]]
    ) -> set[str]:
        """The keys among (key, hash) pairs whose stored hash differs or which are not stored yet."""
        stored: dict[str, str] = {}
        for chunk in _chunks([k for k, _ in items]):
            rows = await tx.fetch(f"SELECT {key}, hash FROM {table} WHERE {key} IN ({_marks(len(chunk))})", chunk)
            stored.update({k: h for k, h in rows})
        return {k for k, h in items if stored.get(k) != h}

    async def upsert_products(self, products: Sequence[Product]) -> int:
        """Insert or update products and their search terms; the number that were new or different."""
        unique = _unique(products, lambda p: p.id)
        if not unique:
            return 0
        hashed = [(p, _content_hash(p)) for p in unique]
        changed_count = 0

        async def write(tx: Transaction) -> None:
            nonlocal changed_count
            changed = await self._changed(tx, "shop_products", "id", [(p.id, h) for p, h in hashed])
            rows = [
                (p.id, p.name, p.brand, p.category, p.subcategory, p.price, p.rating, p.review_count,
                 p.model_dump_json(), h)
                for p, h in hashed if p.id in changed
            ]
            if not rows:
                return
            ids = [r[0] for r in rows]
            await tx.executemany(_UPSERT_PRODUCT, rows)
            for chunk in _chunks(ids):
                await tx.execute(f"DELETE FROM shop_terms WHERE product_id IN ({_marks(len(chunk))})", chunk)
            terms = [
                (p.id, term, weight, int(_is_cjk(term)))
                for p, _ in hashed if p.id in changed
                for term, weight in search_terms(p).items()
            ]
            await tx.executemany(_INSERT_TERM, terms)
            # A product that has reviews keeps the rating its reviews give it, whatever the feed says.
            for chunk in _chunks(ids):
                await tx.execute(f"{_RATINGS} AND id IN ({_marks(len(chunk))})", chunk)
            changed_count = len(rows)

        await self._db.transaction(write)
        return changed_count

    async def upsert_stores(self, stores: Sequence[Store]) -> int:
        unique = _unique(stores, lambda s: s.id)
        if not unique:
            return 0
        hashed = [(s, _content_hash(s)) for s in unique]
        changed_count = 0

        async def write(tx: Transaction) -> None:
            nonlocal changed_count
            changed = await self._changed(tx, "shop_stores", "id", [(s.id, h) for s, h in hashed])
            rows = [
                (s.id, s.name, s.city, _city_key(s.city), s.latitude, s.longitude, s.model_dump_json(), h)
                for s, h in hashed if s.id in changed
            ]
            if rows:
                await tx.executemany(_UPSERT_STORE, rows)
            changed_count = len(rows)

        await self._db.transaction(write)
        return changed_count

    async def upsert_stock(self, rows: Sequence[StockRow]) -> int:
        """Set stock levels; the number of (store, product, variant) rows whose quantity changed."""
        unique = _unique(rows, lambda r: (r.store_id, r.product_id, r.variant_id))
        if not unique:
            return 0
        changed_count = 0

        async def write(tx: Transaction) -> None:
            nonlocal changed_count
            stored: dict[tuple[str, str, str], int] = {}
            product_ids = list(dict.fromkeys(r.product_id for r in unique))
            for row in await self._fetch_in(
                "SELECT store_id, product_id, variant_id, quantity FROM shop_stock WHERE product_id IN ({ids})",
                product_ids, fetch=tx.fetch,
            ):
                stored[(row[0], row[1], row[2])] = int(row[3])
            values = [
                (r.store_id, r.product_id, r.variant_id, r.quantity)
                for r in unique if stored.get((r.store_id, r.product_id, r.variant_id)) != r.quantity
            ]
            if values:
                await tx.executemany(_UPSERT_STOCK, values)
            changed_count = len(values)

        await self._db.transaction(write)
        return changed_count

    async def upsert_coupons(self, coupons: Sequence[Coupon]) -> int:
        unique = _unique(coupons, lambda c: c.code.upper())
        if not unique:
            return 0
        hashed = [(c, _content_hash(c)) for c in unique]
        changed_count = 0

        async def write(tx: Transaction) -> None:
            nonlocal changed_count
            changed = await self._changed(tx, "shop_coupons", "code_key", [(c.code.upper(), h) for c, h in hashed])
            rows = [
                (c.code.upper(), c.code, c.expires.isoformat(), c.model_dump_json(), h)
                for c, h in hashed if c.code.upper() in changed
            ]
            if rows:
                await tx.executemany(_UPSERT_COUPON, rows)
            changed_count = len(rows)

        await self._db.transaction(write)
        return changed_count

    # --- products ---------------------------------------------------------------------------

    async def get_product(self, product_id: str) -> Product | None:
        found = await self.get_products([product_id])
        return found[0] if found else None

    async def get_products(self, ids: Sequence[str]) -> list[Product]:
        """The products with these ids, in the order of `ids`; unknown ids are left out."""
        wanted = list(dict.fromkeys(ids))
        rows = await self._fetch_in(
            "SELECT id, data, rating, review_count FROM shop_products WHERE id IN ({ids})", wanted
        )
        found = {row[0]: _product_from_row(row[1], row[2], row[3]) for row in rows}
        return [found[i] for i in ids if i in found]

    async def product_ids(self) -> list[str]:
        rows = await self._db.fetch("SELECT id FROM shop_products ORDER BY id")
        return [r[0] for r in rows]

    async def product_count(self) -> int:
        rows = await self._db.fetch("SELECT COUNT(*) FROM shop_products")
        return int(rows[0][0])

    async def search_products(
        self,
        text: str = "",
        *,
        category: str | None = None,
        max_price: float | None = None,
        min_price: float | None = None,
        min_rating: float | None = None,
        sort: Literal["relevance", "price", "rating"] = "relevance",
        limit: int = 10,
    ) -> list[Product]:
        """Keyword search (English and Japanese) with filters; see the module docstring for scoring.

        With text, only products matching at least one word are returned; sorted by price or
        rating, only those scoring at least 60 % of the best match (so 'wireless earbuds' by price
        does not open with a wireless mouse). Prices are in the catalog currency."""
        limit = max(0, min(int(limit), 100))
        if limit == 0:
            return []
        filters: list[str] = []
        filter_params: list[Any] = []
        if category:
            category = category.strip().lower()
            if category not in CATEGORIES:
                return []
            filters.append("p.category = ?")
            filter_params.append(category)
        if max_price is not None:
            filters.append("p.price <= ?")
            filter_params.append(float(max_price))
        if min_price is not None:
            filters.append("p.price >= ?")
            filter_params.append(float(min_price))
        if min_rating is not None:
            filters.append("p.rating >= ?")
            filter_params.append(float(min_rating))

        tokens = [t for t in dict.fromkeys(_tokens(text)) if _is_cjk(t) or t not in _STOPWORDS]
        subcategories = await self._db.fetch("SELECT DISTINCT subcategory FROM shop_products") if tokens else []
        kinds = _kinds_named(tokens, [r[0] for r in subcategories])
        if kinds:  # "running shoes under $40": running shoes or nothing, not the sandals that fit the budget
            filters.append(f"p.subcategory IN ({_marks(len(kinds))})")
            filter_params.extend(kinds)
        if not tokens:
            order = {
                "relevance": "p.rating DESC, p.review_count DESC, p.id",
                "price": "p.price ASC, p.rating DESC, p.id",
                "rating": "p.rating DESC, p.review_count DESC, p.id",
            }[sort]
            where = f"WHERE {' AND '.join(filters)}" if filters else ""
            rows = await self._db.fetch(
                f"SELECT p.id FROM shop_products p {where} ORDER BY {order} LIMIT ?", (*filter_params, limit)
            )
            return await self.get_products([r[0] for r in rows])

        conditions: list[str] = []
        params: list[Any] = []
        conditions.append(f"t.term IN ({_marks(len(tokens))})")
        params.extend(tokens)
        for token in tokens:
            if _is_cjk(token):
                conditions.append("t.term LIKE ?")  # 'イヤホン' finds 'ワイヤレスイヤホン'
                params.append(f"%{token}%")
            elif len(token) >= 3 and not token.isdigit():
                conditions.append("t.term LIKE ?")  # 'headphone' finds 'headphones'
                params.append(f"{token}%")
        cjk_query = "".join(t for t in tokens if _is_cjk(t))
        if cjk_query:
            # Japanese has no spaces: every indexed Japanese term inside the query matches.
            position = "strpos" if self.dialect == "postgresql" else "instr"
            conditions.append(f"(t.cjk = 1 AND LENGTH(t.term) >= 2 AND {position}(?, t.term) > 0)")
            params.append(" ".join(t for t in tokens if _is_cjk(t)))
        sql = (
            "SELECT t.product_id, t.term, t.weight, p.price, p.rating FROM shop_terms t "
            "JOIN shop_products p ON p.id = t.product_id "
            f"WHERE ({' OR '.join(conditions)})" + "".join(f" AND {f}" for f in filters)
        )
        scores: dict[str, float] = {}
        facts: dict[str, tuple[float, float]] = {}
        for product_id, term, weight, price, rating in await self._db.fetch(sql, (*params, *filter_params)):
            scores[product_id] = scores.get(product_id, 0.0) + float(weight) * _match_quality(term, tokens)
            facts[product_id] = (float(price), float(rating))
        if not scores:
            return []
        ids = list(scores)
        if sort != "relevance":
            best = max(scores.values())
            ids = [i for i in ids if scores[i] >= best * _KEEP_FRACTION]
        if sort == "price":
            ids.sort(key=lambda i: (facts[i][0], -scores[i], -facts[i][1], i))
        elif sort == "rating":
            ids.sort(key=lambda i: (-facts[i][1], -scores[i], i))
        else:
            ids.sort(key=lambda i: (-round(scores[i], 6), -facts[i][1], i))
        return await self.get_products(ids[:limit])

    # --- stores and stock -------------------------------------------------------------------

    async def _stores(self, where: str = "", params: Sequence[Any] = ()) -> list[Store]:
        rows = await self._db.fetch(f"SELECT data FROM shop_stores {where} ORDER BY id", params)
        return [Store.model_validate_json(r[0]) for r in rows]

    async def stores(self) -> list[Store]:
        return await self._stores()

    async def stores_near(self, latitude: float, longitude: float, *, limit: int = 5) -> list[tuple[Store, float]]:
        """The nearest stores with their great-circle distance in km, nearest first."""
        ranked = sorted(
            ((s, haversine_km(latitude, longitude, s.latitude, s.longitude)) for s in await self._stores()),
            key=lambda pair: (pair[1], pair[0].id),
        )
        return [(s, round(km, 2)) for s, km in ranked[: max(0, limit)]]

    async def stores_in_city(self, city: str) -> list[Store]:
        """Stores in a city by any case of its name, or its Japanese name ('東京' → Tokyo)."""
        return await self._stores("WHERE city_key = ?", (_city_key(city),))

    async def get_store(self, store_id: str) -> Store | None:
        found = await self._stores("WHERE id = ?", (store_id,))
        return found[0] if found else None

    async def cities(self) -> list[str]:
        rows = await self._db.fetch("SELECT DISTINCT city FROM shop_stores ORDER BY city")
        return [r[0] for r in rows]

    async def store_ids(self) -> list[str]:
        rows = await self._db.fetch("SELECT id FROM shop_stores ORDER BY id")
        return [r[0] for r in rows]

    async def stock(self, product_id: str, *, store_ids: Sequence[str] | None = None) -> list[StockRow]:
        """Stock rows of a product (every variant), by store then variant; zero rows included."""
        sql = "SELECT store_id, product_id, variant_id, quantity FROM shop_stock WHERE product_id = ?"
        if store_ids is None:
            rows = await self._db.fetch(sql, (product_id,))
        else:
            rows = await self._fetch_in(
                f"{sql} AND store_id IN ({{ids}})", list(dict.fromkeys(store_ids)), before=(product_id,)
            )
        result = [StockRow(store_id=r[0], product_id=r[1], variant_id=r[2], quantity=int(r[3])) for r in rows]
        return sorted(result, key=lambda r: (r.store_id, r.variant_id))

    # --- coupons ----------------------------------------------------------------------------

    async def get_coupon(self, code: str) -> Coupon | None:
        rows = await self._db.fetch("SELECT data FROM shop_coupons WHERE code_key = ?", (code.strip().upper(),))
        return Coupon.model_validate_json(rows[0][0]) if rows else None

    async def coupons(self) -> list[Coupon]:
        rows = await self._db.fetch("SELECT data FROM shop_coupons ORDER BY code_key")
        return [Coupon.model_validate_json(r[0]) for r in rows]

    async def coupons_for(self, product: Product, *, today: date) -> list[Coupon]:
        """Coupons valid on `today` (expiring today still counts) that apply to the product's category.
        Minimum spends are per order: the cart checks them."""
        rows = await self._db.fetch(
            "SELECT data FROM shop_coupons WHERE expires >= ? ORDER BY code_key", (today.isoformat(),)
        )
        found = [Coupon.model_validate_json(r[0]) for r in rows]
        return [c for c in found if not c.categories or product.category in c.categories]

    # --- carts ------------------------------------------------------------------------------

    async def _load_cart(self, user_id: str, fetch: Fetch, today: date | None) -> tuple[Cart, list[str]]:
        """The cart with current names and prices, and each line's category (for coupons)."""
        rows = await fetch(
            "SELECT i.product_id, i.variant_id, i.quantity, p.data, p.rating, p.review_count "
            "FROM shop_cart_items i JOIN shop_products p ON p.id = i.product_id "
            "WHERE i.user_id = ? ORDER BY i.seq, i.product_id, i.variant_id",
            (user_id,),
        )
        items, categories = [], []
        for product_id, variant_id, quantity, data, rating, review_count in rows:
            product = _product_from_row(data, rating, review_count)
            variant = next((v for v in product.variants if v.id == variant_id), None)
            name = f"{product.name} ({variant.label})" if variant else product.name
            name_ja = (f"{product.name_ja}（{variant.label}）" if variant else product.name_ja) if product.name_ja else ""
            items.append(CartItem(
                product_id=product_id, variant_id=variant_id, name=name, name_ja=name_ja, quantity=int(quantity),
                unit_price=variant.price if variant else product.price,
            ))
            categories.append(product.category)
        cart = Cart(user_id=user_id, items=items)
        coupon_rows = await fetch("SELECT coupon FROM shop_carts WHERE user_id = ?", (user_id,))
        code = coupon_rows[0][0] if coupon_rows else None
        if code:
            found = await fetch("SELECT data FROM shop_coupons WHERE code_key = ?", (code.upper(),))
            coupon = Coupon.model_validate_json(found[0][0]) if found else None
            cart.coupon = coupon.code if coupon else code
            if coupon and (today is None or coupon.expires >= today):
                cart.discount = _discount(coupon, cart.items, categories)
        return cart, categories

    async def get_cart(self, user_id: str, *, today: date | None = None) -> Cart:
        """The user's cart at today's catalog prices. The discount is recomputed from the coupon on
        every read (0 while its minimum spend is not met, or, given `today`, once it has expired)."""
        cart, _ = await self._load_cart(user_id, self._db.fetch, today)
        return cart

    async def _cart_write(self, user_id: str, work: Callable[[Transaction], Awaitable[None]]) -> Cart:
        """Run one cart change as one transaction, holding the cart row's lock throughout."""

        async def write(tx: Transaction) -> None:
            # Touching the cart row first serialises concurrent changes to this cart on PostgreSQL
            # (SQLite's BEGIN IMMEDIATE already serialises every write).
            await tx.execute(
                "INSERT INTO shop_carts (user_id, coupon, updated) VALUES (?, NULL, ?) "
                "ON CONFLICT (user_id) DO UPDATE SET updated = excluded.updated",
                (user_id, time.time()),
            )
            await work(tx)

        await self._db.transaction(write)
        return await self.get_cart(user_id)

    async def _cart_product(self, tx: Transaction, product_id: str, variant_id: str) -> Product:
        rows = await tx.fetch(
            "SELECT data, rating, review_count FROM shop_products WHERE id = ?", (product_id,)
        )
        if not rows:
            raise CartError("cart_no_product", id=product_id)
        product = _product_from_row(*rows[0])
        if variant_id and not any(v.id == variant_id for v in product.variants):
            options = ", ".join(f"{v.id} ({v.label})" for v in product.variants) or "-"
            raise CartError("cart_no_variant", product=product.name, product_ja=product.name_ja or product.name,
                            variant=variant_id, options=options)
        return product

    async def _set_line(self, tx: Transaction, user_id: str, product_id: str, variant_id: str, quantity: int) -> None:
        seq_rows = await tx.fetch("SELECT COALESCE(MAX(seq), 0) FROM shop_cart_items WHERE user_id = ?", (user_id,))
        await tx.execute(
            "INSERT INTO shop_cart_items (user_id, product_id, variant_id, quantity, seq) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (user_id, product_id, variant_id) DO UPDATE SET quantity = excluded.quantity",
            (user_id, product_id, variant_id, quantity, int(seq_rows[0][0]) + 1),
        )

    async def cart_add(self, user_id: str, product_id: str, quantity: int, *, variant_id: str = "") -> Cart:
        """Add `quantity` (1–99) of a product; adds to the line's quantity when it is already in the cart.
        Without `variant_id`, the product itself at its own price (the 'from' price) is added."""
        if not 1 <= quantity <= MAX_QUANTITY:
            raise CartError("cart_quantity", min=1, max=MAX_QUANTITY, quantity=quantity)

        async def work(tx: Transaction) -> None:
            product = await self._cart_product(tx, product_id, variant_id)
            rows = await tx.fetch(
                "SELECT quantity FROM shop_cart_items WHERE user_id = ? AND product_id = ? AND variant_id = ?",
                (user_id, product_id, variant_id),
            )
            have = int(rows[0][0]) if rows else 0
            if have + quantity > MAX_QUANTITY:
                raise CartError("cart_line_full", have=have, product=product.name,
                                product_ja=product.name_ja or product.name, max=MAX_QUANTITY)
            await self._set_line(tx, user_id, product_id, variant_id, have + quantity)

        return await self._cart_write(user_id, work)

    async def cart_set(self, user_id: str, product_id: str, quantity: int, *, variant_id: str = "") -> Cart:
        """Set a line's quantity (0 removes it). Without `variant_id`, a product that is in the cart
        as exactly one variant means that line."""
        if not 0 <= quantity <= MAX_QUANTITY:
            raise CartError("cart_quantity", min=0, max=MAX_QUANTITY, quantity=quantity)

        async def work(tx: Transaction) -> None:
            target = variant_id
            if not target:
                lines = await tx.fetch(
                    "SELECT variant_id FROM shop_cart_items WHERE user_id = ? AND product_id = ?",
                    (user_id, product_id),
                )
                if len(lines) == 1:
                    target = lines[0][0]
                elif len(lines) > 1:
                    which = ", ".join(sorted(row[0] or "-" for row in lines))
                    raise CartError("cart_several_variants", id=product_id, variants=which)
            if quantity == 0:
                await tx.execute(
                    "DELETE FROM shop_cart_items WHERE user_id = ? AND product_id = ? AND variant_id = ?",
                    (user_id, product_id, target),
                )
                return
            await self._cart_product(tx, product_id, target)
            await self._set_line(tx, user_id, product_id, target, quantity)

        return await self._cart_write(user_id, work)

    async def cart_remove(self, user_id: str, product_id: str) -> Cart:
        """Remove every line of a product; CartError when it is not in the cart."""

        async def work(tx: Transaction) -> None:
            rows = await tx.fetch(
                "SELECT COUNT(*) FROM shop_cart_items WHERE user_id = ? AND product_id = ?", (user_id, product_id)
            )
            if not int(rows[0][0]):
                raise CartError("cart_not_in_cart", id=product_id)
            await tx.execute(
                "DELETE FROM shop_cart_items WHERE user_id = ? AND product_id = ?", (user_id, product_id)
            )

        return await self._cart_write(user_id, work)

    async def cart_apply_coupon(self, user_id: str, code: str, *, today: date) -> Cart:
        """Apply a coupon to the cart, replacing any other (one per order). CartError when it is
        unknown, expired, or the cart does not qualify; the cart is then unchanged."""

        async def work(tx: Transaction) -> None:
            coupon = await self._qualifying_coupon(user_id, code, today, tx.fetch)
            await tx.execute("UPDATE shop_carts SET coupon = ? WHERE user_id = ?", (coupon.code, user_id))

        await self._cart_write(user_id, work)
        return await self.get_cart(user_id, today=today)

    async def check_coupon(self, user_id: str, code: str, *, today: date) -> Coupon:
        """The coupon, when the cart qualifies for it today; the CartError `cart_apply_coupon` would
        raise otherwise. Nothing is written: a change that cannot happen is said before it is asked."""
        return await self._qualifying_coupon(user_id, code, today, self._db.fetch)

    async def _qualifying_coupon(self, user_id: str, code: str, today: date, fetch: Fetch) -> Coupon:
        found = await fetch("SELECT data FROM shop_coupons WHERE code_key = ?", (code.strip().upper(),))
        if not found:
            raise CartError("cart_no_coupon", code=code.strip())
        coupon = Coupon.model_validate_json(found[0][0])
        if coupon.expires < today:
            raise CartError("cart_coupon_expired", code=coupon.code, date=coupon.expires.isoformat())
        cart, categories = await self._load_cart(user_id, fetch, today)
        if not cart.items:
            raise CartError("cart_empty_for_coupon")
        eligible = _eligible_subtotal(coupon, cart.items, categories)
        if coupon.categories and not any(c in coupon.categories for c in categories):
            raise CartError("cart_coupon_categories", code=coupon.code, categories=", ".join(coupon.categories),
                            categories_ja=categories_text(coupon.categories, "ja"))
        if eligible < coupon.min_spend:
            raise CartError("cart_min_spend_on" if coupon.categories else "cart_min_spend", code=coupon.code,
                            min=coupon.min_spend, eligible=eligible, currency=cart.currency,
                            min_text=money(coupon.min_spend, cart.currency), eligible_text=money(eligible, cart.currency),
                            categories=", ".join(coupon.categories),
                            categories_ja=categories_text(coupon.categories, "ja"))
        return coupon

    async def cart_remove_coupon(self, user_id: str) -> Cart:
        async def work(tx: Transaction) -> None:
            await tx.execute("UPDATE shop_carts SET coupon = NULL WHERE user_id = ?", (user_id,))

        return await self._cart_write(user_id, work)

    async def cart_clear(self, user_id: str) -> None:
        """Empty the cart and drop its coupon."""

        async def write(tx: Transaction) -> None:
            await tx.execute("DELETE FROM shop_cart_items WHERE user_id = ?", (user_id,))
            await tx.execute("DELETE FROM shop_carts WHERE user_id = ?", (user_id,))

        await self._db.transaction(write)

    # --- user preferences -------------------------------------------------------------------

    async def get_prefs(self, user_id: str) -> UserPrefs:
        rows = await self._db.fetch("SELECT data FROM shop_prefs WHERE user_id = ?", (user_id,))
        return UserPrefs.model_validate_json(rows[0][0]) if rows else UserPrefs(user_id=user_id)

    async def set_prefs(self, prefs: UserPrefs) -> None:
        async def write(tx: Transaction) -> None:
            await tx.execute(
                _upsert("shop_prefs", ("user_id", "data"), ("user_id",)), (prefs.user_id, prefs.model_dump_json())
            )

        await self._db.transaction(write)

    # --- reviews ----------------------------------------------------------------------------

    async def upsert_reviews(self, reviews: Sequence[Review]) -> tuple[int, int]:
        """Insert or update review texts: (changed, unchanged). A changed review gets a new hash, so it
        differs from its embedded hash until it is embedded again (any field counts: the vector
        index keeps rating and aspects beside each vector)."""
        unique = _unique(reviews, lambda r: r.id)
        if not unique:
            return 0, 0
        # Hashing thousands of reviews (a seed, an ingest) is CPU work: off the event loop.
        hashed = await asyncio.to_thread(lambda: [(r, _content_hash(r)) for r in unique])
        changed_count = 0

        async def write(tx: Transaction) -> None:
            nonlocal changed_count
            changed = await self._changed(tx, "shop_reviews", "id", [(r.id, h) for r, h in hashed])
            rows = [
                (r.id, r.product_id, r.rating, r.text, r.lang, r.created.isoformat() if r.created else None,
                 json.dumps(r.aspects, ensure_ascii=False), h)
                for r, h in hashed if r.id in changed
            ]
            if rows:
                await tx.executemany(_UPSERT_REVIEW, rows)
            changed_count = len(rows)

        await self._db.transaction(write)
        return changed_count, len(reviews) - changed_count

    async def reviews_to_embed(
        self, product_ids: Sequence[str] | None = None, *, limit: int = 512
    ) -> list[tuple[Review, str]]:
        """Reviews whose hash differs from the hash they were last embedded with, with that hash; by id."""
        if limit <= 0:
            return []
        base = (
            "SELECT id, product_id, rating, text, lang, created, aspects, hash FROM shop_reviews "
            "WHERE (embedded_hash IS NULL OR embedded_hash <> hash)"
        )
        if product_ids is None:
            rows = await self._db.fetch(f"{base} ORDER BY id LIMIT ?", (limit,))
        else:
            rows = await self._fetch_in(f"{base} AND product_id IN ({{ids}}) ORDER BY id LIMIT ?",
                                        list(dict.fromkeys(product_ids)), (limit,))
            rows = sorted(rows, key=lambda r: r[0])[:limit]
        return [(_review_from_row(r), r[7]) for r in rows]

    async def mark_embedded(self, items: Sequence[tuple[str, str]]) -> None:
        """Record (review id, hash) as embedded — only while that hash is still the review's own, so a
        review edited meanwhile stays due."""
        if not items:
            return

        async def write(tx: Transaction) -> None:
            await tx.executemany(
                "UPDATE shop_reviews SET embedded_hash = ? WHERE id = ? AND hash = ?",
                [(h, rid, h) for rid, h in items],
            )

        await self._db.transaction(write)

    async def reset_embedded(self) -> None:
        """Forget every embedded mark (the vector index was rebuilt): every review is due again."""

        async def write(tx: Transaction) -> None:
            await tx.execute("UPDATE shop_reviews SET embedded_hash = NULL")

        await self._db.transaction(write)

    async def get_reviews(self, ids: Sequence[str]) -> list[Review]:
        """The reviews with these ids, in the order of `ids`; unknown ids are left out."""
        rows = await self._fetch_in(
            "SELECT id, product_id, rating, text, lang, created, aspects FROM shop_reviews WHERE id IN ({ids})",
            list(dict.fromkeys(ids)),
        )
        found = {r[0]: _review_from_row(r) for r in rows}
        return [found[i] for i in ids if i in found]

    async def review_count(self, product_id: str | None = None) -> int:
        if product_id is None:
            rows = await self._db.fetch("SELECT COUNT(*) FROM shop_reviews")
        else:
            rows = await self._db.fetch("SELECT COUNT(*) FROM shop_reviews WHERE product_id = ?", (product_id,))
        return int(rows[0][0])

    async def update_ratings(self) -> int:
        """Set each reviewed product's rating (mean, one decimal) and review_count from its reviews;
        products without reviews keep the catalog's figures. Returns how many products have reviews."""

        async def write(tx: Transaction) -> None:
            await tx.execute(_RATINGS)

        await self._db.transaction(write)
        rows = await self._db.fetch(
            "SELECT COUNT(DISTINCT r.product_id) FROM shop_reviews r JOIN shop_products p ON p.id = r.product_id"
        )
        return int(rows[0][0])


def _match_quality(term: str, tokens: Sequence[str]) -> float:
    """1 for an exact match; less for a partial one, the more so the less of the longer side it covers
    ('ワイヤレスイヤホン' inside the query '安いワイヤレスイヤホン' beats 'イヤホン' inside it)."""
    if term in tokens:
        return 1.0
    best = 0.0
    for token in tokens:
        if term.startswith(token) or (_is_cjk(token) and token in term):
            best = max(best, len(token) / len(term))
        elif _is_cjk(term) and term in token:
            best = max(best, len(term) / len(token))
    return _PARTIAL * best


def _eligible_subtotal(coupon: Coupon, items: Sequence[CartItem], categories: Sequence[str]) -> float:
    """The spend a coupon applies to: every line, or the lines in its categories."""
    return round(
        sum(i.unit_price * i.quantity for i, c in zip(items, categories, strict=True)
            if not coupon.categories or c in coupon.categories),
        2,
    )


def _discount(coupon: Coupon, items: Sequence[CartItem], categories: Sequence[str]) -> float:
    """A percent of the eligible lines, or an amount capped at them; 0 below the minimum spend."""
    eligible = _eligible_subtotal(coupon, items, categories)
    if eligible <= 0 or eligible < coupon.min_spend:
        return 0.0
    if coupon.kind == "percent":
        return round(eligible * coupon.value / 100, 2)
    return round(min(coupon.value, eligible), 2)
