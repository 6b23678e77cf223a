"""Chat models: the OpenAI-compatible client or the offline model, behind one resilient call."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from types import SimpleNamespace
from typing import Any, Literal
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import Runnable, RunnableConfig

from bot.config import Settings
from bot.faults import Backoff, FaultClass, TurnFailed, classify
from bot.phrases import say

log = logging.getLogger(__name__)

Prepare = Callable[[BaseChatModel], Runnable[Any, Any]]


class _StreamingCompletions:
    """ChatOpenAI's `async_client` (the SDK's `chat.completions`) with a leaner streaming path.

    ChatOpenAI turns every streamed chunk back into a dict; the typed SDK call first validates the
    request against its TypedDicts and builds a pydantic model per chunk. Streaming requests go through
    the SDK's generic `client.post` instead (same auth, headers, timeouts, error classes and SSE
    decoding) and yield the chunks as dicts, which cuts the client's CPU per call by more than half
    (`python -m bench concurrency`). Everything else uses the typed resource unchanged."""

    _TYPED_ONLY = ("extra_headers", "extra_query", "extra_body", "timeout")

    def __init__(self, client: Any) -> None:
        self._client = client
        self._typed = client.chat.completions
        self.with_raw_response = self._typed.with_raw_response

    async def create(self, **payload: Any) -> Any:
        if not payload.get("stream") or any(key in payload for key in self._TYPED_ONLY):
            return await self._typed.create(**payload)
        import openai

        return await self._client.post(
            "/chat/completions", body=payload, cast_to=object, stream=True,
            stream_cls=openai.AsyncStream[object],  # chunks stay the decoded JSON dicts
        )


@functools.cache
def _chat_openai_class() -> Any:
    """ChatOpenAI that names the output limit as the server expects (imported on first use)."""
    from langchain_openai import ChatOpenAI

    class CompatibleChatOpenAI(ChatOpenAI):
        tokens_param: str = "max_completion_tokens"

        def _get_request_payload(self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any) -> dict:
            payload = super()._get_request_payload(input_, stop=stop, **kwargs)
            if self.tokens_param != "max_completion_tokens" and "max_completion_tokens" in payload:
                # OpenAI's name for the limit; most compatible servers read only max_tokens and
                # ignore the other, which would leave the output unbounded.
                payload[self.tokens_param] = payload.pop("max_completion_tokens")
            return payload

    return CompatibleChatOpenAI


class TokenUsage(AsyncCallbackHandler):
    """Counts the prompt and completion tokens of every chat model call by the LangGraph thread it
    ran in (LangGraph puts `thread_id` in the run's metadata) and hands them to `record`, when set.
    Calls outside a graph (worker jobs) have no thread and are not counted."""

    def __init__(self) -> None:
        self.record: Callable[[str, int], Awaitable[None]] | None = None
        self._threads: dict[UUID, str] = {}

    async def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], *, run_id: UUID,
        metadata: dict[str, Any] | None = None, **kwargs: Any,
    ) -> None:
        thread = (metadata or {}).get("thread_id")
        if thread and self.record is not None:
            if len(self._threads) > 10_000:  # calls cancelled before they ended are never popped
                self._threads.clear()
            self._threads[run_id] = str(thread)

    async def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        thread = self._threads.pop(run_id, None)
        tokens = _total_tokens(response)
        if thread is not None and tokens and self.record is not None:
            await self.record(thread, tokens)

    async def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._threads.pop(run_id, None)


def _total_tokens(response: LLMResult) -> int:
    """Prompt plus completion tokens the server reported (usage_metadata on the message, else the
    provider's token_usage)."""
    total = 0
    for generations in response.generations:
        for generation in generations:
            usage = getattr(getattr(generation, "message", None), "usage_metadata", None)
            if usage:
                total += int(usage.get("total_tokens") or usage.get("input_tokens", 0) + usage.get("output_tokens", 0))
    if not total:
        usage = (response.llm_output or {}).get("token_usage") or {}
        total = int(usage.get("total_tokens") or 0)
    return total


def openai_chat_model(settings: Settings, model: str, *, usage: TokenUsage | None = None) -> BaseChatModel:
    """A ChatOpenAI over the openai SDK's aiohttp transport (a fraction of httpx's CPU per request)."""
    import openai

    ChatOpenAI = _chat_openai_class()
    client = openai.AsyncOpenAI(
        api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
        base_url=settings.openai_base_url,
        timeout=settings.llm_timeout,
        max_retries=0,  # retries are ours: see ModelProvider.ainvoke and the fault table
        http_client=openai.DefaultAioHttpClient(timeout=settings.llm_timeout),
    )
    return ChatOpenAI(
        model=model,
        api_key=settings.openai_api_key,
        base_url=settings.openai_base_url,
        timeout=settings.llm_timeout,
        max_retries=0,
        streaming=True,
        temperature=0,
        use_responses_api=False,
        stream_usage=True,
        root_async_client=client,
        async_client=_StreamingCompletions(client),
        tokens_param=tokens_param(settings),
        callbacks=[usage] if usage is not None else None,
    )


def tokens_param(settings: Settings) -> str:
    """The request field for the output limit: OpenAI's `max_completion_tokens`, or `max_tokens`
    for other servers (vLLM, llama.cpp, Ollama, DeepSeek all read it)."""
    if settings.max_tokens_param != "auto":
        return settings.max_tokens_param
    url = settings.openai_base_url or ""
    return "max_completion_tokens" if not url or "api.openai.com" in url else "max_tokens"


async def close_chat_model(model: BaseChatModel) -> None:
    """Close the HTTP connections a chat model holds (the aiohttp session lives in one event loop)."""
    client = getattr(model, "root_async_client", None)
    if client is not None:
        await client.close()


Purpose = Literal["answer", "structured", "check"]
TRUNCATION_NOTE = "\n\n_(This answer was cut off at the model's output limit.)_"


def without_truncation_note(message: BaseMessage) -> BaseMessage:
    """`message` as the model is shown it again in later calls: an answer of ours without the
    truncation note the user saw (a note sent back would be copied into the model's next answers).
    A stored answer clipped to a length may keep only the note's start, which goes too."""
    content = message.content
    if not isinstance(message, AIMessage) or not isinstance(content, str):
        return message
    cut = content.rfind("\n\n_(")
    if cut < 0 or not TRUNCATION_NOTE.startswith(content[cut:]):
        return message
    return message.model_copy(update={"content": content[:cut]})


def finish_reason(message: Any) -> str | None:
    """The server's finish_reason for a reply (langchain-openai keeps it in response_metadata)."""
    metadata = getattr(message, "response_metadata", None) or {}
    reason = metadata.get("finish_reason")
    return str(reason) if reason else None


# Modules an OpenAI-compatible model's first structured or streamed call imports lazily.
WARM_MODULES = (
    "openai.types.chat", "openai.types.chat.parsed_chat_completion", "openai.lib._parsing",
    "openai.lib._parsing._completions", "openai.lib._pydantic", "openai.lib.streaming.chat",
    "openai.resources.chat.completions", "openai.resources.embeddings", "openai.types",
    "langchain_core.tracers.langchain", "langchain_core.tracers.stdout", "anyio._backends._asyncio",
)


def _warm_imports(models: Sequence[Any]) -> None:
    import importlib

    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # another SDK version lays its modules out differently
            log.debug("warm-up: no module %s", name)
    for model in models:
        client = getattr(model, "root_async_client", None)
        if client is None:
            continue
        # The SDK builds its resources (and imports their modules) on first attribute access;
        # structured output goes through `beta`, which loads the most.
        for path in ("chat.completions", "embeddings", "beta.chat.completions"):
            target: Any = client
            try:
                for part in path.split("."):
                    target = getattr(target, part)
            except AttributeError:
                log.debug("warm-up: the client has no %s", path)


class ModelProvider:
    """Calls a chat model with the fault table applied: retry with backoff and jitter, Retry-After
    honoured, fallback model on model-not-found, no retry on 401/403 or other 4xx. Every call
    carries an output limit sized for its purpose; `finish_reason` is read on every reply."""

    def __init__(
        self,
        primary: BaseChatModel,
        fallback: BaseChatModel | None = None,
        *,
        max_retries: int = 3,
        backoff: Backoff | None = None,
        offline: bool = False,
        sleep: Callable[[float], Any] = asyncio.sleep,
        max_tokens: dict[str, int] | None = None,
        planner: BaseChatModel | None = None,
        usage: TokenUsage | None = None,
    ) -> None:
        self.primary = primary
        # Tokens the models spend, by conversation thread (the daily budget, bot/access.py).
        self.usage = usage or TokenUsage()
        # The offline planner, asked when a model answers without the tool call the request needs
        # (many small local models cannot call tools): see `_tool_fallback`.
        self.planner = planner
        self.fallback = fallback
        self.max_retries = max_retries
        self.backoff = backoff or Backoff()
        self.is_offline = offline
        self._sleep = sleep
        self.max_tokens = {"answer": 1024, "structured": 1536, "check": 2048, **(max_tokens or {})}
        self.attempts = 0  # total model calls made, for tests and benchmarks
        self._limited: dict[tuple[int, int], BaseChatModel] = {}

    async def warm(self) -> None:
        """Load, in a worker thread, the modules a model's first call would import on the event
        loop (the openai SDK loads its resources and about 700 modules of types lazily: 0.5–3 s
        with the loop blocked, close to Slack's 3 s acknowledgement limit). Start-up calls this
        before serving; the offline model needs nothing."""
        if not self.is_offline:
            await asyncio.to_thread(_warm_imports, [m for m in (self.primary, self.fallback) if m is not None])

    async def aclose(self) -> None:
        for model in (self.primary, self.fallback):
            if model is not None:
                await close_chat_model(model)

    @classmethod
    def from_settings(cls, settings: Settings, *, skills: Sequence[Any] = ()) -> ModelProvider:
        """The configured models; `skills` teach the offline model the agents' domains."""
        backoff = Backoff(settings.retry_base_delay, settings.retry_max_delay)
        if settings.llm_mode == "offline":
            from bot.offline import OfflineChatModel

            return cls(OfflineChatModel(skills=tuple(skills)), None, max_retries=0, backoff=backoff, offline=True)
        usage = TokenUsage()
        fallback = (
            openai_chat_model(settings, settings.fallback_model, usage=usage) if settings.fallback_model else None
        )
        planner = None
        if skills and settings.tool_fallback == "planner":
            from bot.offline import OfflineChatModel

            planner = OfflineChatModel(skills=tuple(skills))
        return cls(
            openai_chat_model(settings, settings.model, usage=usage),
            fallback,
            max_retries=settings.llm_max_retries,
            backoff=backoff,
            max_tokens={"answer": settings.max_tokens_answer, "structured": settings.max_tokens_structured,
                        "check": settings.max_tokens_check},
            planner=planner,
            usage=usage,
        )

    def _with_limit(self, model: BaseChatModel, limit: int) -> BaseChatModel:
        """`model` sending max_tokens=`limit` (models without the field, the offline one, as is)."""
        if "max_tokens" not in type(model).model_fields:
            return model
        key = (id(model), limit)
        if key not in self._limited:
            self._limited[key] = model.model_copy(update={"max_tokens": limit})
        return self._limited[key]

    async def ainvoke(
        self,
        prepare: Prepare,
        messages: Sequence[BaseMessage],
        config: RunnableConfig | None = None,
        *,
        purpose: Purpose = "answer",
        max_tokens: int | None = None,
    ) -> Any:
        """Run `prepare(model)` (e.g. `lambda m: m.bind_tools(tools)`) on `messages`, with an output
        limit of `max_tokens` (default: the configured limit for `purpose`).

        A reply cut off at the limit is retried once with twice the limit when it is structured
        output or a tool call (a partial one is useless); a cut-off text answer is returned with a
        note saying so, and that note is taken out of the answers in `messages` again. A tool call
        still cut off is made by the planner instead, when it would make one. Raises TurnFailed
        with a user-safe message when the fault table says stop."""
        limit = max_tokens or self.max_tokens[purpose]
        messages = [without_truncation_note(m) for m in messages]
        if self.planner is not None and PLANNER_STEPS.get() and isinstance(prepare(self.primary), BaseChatModel):
            # The planner made this turn's tool calls for the model, so it also words the answer
            # from their results (its skills compose one) instead of a model that never asked for them.
            return await prepare(self.planner).ainvoke(messages, config)
        model = self.primary
        attempt = 0
        used_fallback = False
        grown = False
        while True:
            self.attempts += 1
            started = time.monotonic()
            try:
                result = await prepare(self._with_limit(model, limit)).ainvoke(list(messages), config)
                reason = finish_reason(result)
                if reason == "content_filter":
                    raise openai_content_filter()
                if reason == "length" and (getattr(result, "tool_calls", None) or getattr(result, "invalid_tool_calls", None)):
                    raise openai_length()
                if reason == "length" and isinstance(result, AIMessage) and isinstance(result.content, str):
                    log.warning("answer cut off at %d output tokens", limit)
                    result = result.model_copy(update={"content": result.content + TRUNCATION_NOTE})
                return await self._tool_fallback(prepare, messages, config, result)
            except (asyncio.CancelledError, TurnFailed):
                raise
            except Exception as exc:
                fault = classify(exc)
                strategy = fault.strategy
                if fault.cls is FaultClass.TRUNCATED and not grown and _time_for(2 * (time.monotonic() - started)):
                    log.warning("reply cut off at %d output tokens; retrying once with %d", limit, limit * 2)
                    limit, grown = limit * 2, True
                    continue
                if fault.cls is FaultClass.TRUNCATED and not grown:
                    log.warning("reply cut off at %d output tokens; no time left in the turn for a retry "
                                "with %d, so the turn goes on without it", limit, limit * 2)
                if fault.cls is FaultClass.TRUNCATED:
                    planned = await self._stand_in(prepare, messages, config, "the model's tool call was cut off")
                    if planned is not None:
                        return planned
                if fault.cls is FaultClass.MODEL_NOT_FOUND and self.fallback is not None and not used_fallback:
                    log.warning("model not found (HTTP %s); switching to the fallback model", fault.status)
                    model, used_fallback, attempt = self.fallback, True, 0
                    continue
                if fault.cls is FaultClass.AUTH:
                    log.error(
                        "model server rejected our credentials (HTTP %s): check OPENAI_API_KEY",
                        fault.status,
                    )
                if not strategy.retry or attempt >= self.max_retries:
                    log.warning("model call failed: %s (%s) after %d attempt(s)",
                                fault.cls, type(exc).__name__, attempt + 1)
                    raise TurnFailed(strategy.failure, strategy.user_message, fault.retry_after, fault.cls) from exc
                delay = self.backoff.delay(attempt, fault.retry_after if strategy.honour_retry_after else None)
                log.info("model call failed (%s); retry %d in %.2fs", fault.cls, attempt + 1, delay)
                attempt += 1
                await self._sleep(delay)


    async def _tool_fallback(
        self, prepare: Prepare, messages: Sequence[BaseMessage], config: RunnableConfig | None, result: Any
    ) -> Any:
        """A reply with no tool call to a request that offered tools, where the planner would call
        one: the model cannot (or would not) use tools, so the planner's call is used instead."""
        if not isinstance(result, AIMessage) or result.tool_calls:
            return result
        planned = await self._stand_in(prepare, messages, config, "the model answered without calling a tool")
        return result if planned is None else planned

    async def _stand_in(
        self, prepare: Prepare, messages: Sequence[BaseMessage], config: RunnableConfig | None, why: str
    ) -> AIMessage | None:
        """The planner's reply to a request that offered tools, when the model's is unusable (`why`):
        its tool call, noted in PLANNER_STEPS so the runtime's footer says so; or, once it made
        this turn's calls, its answer from their results. None without a planner or tools, or when
        the planner would neither call a tool nor has called one."""
        if self.planner is None or not (getattr(prepare(self.primary), "kwargs", None) or {}).get("tools"):
            return None
        planned = await prepare(self.planner).ainvoke(list(messages), config)
        steps = PLANNER_STEPS.get()
        if not isinstance(planned, AIMessage) or not (planned.tool_calls or steps):
            return None
        if planned.tool_calls:
            log.warning("%s; the planner called %s", why, ", ".join(c["name"] for c in planned.tool_calls))
            if steps is not None:
                steps.append(planned.tool_calls[0]["name"])
        return planned


# When the current turn must end (time.monotonic()), set per turn by the runtime: a retry that
# cannot finish before it is not started, so a looping model is cut by its output limit and the
# agent's fallback answers, instead of the turn deadline cutting the whole turn.
TURN_ENDS: ContextVar[float | None] = ContextVar("turn_ends", default=None)


def _time_for(seconds: float) -> bool:
    """Whether `seconds` of work (with a margin) still fit in the current turn."""
    ends = TURN_ENDS.get()
    return ends is None or time.monotonic() + 1.25 * seconds < ends


# Tool calls the planner made for a model in the current turn (set per turn by the runtime).
PLANNER_STEPS: ContextVar[list[str] | None] = ContextVar("planner_steps", default=None)
PLANNER_FOOTER = say("planner_footer")


def openai_length() -> Exception:
    """The SDK's own error for a reply cut off at the limit (raised here for tool calls too)."""
    import openai

    return openai.LengthFinishReasonError(completion=SimpleNamespace(usage=None))  # type: ignore[arg-type]


def openai_content_filter() -> Exception:
    import openai

    return openai.ContentFilterFinishReasonError()
