"""Settings from the environment (and `.env`), validated once at start-up."""

from __future__ import annotations

import base64
import binascii
import contextlib
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AliasChoices,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class ConfigError(Exception):
    """Raised with a readable, secret-free explanation of every bad setting."""


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


S = TypeVar("S", bound=BaseSettings)

# Ids from the environment as "T01,T02" (no JSON), kept as a list.
IdList = Annotated[list[str], NoDecode]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    # --- models -------------------------------------------------------------------------
    openai_api_key: SecretStr | None = Field(None, validation_alias=_env("OPENAI_API_KEY"))
    openai_base_url: str | None = Field(None, validation_alias=_env("OPENAI_BASE_URL"))
    model: str = Field("gpt-4o-mini", validation_alias=_env("CONCIERGE_MODEL"))
    fallback_model: str | None = Field(None, validation_alias=_env("CONCIERGE_FALLBACK_MODEL"))
    llm: Literal["offline", "openai"] | None = Field(None, validation_alias=_env("CONCIERGE_LLM"))
    llm_timeout: float = Field(30.0, gt=0, validation_alias=_env("CONCIERGE_LLM_TIMEOUT"))
    llm_max_retries: int = Field(3, ge=0, le=10, validation_alias=_env("CONCIERGE_LLM_MAX_RETRIES"))
    retry_base_delay: float = Field(0.5, ge=0, validation_alias=_env("CONCIERGE_RETRY_BASE_DELAY"))
    retry_max_delay: float = Field(20.0, gt=0, validation_alias=_env("CONCIERGE_RETRY_MAX_DELAY"))

    # --- storage ------------------------------------------------------------------------
    data_dir: Path = Field(Path("./data"), validation_alias=_env("CONCIERGE_DATA_DIR"))
    database_url: str | None = Field(None, validation_alias=_env("CONCIERGE_DATABASE_URL"))
    history_window: int = Field(40, ge=4, le=1000, validation_alias=_env("CONCIERGE_HISTORY_WINDOW"))
    checkpoints_kept: int = Field(
        32, ge=2, le=100_000, validation_alias=_env("CONCIERGE_CHECKPOINTS_KEPT")
    )
    dedupe_ttl: float = Field(3600.0, gt=0, validation_alias=_env("CONCIERGE_DEDUPE_TTL"))
    # PostgreSQL connections per process: one pool this size for everything (app tables,
    # checkpoints, agents' stores), plus one connection holding the turn locks.
    db_pool_size: int = Field(10, ge=2, le=500, validation_alias=_env("CONCIERGE_DB_POOL_SIZE"))
    # Retention (`python -m bot data prune`, daily in the worker): a conversation idle this many
    # days is forgotten (0: kept for ever); every other one keeps only its latest checkpoint.
    thread_ttl_days: float = Field(90.0, ge=0, validation_alias=_env("CONCIERGE_THREAD_TTL_DAYS"))
    retention_interval: float = Field(86400.0, gt=0, validation_alias=_env("CONCIERGE_RETENTION_INTERVAL"))

    # --- turns --------------------------------------------------------------------------
    turn_deadline: float = Field(120.0, gt=0, validation_alias=_env("CONCIERGE_TURN_DEADLINE"))
    max_input_bytes: int = Field(
        100_000, ge=1_000, validation_alias=_env("CONCIERGE_MAX_INPUT_BYTES")
    )
    max_attachment_bytes: int = Field(
        200_000, ge=1_000, validation_alias=_env("CONCIERGE_MAX_ATTACHMENT_BYTES")
    )
    tool_retries: int = Field(1, ge=0, le=5, validation_alias=_env("CONCIERGE_TOOL_RETRIES"))
    # CPU-heavy work on untrusted input runs in worker processes (bot/workpool.py): how many
    # (0: min(2, CPU count)), seconds per job before its process is killed, an address-space
    # limit per worker in MB (0: none; Linux), and jobs in flight per user (more wait their turn).
    work_processes: int = Field(0, ge=0, le=64, validation_alias=_env("CONCIERGE_WORK_PROCESSES"))
    work_timeout: float = Field(30.0, gt=0, le=3600, validation_alias=_env("CONCIERGE_WORK_TIMEOUT"))
    work_memory_mb: int = Field(1024, ge=0, validation_alias=_env("CONCIERGE_WORK_MEMORY_MB"))
    work_per_user: int = Field(1, ge=1, le=64, validation_alias=_env("CONCIERGE_WORK_PER_USER"))
    # Warn when the event loop was blocked longer than this (bot/loopwatch.py); 0 turns it off.
    loop_lag_warn_ms: float = Field(100.0, ge=0, validation_alias=_env("CONCIERGE_LOOP_LAG_WARN_MS"))
    # When a model answers without the tool call a request needs, let the offline planner make it.
    tool_fallback: Literal["planner", "off"] = Field("planner", validation_alias=_env("CONCIERGE_TOOL_FALLBACK"))
    # Output limits sent with every model call (max_tokens), by purpose: a looping model is cut
    # by the limit, not by the turn deadline. A truncated structured output is retried once with
    # twice the limit. `check` is /proofread's model checks, whose replies list findings or claims
    # for a chunk of an article and so run longer than other structured replies.
    max_tokens_param: Literal["auto", "max_tokens", "max_completion_tokens"] = Field(
        "auto", validation_alias=_env("CONCIERGE_MAX_TOKENS_PARAM")
    )
    max_tokens_answer: int = Field(1024, ge=16, le=65_536, validation_alias=_env("CONCIERGE_MAX_TOKENS_ANSWER"))
    max_tokens_structured: int = Field(
        1536, ge=16, le=65_536, validation_alias=_env("CONCIERGE_MAX_TOKENS_STRUCTURED")
    )
    max_tokens_check: int = Field(2048, ge=16, le=65_536, validation_alias=_env("CONCIERGE_MAX_TOKENS_CHECK"))
    agent_plugins: str = Field("", validation_alias=_env("CONCIERGE_AGENT_PLUGINS"))
    platform_plugins: str = Field("", validation_alias=_env("CONCIERGE_PLATFORM_PLUGINS"))
    edit_interval: float = Field(1.0, ge=0, validation_alias=_env("CONCIERGE_EDIT_INTERVAL"))
    # Agents' own settings live in their packages (AgentDefinition.settings_model).

    # --- access and limits (docs/security.md) ---------------------------------------------
    # Comma-separated ids; an empty list lets everyone in. Admins are always let in.
    allowed_workspaces: IdList = Field([], validation_alias=_env("CONCIERGE_ALLOWED_WORKSPACES"))
    allowed_channels: IdList = Field([], validation_alias=_env("CONCIERGE_ALLOWED_CHANNELS"))
    allowed_users: IdList = Field([], validation_alias=_env("CONCIERGE_ALLOWED_USERS"))
    allowed_roles: IdList = Field([], validation_alias=_env("CONCIERGE_ALLOWED_ROLES"))
    admins: IdList = Field([], validation_alias=_env("CONCIERGE_ADMINS"))
    allow_dms: bool = Field(True, validation_alias=_env("CONCIERGE_ALLOW_DMS"))
    rate_limit_per_minute: float = Field(0.0, ge=0, validation_alias=_env("CONCIERGE_RATE_LIMIT_PER_MINUTE"))
    rate_limit_burst: int = Field(5, ge=1, le=1000, validation_alias=_env("CONCIERGE_RATE_LIMIT_BURST"))
    daily_token_budget: int = Field(0, ge=0, validation_alias=_env("CONCIERGE_DAILY_TOKEN_BUDGET"))
    checkpoint_key: SecretStr | None = Field(None, validation_alias=_env("CONCIERGE_CHECKPOINT_KEY"))

    # --- serving ----------------------------------------------------------------------
    # Platforms' own settings (SLACK_*, DISCORD_*) live in their packages: `section(model)`.
    port: int = Field(3000, ge=1, le=65535, validation_alias=_env("PORT"))
    log_level: str = Field("INFO", validation_alias=_env("CONCIERGE_LOG_LEVEL"))
    event_loop: Literal["uvloop", "asyncio"] = Field("uvloop", validation_alias=_env("CONCIERGE_EVENT_LOOP"))

    # What these settings were built with (`load_settings(**overrides)`), for `section`.
    _overrides: dict[str, Any] = PrivateAttr(default_factory=dict)
    _sections: dict[type[BaseSettings], BaseSettings] = PrivateAttr(default_factory=dict)

    def __init__(self, **values: Any) -> None:
        super().__init__(**values)
        self._overrides = values

    def section(self, model: type[S]) -> S:
        """A package's own settings model (a platform's SLACK_* or DISCORD_*), read from the same
        sources as these settings: the environment, `.env` and the overrides these were built with.
        Validated on first use (ConfigError naming each bad variable), then kept."""
        kept = self._sections.get(model)
        if kept is None:
            kept = self._sections[model] = load(model, **self._overrides)
        return kept  # type: ignore[return-value]

    @field_validator("openai_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return http_url(value)

    @field_validator("allowed_workspaces", "allowed_channels", "allowed_users", "allowed_roles", "admins", mode="before")
    @classmethod
    def _id_list(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("checkpoint_key")
    @classmethod
    def _checkpoint_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            return None
        if value is not None:
            aes_key(value)  # the message never contains the key
        return value

    @field_validator("database_url")
    @classmethod
    def _db_url(cls, value: str | None) -> str | None:
        if value and not value.startswith(("sqlite:///", "postgresql://", "postgres://")):
            raise ValueError("must be sqlite:///PATH or postgresql://…")
        return value

    @field_validator("log_level")
    @classmethod
    def _log_level(cls, value: str) -> str:
        value = value.upper()
        if value not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
            raise ValueError("must be DEBUG, INFO, WARNING or ERROR")
        return value

    @model_validator(mode="after")
    def _llm_choice(self) -> Settings:
        if self.llm == "openai" and self.openai_api_key is None:
            raise ValueError("CONCIERGE_LLM=openai needs OPENAI_API_KEY")
        return self

    @property
    def llm_mode(self) -> Literal["offline", "openai"]:
        if self.llm:
            return self.llm
        return "openai" if self.openai_api_key else "offline"

    @cached_property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url.replace("postgres://", "postgresql://", 1)
        return f"sqlite:///{(self.data_dir / 'concierge.db').as_posix()}"

    @property
    def is_postgres(self) -> bool:
        return self.resolved_database_url.startswith("postgresql://")


def aes_key(value: SecretStr) -> bytes:
    """A 16, 24 or 32-byte AES key written as hex or base64 (hex first: 32 hex digits are 16 bytes)."""
    text = value.get_secret_value().strip()
    candidates: list[bytes] = []
    with contextlib.suppress(ValueError):
        candidates.append(bytes.fromhex(text))
    padded = text + "=" * (-len(text) % 4)
    for altchars in (None, b"-_"):  # standard or URL-safe alphabet
        with contextlib.suppress(ValueError, binascii.Error):
            candidates.append(base64.b64decode(padded, altchars=altchars, validate=True))
    for key in candidates:
        if len(key) in (16, 24, 32):
            return key
    raise ValueError("must be a 16, 24 or 32-byte key written as hex or base64 (e.g. `openssl rand -base64 32`)")


def env_name(model: type[BaseSettings], field_name: str) -> str:
    """The environment variable `model`'s field is read from (its first alias)."""
    field = model.model_fields.get(field_name)
    if field is not None and isinstance(field.validation_alias, AliasChoices):
        return str(field.validation_alias.choices[0])
    prefix = str(model.model_config.get("env_prefix") or "")
    return (prefix + field_name).upper() if field is not None else field_name


def load(model: type[S], **overrides: object) -> S:
    """Build any settings model (the core's, an agent's), turning pydantic's errors into one
    readable ConfigError that names each variable and never echoes its value."""
    try:
        return model(**overrides)  # type: ignore[arg-type]
    except ValidationError as exc:
        lines = []
        for err in exc.errors(include_input=False, include_url=False):
            loc = str(err["loc"][0]) if err["loc"] else "settings"
            lines.append(f"  {env_name(model, loc)}: {err['msg']}")
        raise ConfigError("Invalid configuration:\n" + "\n".join(lines)) from None


def load_settings(**overrides: object) -> Settings:
    return load(Settings, **overrides)


def http_url(value: str | None) -> str | None:
    """A validator for URL settings."""
    if value is not None and not value.startswith(("http://", "https://")):
        raise ValueError("must start with http:// or https://")
    return value
