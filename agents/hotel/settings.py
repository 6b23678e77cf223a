"""The /hotel agent's settings: CONCIERGE_HOTEL_* variables (the older unprefixed names still work)."""

from __future__ import annotations

from pydantic import AliasChoices, Field, FilePath, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.config import http_url


class HotelSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True)

    search_limit: int = Field(1, ge=1, le=10, validation_alias=AliasChoices("CONCIERGE_HOTEL_SEARCH_LIMIT"))
    supplier_url: str | None = Field(
        None, validation_alias=AliasChoices("CONCIERGE_HOTEL_SUPPLIER_URL", "CONCIERGE_SUPPLIER_URL")
    )
    supplier_rate: float = Field(
        20.0, gt=0, validation_alias=AliasChoices("CONCIERGE_HOTEL_SUPPLIER_RATE", "CONCIERGE_SUPPLIER_RATE")
    )
    refresh_interval: float = Field(
        900.0, gt=0, validation_alias=AliasChoices("CONCIERGE_HOTEL_REFRESH_INTERVAL", "CONCIERGE_REFRESH_INTERVAL")
    )
    # Cities added to (or replacing same-named ones in) agents/hotel/data/geo.json; read by geo.py at import.
    geo_file: FilePath | None = Field(None, validation_alias=AliasChoices("CONCIERGE_HOTEL_GEO_FILE"))

    @field_validator("supplier_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return http_url(value)
