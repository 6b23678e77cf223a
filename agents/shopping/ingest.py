"""Catalog and review ingestion from JSONL or CSV files: validate every record, load the good ones.

A feed is never all-or-nothing: each record is validated with the shop's models; a bad one is
reported with its line number and a short reason (never a long echo of its content) and skipped,
and the rest are upserted in batches. Upserts compare content hashes, so re-ingesting an unchanged
file writes nothing and reports "loaded 0, unchanged N" — the daily drop can be replayed safely.

Catalog records say what they are with `"kind": "product" | "store" | "stock" | "coupon"`; in a CSV,
a `kind` column, or the file's name (products.csv, stores.csv, stock.csv, coupons.csv). A coupon has
a kind of its own (percent or amount), so `"kind": "percent"` or `"kind": "amount"` also says
"coupon", and a record with `"kind": "coupon"` gives the coupon's kind as `coupon_kind`. Stock rows
are checked against the stores and products (and their variants) after those are loaded, so one
file or one directory can carry all four kinds in any order. Reviews are loaded into SQL only;
embedding them is the review index's job (agents/shopping/reviews.py).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from agents.shopping.catalog import CatalogStore
from agents.shopping.models import Coupon, Product, Review, StockRow, Store

MAX_FILE_BYTES = 200 * 1024 * 1024
BATCH = 500  # records per upsert (one transaction each)
SUFFIXES = (".jsonl", ".csv")
KINDS: dict[str, type[BaseModel]] = {"product": Product, "store": Store, "stock": StockRow, "coupon": Coupon}
_FILE_KINDS = {
    "products": "product", "product": "product", "stores": "store", "store": "store", "stock": "stock",
    "inventory": "stock", "coupons": "coupon", "coupon": "coupon", "reviews": "review", "review": "review",
}
_COUPON_KINDS = ("percent", "amount")
_MAX_ECHO = 80  # longest piece of a record's input a reason may quote
_MAX_REASON = 200
_SUMMARY_BAD = 5  # bad lines a summary names

# CSV cells of these fields hold lists or objects: JSON, or the `;`-separated shorthand.
_LIST_FIELDS = frozenset({"keywords", "categories", "aspects"})
_DICT_FIELDS = frozenset({"specs"})


class IngestError(Exception):
    """The input cannot be ingested at all (missing, too large, binary, unsupported); nothing was loaded."""


@dataclass
class IngestReport:
    loaded: int = 0  # rows new or changed
    unchanged: int = 0  # valid rows identical to what was stored
    bad: list[tuple[int, str]] = field(default_factory=list)  # (line, reason), skipped

    def summary(self) -> str:
        """One line for logs and admins: counts, then the first few bad lines."""
        text = f"loaded {self.loaded}, unchanged {self.unchanged}"
        if not self.bad:
            return text
        shown = "; ".join(f"line {line}: {reason}" for line, reason in self.bad[:_SUMMARY_BAD])
        more = f"; … and {len(self.bad) - _SUMMARY_BAD} more" if len(self.bad) > _SUMMARY_BAD else ""
        return f"{text}, skipped {len(self.bad)} bad line(s): {shown}{more}"

    def merge(self, other: IngestReport) -> None:
        self.loaded += other.loaded
        self.unchanged += other.unchanged
        self.bad.extend(other.bad)


# --- reading ---------------------------------------------------------------------------------


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _human(size: int) -> str:
    return f"{size / 2**20:.0f} MB" if size >= 2**20 else f"{size / 1024:.1f} KB"


def _check_file(path: Path) -> None:
    if not path.is_file():
        raise IngestError(f"{path.name}: no such file")
    if path.suffix.lower() not in SUFFIXES:
        raise IngestError(f"{path.name}: not a .jsonl or .csv file")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise IngestError(f"{path.name}: {_human(size)} is over the {_human(MAX_FILE_BYTES)} limit")
    with path.open("rb") as handle:
        head = handle.read(8192)
    if b"\x00" in head:
        raise IngestError(f"{path.name}: looks binary (NUL bytes); expected UTF-8 text")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut at the end of the sample
            raise IngestError(f"{path.name}: not UTF-8 text") from exc


def _file_kind(path: Path) -> str | None:
    return _FILE_KINDS.get(path.stem.lower())


def _lines(path: Path) -> Iterator[str]:
    """The file's lines, decoding errors turned into an IngestError that names the line."""
    number = 0
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            for line in handle:
                number += 1
                yield line
    except UnicodeDecodeError as exc:
        raise IngestError(f"{path.name}: not UTF-8 text (after line {number})") from exc


