"""Fault classification: one table mapping each kind of failure to a strategy."""

from __future__ import annotations

import asyncio
import json
import random
import sys
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from bot.events import FailureKind
from bot.locale import Language


class FaultClass(StrEnum):
    TRANSIENT = "transient"  # timeout, connection reset, malformed stream
    RATE_LIMITED = "rate_limited"  # 429
    SERVER = "server"  # 5xx
    MODEL_NOT_FOUND = "model_not_found"  # 404 on the model
    AUTH = "auth"  # 401 / 403
    BAD_REQUEST = "bad_request"  # other 4xx: our bug or the input's, never retried
    TOOL = "tool"  # a tool raised
    DEADLINE = "deadline"  # the whole turn ran out of time
    TRUNCATED = "truncated"  # the reply hit the output limit (finish_reason "length") even when raised
    CONTENT_FILTER = "content_filter"  # the server's content filter withheld the reply
    WORK_TIMEOUT = "work_timeout"  # a worker-process job overran its timeout (bot/workpool.py)
    WORK_MEMORY = "work_memory"  # a worker-process job ran out of its memory limit
    WORK_CRASHED = "work_crashed"  # a worker-process job raised, or its process died


@dataclass(frozen=True)
class Strategy:
    retry: bool
    honour_retry_after: bool
    use_fallback_model: bool
    failure: FailureKind
    user_message: str
    user_message_ja: str = ""  # the same for a Japanese user


# The fault table (see DESIGN.md). Every row has a test in tests/test_faults_*.py.
FAULT_TABLE: dict[FaultClass, Strategy] = {
    FaultClass.TRANSIENT: Strategy(True, False, False, "unavailable",
        "The language model did not answer in time. Please try again in a moment.",
        "言語モデルが時間内に応答しませんでした。少し待ってからもう一度お試しください。"),
    FaultClass.RATE_LIMITED: Strategy(True, True, False, "rate_limited",
        "The language model is rate-limiting us. Please try again shortly.",
        "言語モデルへのリクエストが制限されています。しばらくしてからもう一度お試しください。"),
    FaultClass.SERVER: Strategy(True, True, False, "unavailable",
        "The language model service is having problems. Please try again later.",
        "言語モデルのサービスに問題が起きています。時間をおいてもう一度お試しください。"),
    FaultClass.MODEL_NOT_FOUND: Strategy(False, False, True, "misconfigured",
        "The configured model does not exist on the model server. An operator needs to fix the configuration.",
        "設定されたモデルがモデルサーバーにありません。管理者が設定を直す必要があります。"),
    FaultClass.AUTH: Strategy(False, False, False, "misconfigured",
        "The bot is misconfigured: its model credentials were rejected. An operator has been notified.",
        "ボットの設定に問題があります（モデルの認証情報が拒否されました）。管理者に通知しました。"),
    FaultClass.BAD_REQUEST: Strategy(False, False, False, "internal",
        "The language model rejected the request. Please rephrase or start over with /reset.",
        "言語モデルがリクエストを受け付けませんでした。言い換えるか、/reset でやり直してください。"),
    FaultClass.TOOL: Strategy(True, False, False, "tool_failed",
        "A tool failed; the answer may be incomplete.",
        "ツールが失敗したため、回答が不完全かもしれません。"),
    FaultClass.DEADLINE: Strategy(False, False, False, "timeout",
        "This took too long and was stopped. Your conversation is intact; please try again.",
        "時間がかかりすぎたため止めました。会話はそのまま残っています。もう一度お試しください。"),
    # Retried once with a higher output limit by ModelProvider, not by the generic retry loop.
    FaultClass.TRUNCATED: Strategy(False, False, False, "internal",
        "The language model's answer was cut off at its output limit. Please ask for something "
        "shorter or more specific.",
        "言語モデルの回答が出力の上限で途切れました。もっと短く、具体的に聞いてください。"),
    FaultClass.CONTENT_FILTER: Strategy(False, False, False, "bad_input",
        "The language model's content filter declined to answer this. Please rephrase your request.",
        "言語モデルのコンテンツフィルターにより回答できませんでした。言い換えてください。"),
    # Worker-process jobs (bot/workpool.py): the process is replaced, the bot goes on; `{seconds}`
    # is the job's timeout.
    FaultClass.WORK_TIMEOUT: Strategy(False, False, False, "timeout",
        "This took too long to process (over {seconds:g} s) and was stopped. Try sending a smaller part.",
        "処理に時間がかかりすぎたため（{seconds:g} 秒超）止めました。小さく分けて送ってください。"),
    FaultClass.WORK_MEMORY: Strategy(False, False, False, "bad_input",
        "This needed more memory than one request may use and was stopped. Try sending a smaller part.",
        "1件のリクエストで使えるメモリを超えたため止めました。小さく分けて送ってください。"),
    FaultClass.WORK_CRASHED: Strategy(False, False, False, "internal",
        "Processing this failed in a worker process. Please try again, or send a smaller part.",
        "ワーカープロセスでの処理に失敗しました。もう一度試すか、小さく分けて送ってください。"),
}


