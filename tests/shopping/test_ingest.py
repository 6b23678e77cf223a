"""Catalog and review ingestion: bad lines are reported by number and skipped, the rest load, and an
unchanged file loads nothing the second time. JSONL, CSV and whole directories; SQLite."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agents.shopping import ingest
from agents.shopping.catalog import CatalogStore
from agents.shopping.demo import demo_catalog
from agents.shopping.ingest import (
    IngestError,
    IngestReport,
    ingest_catalog,
    ingest_reviews_records,
    read_records,
)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[CatalogStore]:
    opened = await CatalogStore.open(f"sqlite:///{(tmp_path / 'shop.db').as_posix()}")
    try:
        yield opened
    finally:
        await opened.close()


def _product(pid: str, **fields: Any) -> dict[str, Any]:
    return {"kind": "product", "id": pid, "name": f"Product {pid}", "category": "audio", "price": 25.0, **fields}


def _store(sid: str) -> dict[str, Any]:
    return {"kind": "store", "id": sid, "name": f"Store {sid}", "city": "Tokyo", "latitude": 35.66, "longitude": 139.7}


def _jsonl(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line, ensure_ascii=False) for line in lines) + "\n",
        encoding="utf-8",
    )
    return path


MIXED = [
    _product("p1", keywords=["イヤホン", "earbuds"], variants=[{"id": "p1-black", "label": "Black", "price": 25.0}]),
    _product("p2"),
    "{not json",  # line 3
    _product("p3", price=-1),  # line 4
    "",  # line 5: blank, skipped
    {"kind": "widget", "id": "w"},  # line 6
    _store("s1"),
    {"kind": "stock", "store_id": "s1", "product_id": "p1", "variant_id": "p1-black", "quantity": 4},
    {"kind": "stock", "store_id": "s1", "product_id": "nope", "quantity": 1},  # line 9
    {"kind": "stock", "store_id": "s9", "product_id": "p2", "quantity": 1},  # line 10
    {"kind": "coupon", "coupon_kind": "amount", "code": "HI5", "value": 5, "expires": "2030-01-01"},
    {"kind": "coupon", "code": "HI10", "value": 10, "expires": "2030-01-01"},  # line 12: percent or amount?
    {"kind": "stock", "store_id": "s1", "product_id": "p1", "quantity": 2},  # line 13: p1 has variants
    {"kind": "stock", "store_id": "s1", "product_id": "p2", "quantity": 0},
]


async def test_jsonl_bad_lines_are_reported_by_number_and_the_rest_load(store: CatalogStore, tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "feed.jsonl", MIXED)
    report = await ingest_catalog(store, path)
    assert [line for line, _ in report.bad] == [3, 4, 6, 9, 10, 12, 13]
    reasons = dict(report.bad)
    assert reasons[3].startswith("invalid JSON")
    assert reasons[4] == "price: Input should be greater than or equal to 0"
    assert reasons[6].startswith("unknown kind 'widget'")
    assert reasons[9] == "product_id: unknown product 'nope'"
    assert reasons[10] == "store_id: unknown store 's9'"
    assert reasons[12] == "coupon_kind: Field required (percent or amount)"
    assert reasons[13] == "variant_id: p1 has variants; name one"
    assert (report.loaded, report.unchanged) == (6, 0)  # p1, p2, s1, HI5, two stock rows
    assert [p.id for p in await store.search_products("イヤホン")] == ["p1"]
    assert [r.quantity for r in await store.stock("p1")] == [4]
    summary = report.summary()
    assert summary.startswith(
        "loaded 6, unchanged 0, skipped 7 bad line(s): line 3: invalid JSON: Expecting property name enclosed in "
        "double quotes (column 2); line 4: price: Input should be greater than or equal to 0; line 6: "
    )
    assert summary.endswith("… and 2 more")
    coupon = await store.get_coupon("hi5")
    assert coupon is not None and (coupon.kind, coupon.value) == ("amount", 5)


async def test_re_ingesting_the_same_file_changes_nothing(store: CatalogStore, tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "feed.jsonl", MIXED)
    first = await ingest_catalog(store, path)
    second = await ingest_catalog(store, path)
    assert (second.loaded, second.unchanged) == (0, first.loaded)
    assert second.bad == first.bad
    records = [r for r in MIXED if isinstance(r, dict)]
    records[1] = _product("p2", price=30.0)  # one product changed
    _jsonl(path, records)
    third = await ingest_catalog(store, path)
    assert third.loaded == 1
    p2 = await store.get_product("p2")
    assert p2 is not None and p2.price == 30.0


async def test_csv_with_lists_as_json_or_semicolons(store: CatalogStore, tmp_path: Path) -> None:
    path = tmp_path / "products.csv"  # the name says the kind
    path.write_text(
        "id,name,category,price,keywords,specs,variants,fulfillment,description\n"
        'e1,Kumo Buds,audio,49.99,"[""ワイヤレスイヤホン"", ""earbuds""]",battery_hours=8; noise_cancelling=active,'
        ',ship:3:0; pickup:0:0,"two\nlines"\n'
        "\n"
        "e2,Sound Pods,audio,not-a-price,earbuds;wireless,,,,\n"
        "e3,Trail Shoe,shoes,89,running shoes;ランニングシューズ,,e3-9:US 9:89; e3-10:US 10:89,,\n"
        "e4,Bad Specs,audio,10,,,\"[{\"\"id\"\": 1\",,\n"
        "e5,Weird,groceries,10,,,,,\n",
        encoding="utf-8",
    )
    records = list(read_records(path))
    assert [line for line, _, _ in records] == [2, 5, 6, 7, 8]  # e1 spans lines 2-3; line 4 is blank
    report = await ingest_catalog(store, path)
    assert [line for line, _ in report.bad] == [5, 7, 8]
    assert dict(report.bad)[5].startswith("price: Input should be a valid number")
    assert dict(report.bad)[7].startswith("variants: not valid JSON")
    assert dict(report.bad)[8].startswith("category: Value error, unknown category 'groceries'")
    assert (report.loaded, report.unchanged) == (2, 0)
    e1 = await store.get_product("e1")
    assert e1 is not None
    assert e1.keywords == ["ワイヤレスイヤホン", "earbuds"]
    assert e1.specs == {"battery_hours": "8", "noise_cancelling": "active"}
    assert [(f.kind, f.days) for f in e1.fulfillment] == [("ship", 3), ("pickup", 0)]
    assert e1.description == "two\nlines"
    e3 = await store.get_product("e3")
    assert e3 is not None and [(v.id, v.label, v.price) for v in e3.variants] == [
        ("e3-9", "US 9", 89.0), ("e3-10", "US 10", 89.0)]
    assert [p.id for p in await store.search_products("ランニングシューズ")] == ["e3"]
    again = await ingest_catalog(store, path)
    assert (again.loaded, again.unchanged) == (0, 2)


async def test_csv_with_a_kind_column(store: CatalogStore, tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    path.write_text(
        "kind,id,name,city,latitude,longitude,category,price,code,value,expires,categories\n"
        "store,s1,Shibuya,Tokyo,35.66,139.70,,,,,,\n"
        "product,p1,Kettle,,,,kitchen,30,,,,\n"
        "percent,,,,,,,,KITCHEN5,5,2030-01-01,kitchen;home\n"  # a coupon's own kind says coupon
        "coupon,,,,,,,,HALF,50,2030-01-01,\n"
        ",p2,Nothing,,,,kitchen,30,,,,\n",
        encoding="utf-8",
    )
    report = await ingest_catalog(store, path)
    assert report.bad == [
        (5, "coupon_kind: Field required (percent or amount)"),
        (6, "no kind; one of product, store, stock, coupon"),
    ]
    assert report.loaded == 3
    coupon = await store.get_coupon("kitchen5")
    assert coupon is not None and (coupon.kind, coupon.categories) == ("percent", ["kitchen", "home"])
    assert [s.id for s in await store.stores_in_city("tokyo")] == ["s1"]


async def test_a_directory_ingests_every_file_in_name_order(store: CatalogStore, tmp_path: Path) -> None:
    drop = tmp_path / "drop"
    drop.mkdir()
    (drop / "coupons.csv").write_text(
        "code,kind,value,min_spend,categories,expires\nSAVE5,amount,5,20,,2030-01-01\nBAD,percent,95,0,,2030-01-01\n",
        encoding="utf-8",
    )
    _jsonl(drop / "products.jsonl", [_product("p1"), _product("p2", category="shoes", price=60)])
    # stock.csv sorts before stores.csv: stock is checked once everything else is in.
    (drop / "stock.csv").write_text(
        "store_id,product_id,quantity\ns1,p1,3\ns1,p2,0\ns2,p1,1\n", encoding="utf-8"
    )
    _jsonl(drop / "stores.jsonl", [_store("s1")])
    (drop / "notes.txt").write_text("ignored", encoding="utf-8")
    report = await ingest_catalog(store, drop)
    assert report.bad == [
        (3, "coupons.csv: Value error, a percent coupon takes at most 90 %"),
        (4, "stock.csv: store_id: unknown store 's2'"),
    ]
    assert (report.loaded, report.unchanged) == (6, 0)
    again = await ingest_catalog(store, drop)
    assert (again.loaded, again.unchanged, len(again.bad)) == (0, 6, 2)
    assert "loaded 0, unchanged 6, skipped 2 bad line(s): line 3: coupons.csv:" in again.summary()


async def test_the_demo_catalog_round_trips_through_jsonl(store: CatalogStore, tmp_path: Path) -> None:
    catalog = demo_catalog()
    rows = [{"kind": "product", **p.model_dump(mode="json")} for p in catalog.products]
    rows += [{"kind": "store", **s.model_dump(mode="json")} for s in catalog.stores]
    rows += [{"kind": "stock", **r.model_dump(mode="json")} for r in catalog.stock]
    rows += [{"kind": "coupon", **c.model_dump(mode="json")} for c in catalog.coupons]
    path = _jsonl(tmp_path / "catalog.jsonl", rows)
    report = await ingest_catalog(store, path)
    assert report.bad == [] and report.loaded == len(rows)
    assert await store.get_product(catalog.products[0].id) == catalog.products[0]
    again = await ingest_catalog(store, path)
    assert (again.loaded, again.unchanged) == (0, len(rows))


# --- refusing files -----------------------------------------------------------------------


async def test_unreadable_inputs_are_refused(store: CatalogStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(IngestError, match="no such file"):
        await ingest_catalog(store, tmp_path / "missing.jsonl")
    binary = tmp_path / "products.csv"
    binary.write_bytes(b"id,name\n\x00\x01\x02")
    with pytest.raises(IngestError, match="binary"):
        await ingest_catalog(store, binary)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"kind": "product", "name": "caf\xe9"}\n' * 3)
    with pytest.raises(IngestError, match="not UTF-8"):
        await ingest_catalog(store, latin)
    other = tmp_path / "feed.xml"
    other.write_text("<feed/>", encoding="utf-8")
    with pytest.raises(IngestError, match=r"not a \.jsonl or \.csv"):
        await ingest_catalog(store, other)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(IngestError, match=r"no \.jsonl or \.csv files"):
        await ingest_catalog(store, empty)
    big = _jsonl(tmp_path / "big.jsonl", [_product("p1")] * 20)
    monkeypatch.setattr(ingest, "MAX_FILE_BYTES", 1024)
    with pytest.raises(IngestError, match=r"big.jsonl: 1\.\d KB is over the 1\.0 KB limit"):
        await ingest_catalog(store, big)
    assert await store.product_count() == 0


def test_read_records_reports_json_errors_by_line(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "x.jsonl", [{"a": 1}, "[1, 2]", "", "{", "nul"])
    assert list(read_records(path)) == [
        (1, {"a": 1}, None),
        (2, None, "expected a JSON object"),
        (4, None, "invalid JSON: Expecting property name enclosed in double quotes (column 2)"),
        (5, None, "invalid JSON: Expecting value (column 1)"),
    ]
    bom = tmp_path / "stores.jsonl"
    bom.write_bytes("\ufeff".encode() + json.dumps({"id": "s"}).encode() + b"\r\n")
    assert list(read_records(bom)) == [(1, {"id": "s", "kind": "store"}, None)]


async def test_reasons_never_echo_long_input(store: CatalogStore, tmp_path: Path) -> None:
    long = "x" * 500
    path = _jsonl(tmp_path / "feed.jsonl", [
        _product("p1", category=long),
        {"kind": long},
        _product("p2", name=long),
        *[_product(f"n{i}", price="free") for i in range(30)],
    ])
    report = await ingest_catalog(store, path)
    assert len(report.bad) == 33
    for _, reason in report.bad:
        assert "x" * 81 not in reason and len(reason) <= 200
    summary = report.summary()
    assert len(summary) < 1200 and summary.endswith("… and 28 more")


def test_a_report_without_bad_lines_says_so_briefly() -> None:
    assert IngestReport(loaded=12, unchanged=3).summary() == "loaded 12, unchanged 3"
    assert IngestReport(2, 0, [(4, "price: Input should be greater than or equal to 0")]).summary() == (
        "loaded 2, unchanged 0, skipped 1 bad line(s): line 4: price: Input should be greater than or equal to 0"
    )


# --- reviews ------------------------------------------------------------------------------


async def test_reviews_load_into_sql_and_wait_for_embedding(store: CatalogStore, tmp_path: Path) -> None:
    catalog = _jsonl(tmp_path / "products.jsonl", [_product("p1", rating=1.0), _product("p2")])
    await ingest_catalog(store, catalog)
    reviews = [
        {"id": "r1", "product_id": "p1", "rating": 5, "text": "Great sound.", "aspects": ["sound"]},
        {"id": "r2", "product_id": "p1", "rating": 4, "text": "電池が長持ち。", "lang": "ja", "created": "2025-11-02"},
        {"id": "r3", "product_id": "p1", "rating": 6, "text": "Too good."},  # line 3
        {"id": "r4", "product_id": "ghost", "rating": 3, "text": "Who?"},  # line 4
        {"kind": "product", "id": "r5"},  # line 5
    ]
    path = _jsonl(tmp_path / "reviews.jsonl", reviews)
    report = await ingest_reviews_records(store, path)
    assert (report.loaded, report.unchanged) == (2, 0)
    assert report.bad == [
        (3, "rating: Input should be less than or equal to 5"),
        (4, "product_id: unknown product 'ghost'"),
        (5, "expected a review, not 'product'"),
    ]
    assert [r.id for r, _ in await store.reviews_to_embed()] == ["r1", "r2"]
    p1 = await store.get_product("p1")
    assert p1 is not None and (p1.rating, p1.review_count) == (4.5, 2)
    again = await ingest_reviews_records(store, path)
    assert (again.loaded, again.unchanged) == (0, 2)
    # A changed text needs embedding again; the unchanged one does not.
    due = await store.reviews_to_embed()
    await store.mark_embedded([(r.id, h) for r, h in due])
    reviews[0]["text"] = "Great sound, weak bass."
    _jsonl(path, reviews)
    third = await ingest_reviews_records(store, path)
    assert (third.loaded, third.unchanged) == (1, 1)
    assert [(r.id, r.text) for r, _ in await store.reviews_to_embed()] == [("r1", "Great sound, weak bass.")]


async def test_reviews_from_csv(store: CatalogStore, tmp_path: Path) -> None:
    await ingest_catalog(store, _jsonl(tmp_path / "p.jsonl", [_product("p1")]))
    path = tmp_path / "reviews.csv"
    path.write_text(
        "id,product_id,rating,text,aspects\nr1,p1,4,Comfortable fit.,fit;comfort\nr2,p1,two,Meh,\n", encoding="utf-8"
    )
    report = await ingest_reviews_records(store, path)
    assert report.loaded == 1 and [line for line, _ in report.bad] == [3]
    assert (await store.get_reviews(["r1"]))[0].aspects == ["fit", "comfort"]
