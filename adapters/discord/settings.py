"""Discord's own settings (DISCORD_*), read through `Settings.section(DiscordSettings)`: only a
process that serves Discord validates them."""

from __future__ import annotations

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.config import http_url


class DiscordSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True)

    bot_token: SecretStr | None = Field(None, validation_alias=AliasChoices("DISCORD_BOT_TOKEN"))
    api_base_url: str = Field("https://discord.com/api/v10", validation_alias=AliasChoices("DISCORD_API_BASE_URL"))

    @field_validator("api_base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return http_url(value) or value