@dataclass(frozen=True)
class Fault:
    cls: FaultClass
    status: int | None = None
    retry_after: float | None = None

    @property
    def strategy(self) -> Strategy:
        return FAULT_TABLE[self.cls]


class TurnFailed(Exception):
    """A turn failed for a classified reason; `user_message` is safe to show."""

    def __init__(
        self, kind: FailureKind, user_message: str, retry_after: float | None = None, fault: FaultClass | None = None,
        *, ja: str = "",
    ):
        super().__init__(user_message)
        self.kind = kind
        self.user_message = user_message
        self.ja = ja  # its own Japanese, where the fault table's would not say as much
        self.retry_after = retry_after
        self.fault = fault  # what went wrong, for callers that can still answer (e.g. TRUNCATED)
        self.values: dict[str, Any] = {}  # what the fault table's message was formatted with

    def said(self, language: Language) -> str:
        """The message in `language`: for a Japanese user its own Japanese, else the fault table's."""
        if language == "ja" and self.ja:
            return self.ja
        strategy = FAULT_TABLE.get(self.fault) if self.fault is not None else None
        if language == "ja" and strategy is not None and strategy.user_message_ja:
            try:
                return strategy.user_message_ja.format(**self.values)
            except (KeyError, IndexError):  # raised without the values its message needs
                pass
        return self.user_message


def _retry_after(response: Any) -> float | None:
    if response is None:
        return None
    ms = response.headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            return None
    return None


def classify(exc: BaseException) -> Fault:
    """Map an exception from the model client (or anything else) to a fault class."""
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return Fault(FaultClass.TRANSIENT)
    # The SDK is imported only when a model client is made (it costs about half a second of
    # start-up); an exception can only be one of its classes once it has been imported.
    openai: Any = sys.modules.get("openai")
    if openai is None:
        return _classify_other(exc)
    if isinstance(exc, openai.APITimeoutError | openai.APIConnectionError):
        return Fault(FaultClass.TRANSIENT)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry_after = _retry_after(exc.response)
        if status == 429:
            return Fault(FaultClass.RATE_LIMITED, status, retry_after)
        if status in (401, 403):
            return Fault(FaultClass.AUTH, status)
        if status == 404:
            return Fault(FaultClass.MODEL_NOT_FOUND, status)
        if status >= 500:
            return Fault(FaultClass.SERVER, status, retry_after)
        if status in (408, 409):
            return Fault(FaultClass.TRANSIENT, status, retry_after)
        return Fault(FaultClass.BAD_REQUEST, status)
    if isinstance(exc, openai.LengthFinishReasonError):
        return Fault(FaultClass.TRUNCATED)
    if isinstance(exc, openai.ContentFilterFinishReasonError):
        return Fault(FaultClass.CONTENT_FILTER)
    if isinstance(exc, openai.APIError):
        # Raised for errors inside an SSE stream and for undecodable chunks.
        return Fault(FaultClass.TRANSIENT)
    return _classify_other(exc)


def _classify_other(exc: BaseException) -> Fault:
    if isinstance(exc, ConnectionError) or type(exc).__module__.startswith(("httpx", "httpcore", "aiohttp")):
        return Fault(FaultClass.TRANSIENT)
    if isinstance(exc, json.JSONDecodeError):  # the SDK lets an undecodable chunk escape as is
        return Fault(FaultClass.TRANSIENT)
    return Fault(FaultClass.BAD_REQUEST)


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with full jitter, capped; Retry-After wins when it is longer.

    The jittered delay for retry `attempt` (0-based) is drawn uniformly from
    [0, min(cap, base * 2**attempt)] ("full jitter").  When the server sent a Retry-After,
    the delay is max(retry_after, jittered): we never retry sooner than the server asked,
    nor sooner than our own backoff.  `cap` bounds only our own backoff, not the server's
    Retry-After: a Retry-After longer than `cap` is honoured in full (the server said so);
    a caller that will not wait that long must give up itself rather than retry early.
    """

    base: float = 0.5
    cap: float = 20.0

    def delay(self, attempt: int, retry_after: float | None = None, *, rng: random.Random | None = None) -> float:
        upper = min(self.cap, self.base * (2**attempt))
        jittered = (rng or random).uniform(0.0, upper)
        if retry_after is not None:
            return max(retry_after, jittered)
        return jittered
