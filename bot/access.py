"""Who may use the bot and how much: the access policy (workspaces, channels, users, roles, admins),
per-user rate limits and a daily token budget per workspace, checked once as a turn enters."""

from __future__ import annotations

import datetime as dt
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.agent import TurnInput
from bot.config import Settings
from bot.conversation import ConversationKey
from bot.events import Failure
from bot.llm import ModelProvider
from bot.storage import AppDatabase

log = logging.getLogger(__name__)

LOCAL = "console"  # the terminal: the person at the keyboard runs the bot, so is never refused

NOT_THIS_WORKSPACE = "Sorry, I'm not enabled in this workspace. Ask an admin of this bot to add it."
NO_DIRECT_MESSAGES = "Sorry, I don't take direct messages. Mention me in a channel where I'm enabled."
NOT_THIS_CHANNEL = "Sorry, I'm not enabled in this channel. Ask an admin of this bot to add it, or try another channel."
NOT_THIS_USER = "Sorry, you don't have access to me. Ask an admin of this bot to give you access."
TOO_FAST = "You're sending requests faster than I can take them."


@dataclass(frozen=True)
class AccessPolicy:
    """Allow lists; an empty one allows everyone. A turn needs its workspace and channel allowed
    (a direct message needs `allow_dms` instead of a channel) and its user listed or holding a
    listed role (roles only count where members have them). Admins are always allowed."""

    workspaces: frozenset[str] = frozenset()
    channels: frozenset[str] = frozenset()
    users: frozenset[str] = frozenset()
    roles: frozenset[str] = frozenset()
    admins: frozenset[str] = frozenset()
    allow_dms: bool = True

    @classmethod
    def from_settings(cls, settings: Settings) -> AccessPolicy:
        return cls(
            workspaces=frozenset(settings.allowed_workspaces), channels=frozenset(settings.allowed_channels),
            users=frozenset(settings.allowed_users), roles=frozenset(settings.allowed_roles),
            admins=frozenset(settings.admins), allow_dms=settings.allow_dms,
        )

    def is_admin(self, platform: str, turn: TurnInput) -> bool:
        return platform == LOCAL or turn.user_id in self.admins

    def refusal(self, platform: str, turn: TurnInput) -> str | None:
        """Why `turn` may not run (a polite sentence for the user), or None when it may."""
        if self.is_admin(platform, turn):
            return None
        if self.workspaces and turn.workspace_id not in self.workspaces:
            return NOT_THIS_WORKSPACE
        if turn.direct:
            if not self.allow_dms:
                return NO_DIRECT_MESSAGES
        elif self.channels and turn.channel_id not in self.channels:
            return NOT_THIS_CHANNEL
        roles = self.roles if turn.roles is not None else frozenset()  # where members have roles
        if (self.users or roles) and turn.user_id not in self.users and not roles.intersection(turn.roles or ()):
            return NOT_THIS_USER
        return None


class RateLimiter:
    """A token bucket per user: up to `burst` turns at once, refilled at `per_minute` turns a
    minute. Kept in this process's memory: each process of a scaled-out bot limits on its own."""

    MAX_BUCKETS = 10_000  # beyond this, full buckets (users idle long enough) are forgotten

    def __init__(self, per_minute: float, burst: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # who → (tokens, when counted)

    def take(self, who: str) -> float | None:
        """Spend one turn of `who`'s bucket: None when allowed, else seconds until one is free."""
        now = self._clock()
        tokens, then = self._buckets.get(who, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        if tokens < 1.0:
            self._buckets[who] = (tokens, now)
            return (1.0 - tokens) / self.rate
        self._buckets[who] = (tokens - 1.0, now)
        if len(self._buckets) > self.MAX_BUCKETS:
            self._forget_full(now)
        return None

    def _forget_full(self, now: float) -> None:
        for who, (tokens, then) in list(self._buckets.items()):
            if tokens + (now - then) * self.rate >= self.burst:
                del self._buckets[who]


def account_of(key: ConversationKey) -> str:
    """Whose budget a conversation spends: its workspace (Slack team, Discord guild; Discord DMs
    share one), or the console."""
    return key.platform if key.platform == LOCAL else f"{key.platform}:{key.parts[0]}"


def key_of_checkpoint_thread(thread_id: str) -> ConversationKey:
    """The conversation of a checkpoint thread id (`{conversation}#{generation}/{agent}`)."""
    return ConversationKey.parse(thread_id.rsplit("/", 1)[0].split("#", 1)[0])


class TokenBudget:
    """Model tokens (prompt + completion) per workspace per UTC day, counted in the app database;
    new turns are refused once the day's budget is spent."""

    def __init__(self, app_db: AppDatabase, daily: int, *, clock: Callable[[], float] = time.time) -> None:
        self.app_db = app_db
        self.daily = daily
        self.clock = clock

    def _now(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.clock(), dt.UTC)

    async def record(self, checkpoint_thread: str, tokens: int) -> None:
        """Count tokens a model call spent in a conversation (bot.llm.TokenUsage calls this)."""
        try:
            account = account_of(key_of_checkpoint_thread(checkpoint_thread))
        except ValueError:
            return  # not a conversation's thread
        await self.app_db.add_tokens(account, self._now().date().isoformat(), tokens)

    async def refusal(self, account: str) -> Failure | None:
        now = self._now()
        if await self.app_db.tokens_spent(account, now.date().isoformat()) < self.daily:
            return None
        reset = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), dt.UTC)
        minutes = max(1, int((reset - now).total_seconds() // 60))
        wait = f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"
        log.info("daily token budget of %s spent (%d tokens)", account, self.daily)
        return Failure(
            kind="rate_limited",
            user_message=(
                "This workspace has used today's budget for the language model. "
                f"It resets at midnight UTC (in about {wait}); please try again then."
            ),
        )


class TurnGate:
    """The checks every turn passes before it runs: access, the daily token budget, the rate limit.
    Admins and the console are never refused (their tokens still count)."""

    def __init__(self, settings: Settings, app_db: AppDatabase, models: ModelProvider) -> None:
        self.policy = AccessPolicy.from_settings(settings)
        self.limiter = (
            RateLimiter(settings.rate_limit_per_minute, settings.rate_limit_burst)
            if settings.rate_limit_per_minute > 0
            else None
        )
        self.budget: TokenBudget | None = None
        if settings.daily_token_budget > 0 and not models.is_offline:  # the offline model costs nothing
            self.budget = TokenBudget(app_db, settings.daily_token_budget)
            models.usage.record = self.budget.record

    async def check(self, key: ConversationKey, turn: TurnInput) -> Failure | None:
        """A Failure to answer `turn` with instead of running it, or None to run it."""
        refusal = self.policy.refusal(key.platform, turn)
        if refusal is not None:
            log.info("turn refused in %s for user %s: not allowed", key.thread_id, turn.user_id)
            return Failure(kind="bad_input", user_message=refusal)
        if self.policy.is_admin(key.platform, turn):
            return None
        if self.budget is not None:
            spent = await self.budget.refusal(account_of(key))
            if spent is not None:
                return spent
        if self.limiter is not None:
            wait = self.limiter.take(f"{key.platform}:{turn.user_id}")
            if wait is not None:
                return Failure(kind="rate_limited", user_message=TOO_FAST, retry_after=float(max(1, math.ceil(wait))))
        return None
