"""Semantic search over product reviews: embeddings in a Qdrant collection, kept in step with the catalog.

The catalog (SQL) is the source of truth for reviews; this index holds one vector per review plus a copy of
what a search result shows (payload: review_id, product_id, rating, text, lang, aspects, hash). `sync` asks
the catalog which reviews changed since they were last embedded (their text hash differs from the one
recorded by `mark_embedded`), embeds only those, upserts them and records the new hashes — so a restart,
or a second sync, embeds nothing that has not changed.

Where the vectors live:

- **Local (embedded) mode**, the default: a directory (`<data_dir>/qdrant`), no server. qdrant-client keeps
  the whole collection in memory and searches it exactly (brute force), which is fast for the few thousand
  reviews of a shop this size (it warns past 20,000 points). It takes an exclusive `portalocker` (flock)
  lock on `<path>/.lock` for as long as the client is open: **one open index per directory** — a second
  process, or a second `ReviewIndex` on the same path in the same process, fails with `ReviewIndexError`.
  Its calls also run synchronously on the event loop (milliseconds at this size).
- **Server mode**, with a URL (`QDRANT_URL`): any number of processes share one collection. Use it whenever
  the bot runs more than one worker process.

Point ids are a UUIDv5 of the review id, so re-syncing a review overwrites its point instead of adding one.
The collection records which embeddings produced it (collection metadata); opening it with another model
raises `ReviewIndexError` rather than silently mixing incomparable vectors.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from langchain_core.embeddings import Embeddings
from pydantic import BaseModel
from qdrant_client import AsyncQdrantClient, models
from qdrant_client.http.exceptions import UnexpectedResponse

from agents.shopping.embeddings import embeddings_signature
from agents.shopping.models import Review

log = logging.getLogger(__name__)

DEFAULT_COLLECTION = "shop_reviews"
_POINT_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "concierge/shop/review")
_LOCKED_MARKER = "already accessed by another instance"


class ReviewIndexError(RuntimeError):
    """The review index cannot be opened or used as configured (locked directory, wrong model, no server)."""


class ReviewSource(Protocol):
    """What `ReviewIndex.sync` needs from the catalog store (`CatalogStore` implements it)."""

    async def reviews_to_embed(
        self, product_ids: Sequence[str] | None = None, *, limit: int = 512
    ) -> list[tuple[Review, str]]:
        """Reviews whose current text hash differs from the hash last marked embedded, with that hash."""
        ...

    async def mark_embedded(self, items: list[tuple[str, str]]) -> None:
        """Record (review id, hash) pairs as embedded."""
        ...


class ReviewHit(BaseModel):
    """One search result: the review and its cosine similarity to the question (higher is closer)."""

    review_id: str
    product_id: str
    rating: int
    text: str
    score: float
    lang: str = "en"
    aspects: list[str] = []


def point_id(review_id: str) -> str:
    """The Qdrant point id of a review: deterministic, so an update overwrites the same point."""
    return str(uuid.uuid5(_POINT_NAMESPACE, review_id))


class ReviewIndex:
    """A Qdrant collection of review vectors. Build with `await ReviewIndex.open(...)`; `await close()`."""

    def __init__(
        self,
        client: AsyncQdrantClient,
        embeddings: Embeddings,
        collection: str,
        *,
        local: bool,
        location: str,
    ) -> None:
        self._client = client
        self._embeddings = embeddings
        self._collection = collection
        self._local = local
        self._location = location
        self._signature = embeddings_signature(embeddings)
        self._ready = False  # the collection exists (created lazily: its size is the first vector's)
        # One sync at a time per index: two conversations asking about the same product at once would
        # otherwise both embed its new reviews; the second now waits and finds nothing left to do.
        self._sync_lock = asyncio.Lock()

    @classmethod
    async def open(
        cls,
        *,
        embeddings: Embeddings,
        path: Path | None = None,
        url: str | None = None,
        api_key: str | None = None,
        collection: str = DEFAULT_COLLECTION,
    ) -> ReviewIndex:
        """Open (creating on first sync) the collection: on the server at `url`, else in directory `path`."""
        if url and path:
            raise ValueError("give either a Qdrant url (server) or a path (local mode), not both")
        if not url and path is None:
            raise ValueError("give a Qdrant url (server mode) or a path (local mode)")
        if url:
            # No version check at construction: it is a blocking request; reachability is checked below.
            client = AsyncQdrantClient(url=url, api_key=api_key or None, timeout=10, check_compatibility=False)
            index = cls(client, embeddings, collection, local=False, location=url)
        else:
            assert path is not None
            path = Path(path)
            path.mkdir(parents=True, exist_ok=True)
            try:
                client = AsyncQdrantClient(path=str(path))
            except RuntimeError as exc:
                if _LOCKED_MARKER in str(exc):
                    raise ReviewIndexError(
                        f"the review index at {path} is in use by another process (or another open index in "
                        "this one): local Qdrant allows one client per directory. For several bot processes, "
                        "run a Qdrant server and set QDRANT_URL."
                    ) from exc
                raise
            index = cls(client, embeddings, collection, local=True, location=str(path))
        try:
            await index._check_existing()
        except BaseException:
            await client.close()
            raise
        return index

    async def close(self) -> None:
        """Release the client (and, in local mode, the directory lock)."""
        await self._client.close()

    async def __aenter__(self) -> ReviewIndex:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def collection(self) -> str:
        return self._collection

    @property
    def local(self) -> bool:
        return self._local

    # -- schema

    async def _check_existing(self) -> bool:
        """Whether the collection exists (and was built by these embeddings); sets `_ready`.

        Called at open and, while the collection is missing, before each read: with a server, another
        process may create it in the meantime.
        """
        try:
            exists = await self._client.collection_exists(self._collection)
        except UnexpectedResponse as exc:  # the server answered, but not with the collection
            if exc.status_code in (401, 403):
                raise ReviewIndexError(f"Qdrant at {self._location} refused the API key: check QDRANT_API_KEY") from exc
            raise ReviewIndexError(f"Qdrant at {self._location} answered HTTP {exc.status_code}") from exc
        except Exception as exc:  # connection refused, DNS, TLS: all surface here first
            raise ReviewIndexError(f"cannot reach Qdrant at {self._location}: {exc}") from exc
        if not exists:
            return False
        info = await self._client.get_collection(self._collection)
        stored = (info.config.metadata or {}).get("embeddings")
        if stored and stored != self._signature:
            raise ReviewIndexError(
                f"collection {self._collection!r} at {self._location} was built with embeddings {stored!r}, "
                f"not {self._signature!r}: delete the collection (or use another name), call the catalog's "
                "reset_embedded() so every review is due again, and sync"
            )
        self._ready = True
        return True

    async def _ensure_collection(self, dimensions: int) -> None:
        if self._ready or await self._check_existing():
            return
        try:
            await self._client.create_collection(
                self._collection,
                vectors_config=models.VectorParams(size=dimensions, distance=models.Distance.COSINE),
                metadata={"embeddings": self._signature},
            )
        except Exception:
            if await self._check_existing():  # another process created it first
                return
            raise
        if not self._local:  # local mode ignores payload indexes (and warns about them)
            await self._client.create_payload_index(
                self._collection, "product_id", models.PayloadSchemaType.KEYWORD
            )
            await self._client.create_payload_index(self._collection, "rating", models.PayloadSchemaType.INTEGER)
        self._ready = True

    # -- writing

    async def sync(
        self, source: ReviewSource, product_ids: Sequence[str] | None = None, *, batch_size: int = 64
    ) -> int:
        """Embed and upsert every review the source reports as changed; return how many were embedded.

        Works in batches of `batch_size` so a large first sync holds little in memory and records progress
        as it goes: if it is interrupted, the next sync resumes where it stopped.
        """
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        async with self._sync_lock:
            return await self._sync(source, product_ids, batch_size)

    async def _sync(self, source: ReviewSource, product_ids: Sequence[str] | None, batch_size: int) -> int:
        done: set[tuple[str, str]] = set()  # (review id, hash) embedded by this call
        total = 0
        while True:
            pending = await source.reviews_to_embed(product_ids, limit=batch_size)
            if not pending:
                return total
            # A review edited meanwhile comes back with a new hash and is embedded again; the same hash
            # coming back means the marks are not being recorded, and looping would never end.
            if all((review.id, digest) in done for review, digest in pending):
                raise ReviewIndexError(
                    "the catalog keeps reporting reviews as changed after they were marked embedded "
                    f"({', '.join(r.id for r, _ in pending[:5])}…); mark_embedded is not taking effect"
                )
            await self._upsert(pending)
            await source.mark_embedded([(review.id, digest) for review, digest in pending])
            done.update((review.id, digest) for review, digest in pending)
            total += len(pending)
            log.debug("review index: embedded %d reviews (%d this sync)", len(pending), total)

    async def _upsert(self, pending: Sequence[tuple[Review, str]]) -> None:
        vectors = await self._embeddings.aembed_documents([review.text for review, _ in pending])
        if len(vectors) != len(pending):
            raise ReviewIndexError(f"the embeddings returned {len(vectors)} vectors for {len(pending)} texts")
        await self._ensure_collection(len(vectors[0]))
        points = [
            models.PointStruct(id=point_id(review.id), vector=list(vector), payload=_payload(review, digest))
            for (review, digest), vector in zip(pending, vectors, strict=True)
        ]
        await self._client.upsert(self._collection, points=points, wait=True)

    async def delete(self, review_ids: Sequence[str]) -> None:
        """Remove reviews from the index (the catalog deleted them)."""
        if not review_ids or not (self._ready or await self._check_existing()):
            return
        selector = models.PointIdsList(points=[point_id(r) for r in review_ids])
        await self._client.delete(self._collection, points_selector=selector, wait=True)

    # -- reading

    async def search(
        self,
        query: str,
        *,
        product_id: str | None = None,
        k: int = 5,
        min_rating: int | None = None,
        max_rating: int | None = None,
    ) -> list[ReviewHit]:
        """The `k` reviews closest in meaning to `query`, optionally of one product and a rating range."""
        if not query.strip() or k < 1 or not (self._ready or await self._check_existing()):
            return []
        vector = await self._embeddings.aembed_query(query)
        conditions: list[Any] = []
        if product_id is not None:
            conditions.append(models.FieldCondition(key="product_id", match=models.MatchValue(value=product_id)))
        if min_rating is not None or max_rating is not None:
            conditions.append(
                models.FieldCondition(key="rating", range=models.Range(gte=min_rating, lte=max_rating))
            )
        response = await self._client.query_points(
            self._collection,
            query=list(vector),
            query_filter=models.Filter(must=conditions) if conditions else None,
            limit=k,
            with_payload=True,
        )
        return [_hit(point) for point in response.points]

    async def count(self, product_id: str | None = None) -> int:
        """How many reviews are indexed (of one product, when given)."""
        if not (self._ready or await self._check_existing()):
            return 0
        flt = None
        if product_id is not None:
            flt = models.Filter(
                must=[models.FieldCondition(key="product_id", match=models.MatchValue(value=product_id))]
            )
        result = await self._client.count(self._collection, count_filter=flt, exact=True)
        return int(result.count)


def _payload(review: Review, digest: str) -> dict[str, Any]:
    return {
        "review_id": review.id,
        "product_id": review.product_id,
        "rating": review.rating,
        "text": review.text,
        "lang": review.lang,
        "aspects": list(review.aspects),
        "hash": digest,
    }


def _hit(point: Any) -> ReviewHit:
    payload = point.payload or {}
    return ReviewHit(
        review_id=payload.get("review_id", str(point.id)),
        product_id=payload.get("product_id", ""),
        rating=int(payload.get("rating", 0)),
        text=payload.get("text", ""),
        score=float(point.score),
        lang=payload.get("lang", "en"),
        aspects=list(payload.get("aspects") or []),
    )