def _split_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(";") if part.strip()]


def _csv_cell(name: str, value: str) -> Any:
    """A CSV cell as the model wants it: JSON for lists and objects, or the `;` shorthand."""
    text = value.strip()
    if name in _LIST_FIELDS | _DICT_FIELDS | {"variants", "fulfillment"} and text[:1] in "[{":
        return json.loads(text)
    if name in _LIST_FIELDS:
        return _split_list(text)
    if name in _DICT_FIELDS:  # "battery_hours=8; noise_cancelling=active"
        pairs = [part.partition("=") for part in _split_list(text)]
        return {k.strip(): v.strip() for k, sep, v in pairs if sep}
    if name == "variants":  # "id:label:price; …"
        variants = []
        for part in _split_list(text):
            vid, _, rest = part.partition(":")
            label, _, price = rest.rpartition(":")
            variants.append({"id": vid.strip(), "label": label.strip(), "price": price.strip()})
        return variants
    if name == "fulfillment":  # "ship:3:0; pickup:0:0"
        options = []
        for part in _split_list(text):
            bits = [b.strip() for b in part.split(":")]
            option: dict[str, Any] = {"kind": bits[0], "days": bits[1] if len(bits) > 1 else 0}
            option["fee"] = bits[2] if len(bits) > 2 else 0
            options.append(option)
        return options
    return text


def _read_jsonl(path: Path, kind: str | None) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    for number, line in enumerate(_lines(path), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line.strip())
        except json.JSONDecodeError as exc:
            yield number, None, f"invalid JSON: {exc.msg} (column {exc.colno})"
            continue
        if not isinstance(record, dict):
            yield number, None, "expected a JSON object"
            continue
        if kind and "kind" not in record:
            record["kind"] = kind
        yield number, record, None


def _read_csv(path: Path, kind: str | None) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    reader = csv.reader(_lines(path))
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        yield 1, None, f"bad CSV header: {exc}"
        return
    names = [h.strip().lower() for h in header]
    end = reader.line_num  # the physical line the header ended on
    while True:
        start = end + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield reader.line_num, None, _clip(f"bad CSV: {exc}", _MAX_REASON)
            end = reader.line_num
            continue
        end = reader.line_num
        if not any(cell.strip() for cell in row):
            continue  # a blank line
        if len(row) > len(names):
            yield start, None, f"{len(row)} fields, the header has {len(names)}"
            continue
        record: dict[str, Any] = {}
        try:
            for name, cell in zip(names, row, strict=False):
                if name and cell.strip():
                    record[name] = _csv_cell(name, cell)
        except (json.JSONDecodeError, ValueError) as exc:
            yield start, None, _clip(f"{name}: not valid JSON ({exc})", _MAX_REASON)
            continue
        if kind and "kind" not in record:
            record["kind"] = kind
        yield start, record, None


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """(line number, record, error) for each record of a .jsonl or .csv file; exactly one of record
    and error is None. Blank lines are skipped; the record's kind comes from its own `kind` field,
    else from the file's name (products.csv → product). Raises IngestError for a file that cannot
    be read at all (missing, over 200 MB, binary, unsupported suffix)."""
    _check_file(path)
    kind = _file_kind(path)
    if path.suffix.lower() == ".jsonl":
        yield from _read_jsonl(path, kind)
    else:
        yield from _read_csv(path, kind)


