"""Slack's own settings (SLACK_*), read through `Settings.section(SlackSettings)`: only a process
that serves Slack validates them."""

from __future__ import annotations

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.config import http_url


class SlackSettings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True)

    bot_token: SecretStr | None = Field(None, validation_alias=AliasChoices("SLACK_BOT_TOKEN"))
    signing_secret: SecretStr | None = Field(None, validation_alias=AliasChoices("SLACK_SIGNING_SECRET"))
    app_token: SecretStr | None = Field(None, validation_alias=AliasChoices("SLACK_APP_TOKEN"))  # Socket Mode
    api_base_url: str = Field("https://slack.com/api/", validation_alias=AliasChoices("SLACK_API_BASE_URL"))
    native_streaming: bool = Field(False, validation_alias=AliasChoices("SLACK_NATIVE_STREAMING"))

    @field_validator("api_base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return http_url(value) or value