def _files(path: Path) -> list[Path]:
    """The file, or every .jsonl/.csv file in the directory in name order."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES)
        if not files:
            raise IngestError(f"{path.name}: no .jsonl or .csv files")
        return files
    if not path.exists():
        raise IngestError(f"{path.name}: no such file or directory")
    return [path]


# --- validation ------------------------------------------------------------------------------


def _reason(exc: ValidationError) -> str:
    """The first error of a validation, as 'field: message', quoting at most 80 characters of input."""
    errors = exc.errors(include_url=False)
    if not errors:
        return "invalid record"
    first = errors[0]
    message = str(first.get("msg", "invalid"))
    value = first.get("input")
    if value is not None and not isinstance(value, dict | list):
        # Validators may echo the input as given, stripped or lower-cased, quoted or not.
        text = str(value)
        forms = {text, text.strip(), text.strip().lower()}
        for shown in sorted(forms | {repr(f) for f in forms}, key=len, reverse=True):
            if len(shown) > _MAX_ECHO and shown in message:
                message = message.replace(shown, _clip(shown, _MAX_ECHO))
    location = ".".join(str(part) for part in first.get("loc", ()))
    extra = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return _clip(f"{location}: {message}{extra}" if location else f"{message}{extra}", _MAX_REASON)


def _validate(model: type[BaseModel], record: dict[str, Any]) -> tuple[BaseModel | None, str | None]:
    try:
        return model.model_validate(record), None
    except ValidationError as exc:
        return None, _reason(exc)


class _Batcher:
    """Collects valid records of one kind and upserts them BATCH at a time, counting the outcome."""

    def __init__(self, upsert: Callable[[Sequence[Any]], Any], report: IngestReport):
        self._upsert = upsert
        self._report = report
        self.pending: list[Any] = []

    async def add(self, record: Any) -> None:
        self.pending.append(record)
        if len(self.pending) >= BATCH:
            await self.flush()

    async def flush(self) -> None:
        if not self.pending:
            return
        batch, self.pending = self.pending, []
        changed = await self._upsert(batch)
        if isinstance(changed, tuple):  # upsert_reviews: (changed, unchanged)
            changed = changed[0]
        self._report.loaded += changed
        self._report.unchanged += len(batch) - changed


async def ingest_catalog(store: CatalogStore, path: Path) -> IngestReport:
    """Load products, stores, stock and coupons from a file or a directory of files. Bad records
    are reported (line, reason — prefixed with the file's name when there are several files) and
    skipped; stock naming an unknown store, product or variant is bad too."""
    files = _files(path)
    for file in files:
        _check_file(file)  # refuse before loading anything
    report = IngestReport()
    batchers = {
        "product": _Batcher(store.upsert_products, report),
        "store": _Batcher(store.upsert_stores, report),
        "coupon": _Batcher(store.upsert_coupons, report),
    }
    stock: list[tuple[int, str, StockRow]] = []  # checked once every product and store is in
    for file in files:
        prefix = f"{file.name}: " if len(files) > 1 else ""
        for line, record, error in read_records(file):
            if record is None:
                report.bad.append((line, f"{prefix}{error}"))
                continue
            kind = _catalog_kind(record)
            model = KINDS.get(kind)
            if model is None:
                why = f"unknown kind {_clip(repr(kind), _MAX_ECHO)}" if kind else "no kind"
                report.bad.append((line, f"{prefix}{why}; one of {', '.join(KINDS)}"))
                continue
            if kind == "coupon" and "kind" not in record:
                report.bad.append((line, f"{prefix}coupon_kind: Field required (percent or amount)"))
                continue
            valid, error = _validate(model, record)
            if valid is None:
                report.bad.append((line, f"{prefix}{error}"))
            elif isinstance(valid, StockRow):
                stock.append((line, prefix, valid))
            else:
                await batchers[kind].add(valid)
    for batcher in batchers.values():
        await batcher.flush()
    await _ingest_stock(store, stock, report)  # (upsert_products keeps reviewed products' ratings)
    _sort_bad(report, several=len(files) > 1)
    return report


def _catalog_kind(record: dict[str, Any]) -> str:
    """Take the record's kind out of it; a coupon's own kind (percent/amount) goes back in."""
    kind = str(record.pop("kind", "") or "").strip().lower()
    if kind in _COUPON_KINDS:
        record["kind"] = kind
        return "coupon"
    if kind == "coupon":
        coupon_kind = record.pop("coupon_kind", None)
        if coupon_kind is not None:
            record["kind"] = coupon_kind
    return kind


async def _ingest_stock(store: CatalogStore, rows: list[tuple[int, str, StockRow]], report: IngestReport) -> None:
    if not rows:
        return
    store_ids = set(await store.store_ids())
    wanted = list(dict.fromkeys(row.product_id for _, _, row in rows))
    variants: dict[str, set[str]] = {}
    for start in range(0, len(wanted), BATCH):
        for product in await store.get_products(wanted[start : start + BATCH]):
            variants[product.id] = {v.id for v in product.variants}
    batcher = _Batcher(store.upsert_stock, report)
    for line, prefix, row in rows:
        if row.store_id not in store_ids:
            report.bad.append((line, f"{prefix}store_id: unknown store {_clip(repr(row.store_id), _MAX_ECHO)}"))
        elif row.product_id not in variants:
            report.bad.append((line, f"{prefix}product_id: unknown product {_clip(repr(row.product_id), _MAX_ECHO)}"))
        elif row.variant_id and row.variant_id not in variants[row.product_id]:
            report.bad.append((line, f"{prefix}variant_id: {row.product_id} has no variant "
                                     f"{_clip(repr(row.variant_id), _MAX_ECHO)}"))
        elif not row.variant_id and variants[row.product_id]:
            report.bad.append((line, f"{prefix}variant_id: {row.product_id} has variants; name one"))
        else:
            await batcher.add(row)
    await batcher.flush()


async def ingest_reviews_records(store: CatalogStore, path: Path) -> IngestReport:
    """Load reviews (a file or a directory) into the catalog's review table; reviews of unknown
    products are bad lines. Ratings are recomputed when anything changed. Embedding is left to the
    review index, which picks up every review whose text changed."""
    files = _files(path)
    for file in files:
        _check_file(file)
    report = IngestReport()
    batcher = _Batcher(store.upsert_reviews, report)
    for file in files:
        prefix = f"{file.name}: " if len(files) > 1 else ""
        pending: list[tuple[int, Review]] = []
        for line, record, error in read_records(file):
            if record is None:
                report.bad.append((line, f"{prefix}{error}"))
                continue
            kind = str(record.pop("kind", "review") or "review").strip().lower()
            if kind != "review":
                report.bad.append((line, f"{prefix}expected a review, not {_clip(repr(kind), _MAX_ECHO)}"))
                continue
            valid, error = _validate(Review, record)
            if valid is None:
                report.bad.append((line, f"{prefix}{error}"))
                continue
            assert isinstance(valid, Review)
            pending.append((line, valid))
            if len(pending) >= BATCH:
                await _add_reviews(store, pending, batcher, report, prefix)
                pending = []
        await _add_reviews(store, pending, batcher, report, prefix)
    await batcher.flush()
    if report.loaded:
        await store.update_ratings()
    _sort_bad(report, several=len(files) > 1)
    return report


def _sort_bad(report: IngestReport, *, several: bool) -> None:
    """File by file (their names lead the reasons when there are several), line by line."""
    report.bad.sort(key=lambda item: (item[1].split(": ", 1)[0] if several else "", item[0]))


async def _add_reviews(
    store: CatalogStore, reviews: list[tuple[int, Review]], batcher: _Batcher, report: IngestReport, prefix: str
) -> None:
    known = {p.id for p in await store.get_products(list(dict.fromkeys(r.product_id for _, r in reviews)))}
    for line, review in reviews:
        if review.product_id in known:
            await batcher.add(review)
        else:
            report.bad.append((line, f"{prefix}product_id: unknown product {_clip(repr(review.product_id), _MAX_ECHO)}"))

