"""A fake OpenAI-compatible HTTP server, for tests and benchmarks that run the real OpenAI clients.

It speaks enough of the wire format for the `openai` SDK and langchain-openai's `ChatOpenAI`
(Chat Completions, non-streaming and SSE streaming) to work against it unchanged:

- ``POST /v1/chat/completions``: text, tool calls (streamed as ``tool_calls`` deltas split over
  several chunks), ``response_format`` (the reply content is JSON), ``stream_options.include_usage``
  (a final chunk with empty ``choices`` and ``usage``).
- ``POST /v1/embeddings``: deterministic hashed bag-of-words vectors, L2-normalised, ``float`` or
  ``base64`` encoded (the SDK asks for base64 by default).
- ``GET /v1/models``: the models given to the constructor.
- An output limit (``max_completion_tokens`` or ``max_tokens``) is honoured: a longer reply is cut at
  the limit (mid tool-call JSON if need be) and ends with ``finish_reason: "length"``.

What a chat completion answers, in order:

1. a fault set with `FakeOpenAI.fail_model` for the requested model (consumes nothing);
2. the next fault queued with `FakeOpenAI.fail_next` (one fault per request, chat or embeddings);
3. with `FakeOpenAI.fail_randomly(rate, faults)`, one of `faults` for that share of requests;
4. the next reply queued with `FakeOpenAI.script`;
5. ``FakeOpenAI.responder(request)``; the default echoes the last user message, or, when the
   request asks for a JSON schema or forces a named tool, returns a minimal value of that schema.

A failed request never consumes a scripted reply. Faults use OpenAI's error body
``{"error": {"message", "type", "param", "code"}}`` and status codes, so the SDK raises the same
exception classes as against the real service. ``FakeOpenAI.latency`` is slept before every chat
completion response, faults included, which makes concurrency measurable.

Token counting is a deterministic approximation (tiktoken would download its encodings): a token
is a match of the regular expression ``\\w+|[^\\w\\s]``. ``prompt_tokens`` counts the tokens of
every message's text content, of every tool call's ``arguments`` string in the messages, and of
``json.dumps(tools)`` when tools are sent; ``completion_tokens`` counts the reply's content and its
tool calls' ``arguments``; for embeddings ``prompt_tokens`` counts the input texts (a pre-tokenised
input counts one token per integer). Nothing else is counted: no per-message overhead.

Standalone, for manual runs of the bot with ``OPENAI_BASE_URL``::

    python -m tests.fakes.openai_server --port 8089
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import inspect
import itertools
import json
import math
import random
import re
import struct
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

__all__ = [
    "FakeOpenAI",
    "Fault",
    "RecordedRequest",
    "Reply",
    "ScriptedToolCall",
    "count_tokens",
    "default_responder",
]

_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(r"\w+")
# Streamed content is split after each word so clients see many small deltas.
_STREAM_PIECE = re.compile(r"\S+\s*|\s+")
_ARGUMENT_PIECE_CHARS = 12


def count_tokens(text: str) -> int:
    """The fake's token count of `text` (see the module docstring for the rule)."""
    return len(_TOKEN.findall(text))


# --- replies ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScriptedToolCall:
    name: str
    arguments: dict[str, Any] | str  # a str is sent verbatim, so it can be invalid JSON on purpose
    id: str | None = None  # None: the server numbers it ("call_1", "call_2", ...)

    @property
    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


ToolCallSpec = ScriptedToolCall | tuple[str, dict[str, Any] | str] | tuple[str, dict[str, Any] | str, str]


@dataclass(frozen=True)
class Reply:
    """One assistant message the server will answer with."""

    content: str | None = None
    calls: tuple[ScriptedToolCall, ...] = ()
    finish_reason: str | None = None  # None: "tool_calls" when there are calls, else "stop"

    @classmethod
    def text(cls, content: str) -> Reply:
        return cls(content=content)

    @classmethod
    def tool_calls(cls, calls: Iterable[ToolCallSpec], content: str | None = None) -> Reply:
        """Calls as `(name, arguments)`, `(name, arguments, id)` or `ScriptedToolCall`."""
        return cls(content=content, calls=tuple(_as_tool_call(c) for c in calls))

    @classmethod
    def json(cls, data: Any) -> Reply:
        """Content that is `data` as JSON: the answer to a `response_format` request."""
        return cls(content=json.dumps(data))

    @property
    def effective_finish_reason(self) -> str:
        return self.finish_reason or ("tool_calls" if self.calls else "stop")

    @property
    def completion_tokens(self) -> int:
        return count_tokens(self.content or "") + sum(count_tokens(c.arguments_json) for c in self.calls)


def _prefix(text: str, tokens: int) -> str:
    """The start of `text` holding its first `tokens` tokens (the fake's token rule)."""
    matches = list(itertools.islice(_TOKEN.finditer(text), tokens))
    return text[: matches[-1].end()] if matches else ""


def cut_at(reply: Reply, limit: int) -> Reply:
    """What a server sends when the reply reaches the output limit: the first `limit` tokens
    (content first, then tool call arguments, the last one cut mid-JSON) and finish_reason "length"."""
    content = _prefix(reply.content or "", limit) if reply.content else reply.content
    left = limit - count_tokens(content or "")
    calls = []
    for call in reply.calls:
        if left <= 0:
            break
        arguments = call.arguments_json
        if count_tokens(arguments) > left:
            arguments = _prefix(arguments, left)
        calls.append(ScriptedToolCall(call.name, arguments, call.id))
        left -= count_tokens(arguments)
    return Reply(content=content, calls=tuple(calls), finish_reason="length")


def _as_tool_call(spec: ToolCallSpec) -> ScriptedToolCall:
    if isinstance(spec, ScriptedToolCall):
        return spec
    if len(spec) == 3:
        return ScriptedToolCall(spec[0], spec[1], spec[2])
    return ScriptedToolCall(spec[0], spec[1])


# --- faults ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fault:
    """One way for a request to fail. Build with the class methods."""

    kind: Literal["error", "hang", "malformed"]
    status: int = 200
    message: str = ""
    type: str | None = None
    code: str | None = None
    param: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0

    @classmethod
    def error(
        cls,
        status: int,
        message: str,
        *,
        type: str | None,
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Fault:
        """Any OpenAI-style error response, e.g. a 400 with code "context_length_exceeded"."""
        return cls("error", status, message, type, code, param, tuple((headers or {}).items()))

    @classmethod
    def rate_limit(cls, retry_after: float | None = 1.0) -> Fault:
        """429 `rate_limit_exceeded`. Like OpenAI, `Retry-After` carries whole seconds (rounded up)
        and `retry-after-ms` the exact delay, which the SDK prefers."""
        headers = {}
        if retry_after is not None:
            headers = {
                "retry-after": str(math.ceil(retry_after)),
                "retry-after-ms": str(round(retry_after * 1000)),
            }
        wait = f" Please try again in {retry_after:g}s." if retry_after is not None else ""
        return cls.error(
            429,
            "Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1." + wait,
            type="requests",
            code="rate_limit_exceeded",
            headers=headers,
        )

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        message = {
            502: "Bad gateway.",
            503: "The server is overloaded or not ready yet.",
        }.get(status, "The server had an error while processing your request. Sorry about that!")
        return cls.error(status, message, type="server_error")

    @classmethod
    def unauthorized(cls) -> Fault:
        return cls.error(
            401,
            "Incorrect API key provided: sk-fake***. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            type="invalid_request_error",
            code="invalid_api_key",
        )

    @classmethod
    def model_not_found(cls) -> Fault:
        # The message names the requested model; see FakeOpenAI._error_response.
        return cls.error(
            404,
            "The model `{model}` does not exist or you do not have access to it.",
            type="invalid_request_error",
            code="model_not_found",
        )

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Fault:
        """Say nothing for `seconds` (meant to outlast the client's timeout), then answer 504.
        Closing the server ends the wait early."""
        return cls(
            "hang",
            504,
            "The server timed out while processing your request.",
            "server_error",
            seconds=seconds,
        )

    @classmethod
    def malformed_chunk(cls) -> Fault:
        """Status 200, but a streamed response carries a chunk that is not valid JSON, and a
        non-streamed response's body (Content-Type application/json) is not JSON."""
        return cls("malformed")

    def body(self, model: str | None) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message.replace("{model}", model or ""),
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }


# --- recorded requests -----------------------------------------------------------------------


@dataclass
class RecordedRequest:
    """A request as the server saw it; `status` and `completion_tokens` are filled in on answer."""

    path: str
    body: dict[str, Any]
    received_at: float  # time.monotonic()
    prompt_tokens: int
    model: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = None
    response_format: dict[str, Any] | None = None
    stream: bool = False
    input: list[Any] = field(default_factory=list)  # embeddings input, always a list
    max_tokens: int | None = None  # the request's output limit (max_completion_tokens or max_tokens)
    completion_tokens: int = 0
    status: int | None = None  # None while the answer is pending
    reply: Reply | None = None
    fault: Fault | None = None

    @property
    def last_user_message(self) -> str:
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""


Responder = Callable[[RecordedRequest], Reply | Awaitable[Reply]]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = (p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
        return "\n".join(parts)
    return ""


def _prompt_tokens(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None) -> int:
    total = 0
    for message in messages:
        total += count_tokens(_text_of(message.get("content")))
        for call in message.get("tool_calls") or ():
            total += count_tokens(str((call.get("function") or {}).get("arguments", "")))
    if tools:
        total += count_tokens(json.dumps(tools))
    return total


# --- default responses -----------------------------------------------------------------------


def default_responder(request: RecordedRequest) -> Reply:
    """Echo the last user message; satisfy a requested JSON schema or forced tool minimally."""
    response_format = request.response_format or {}
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema") or {}
        return Reply.json(example_of(schema))
    if response_format.get("type") == "json_object":
        return Reply.json({})
    forced = request.tool_choice
    if isinstance(forced, dict) and forced.get("type") == "function":
        name = forced["function"]["name"]
        for tool in request.tools or ():
            function = tool.get("function") or {}
            if function.get("name") == name:
                return Reply.tool_calls([(name, example_of(function.get("parameters") or {}))])
    return Reply.text(f"Echo: {request.last_user_message[:200]}")


def example_of(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """A small value that validates against a JSON schema (the subset pydantic generates)."""
    defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    if "$ref" in schema:
        return example_of(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return example_of(schema[key][0], defs)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        return {name: example_of(properties[name], defs) for name in required if name in properties}
    return {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False}.get(kind)


# --- embeddings ------------------------------------------------------------------------------


def embed(text: str, dimensions: int) -> list[float]:
    """A hashed bag of words: each lowercase word adds ±1 to one coordinate, then L2-normalised."""
    vector = [0.0] * dimensions
    for word in _WORD.findall(text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        vector[value % dimensions] += 1.0 if (value >> 63) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0:
        # An empty text still gets a unit vector: a zero vector breaks cosine distance.
        return [1.0] + [0.0] * (dimensions - 1)
    return [x / norm for x in vector]


# --- the server ------------------------------------------------------------------------------


class FakeOpenAI:
    """The fake server. Use as `async with FakeOpenAI() as server:`; point clients at `base_url`."""

    def __init__(
        self,
        models: Sequence[str] = ("gpt-4o-mini", "text-embedding-3-small"),
        *,
        latency: float = 0.0,
        embedding_dimensions: int = 64,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.models = tuple(models)
        self.latency = latency
        self.embedding_dimensions = embedding_dimensions
        self.responder: Responder = default_responder
        self.requests: list[RecordedRequest] = []
        self._host = host
        self._port = port
        self._replies: deque[Reply] = deque()
        self._faults: deque[Fault] = deque()
        self._model_faults: dict[str, Fault] = {}
        self._random_faults: tuple[float, tuple[Fault, ...], random.Random] = (0.0, (), random.Random(0))
        self._ids = itertools.count(1)
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._bound_port: int | None = None

    # -- lifecycle

    async def start(self) -> FakeOpenAI:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._list_models)
        self._closing.clear()
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port)
        await site.start()
        self._bound_port = self._runner.addresses[0][1]
        return self

    async def close(self) -> None:
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAI:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def port(self) -> int:
        if self._bound_port is None:
            raise RuntimeError("the server is not started")
        return self._bound_port

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}/v1"

    # -- scripting

    def script(self, *replies: Reply) -> None:
        """Queue replies; each chat completion that does not fail takes the next one."""
        self._replies.extend(replies)

    def fail_next(self, *faults: Fault) -> None:
        """Queue faults; each of the next requests (chat or embeddings) fails with one of them."""
        self._faults.extend(faults)

    def fail_randomly(self, rate: float, faults: Sequence[Fault], *, seed: int = 0) -> None:
        """From now on a share `rate` of requests fails, each with one of `faults` chosen at random
        (seeded: a run is repeatable); rate 0 stops it."""
        self._random_faults = (rate, tuple(faults), random.Random(seed))

    def fail_model(self, model: str, fault: Fault | None) -> None:
        """Every request for `model` fails with `fault` from now on; `None` heals the model."""
        if fault is None:
            self._model_faults.pop(model, None)
        else:
            self._model_faults[model] = fault

    @property
    def pending_replies(self) -> int:
        return len(self._replies)

    @property
    def total_prompt_tokens(self) -> int:
        return sum(r.prompt_tokens for r in self.requests)

    @property
    def total_completion_tokens(self) -> int:
        return sum(r.completion_tokens for r in self.requests)

    # -- handlers

    async def _chat_completions(self, http: web.Request) -> web.StreamResponse:
        body = await _json_body(http)
        if isinstance(body, web.Response):
            return body
        messages = body.get("messages")
        if not isinstance(body.get("model"), str) or not isinstance(messages, list):
            return _invalid_request("'model' and 'messages' are required.")
        tools = body.get("tools") or None
        request = RecordedRequest(
            path=http.path,
            body=body,
            received_at=time.monotonic(),
            prompt_tokens=_prompt_tokens(messages, tools),
            model=body["model"],
            messages=messages,
            tools=tools,
            tool_choice=body.get("tool_choice"),
            response_format=body.get("response_format"),
            stream=bool(body.get("stream")),
        )
        self.requests.append(request)
        # Decided on arrival, so concurrent requests take faults and replies in arrival order.
        request.fault = self._take_fault(request.model)
        if request.fault is None:
            request.reply = self._replies.popleft() if self._replies else None
        await self._pause(self.latency)
        if request.fault is not None:
            return await self._fault_response(http, request, request.fault)
        if request.reply is None:
            reply = self.responder(request)
            request.reply = await reply if inspect.isawaitable(reply) else reply
        assert request.reply is not None
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        request.max_tokens = limit if isinstance(limit, int) else None
        if request.max_tokens is not None and request.reply.completion_tokens > request.max_tokens:
            request.reply = cut_at(request.reply, request.max_tokens)
        request.completion_tokens = request.reply.completion_tokens
        request.status = 200
        completion_id = f"chatcmpl-{next(self._ids):08d}"
        if not request.stream:
            return web.json_response(self._completion(completion_id, request, request.reply))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = self._completion_chunks(completion_id, request, request.reply, include_usage)
        return await _send_events(http, (json.dumps(c) for c in chunks))

    async def _embeddings(self, http: web.Request) -> web.StreamResponse:
        body = await _json_body(http)
        if isinstance(body, web.Response):
            return body
        raw = body.get("input")
        if not isinstance(body.get("model"), str) or raw is None:
            return _invalid_request("'model' and 'input' are required.")
        # str | list[str] | list[int] | list[list[int]] -> list of str | list[int]
        inputs = [raw] if isinstance(raw, str) or (raw and isinstance(raw[0], int)) else list(raw)
        texts = [i if isinstance(i, str) else " ".join(f"t{t}" for t in i) for i in inputs]
        tokens = sum(count_tokens(i) if isinstance(i, str) else len(i) for i in inputs)
        request = RecordedRequest(
            path=http.path,
            body=body,
            received_at=time.monotonic(),
            prompt_tokens=tokens,
            model=body["model"],
            input=inputs,
        )
        self.requests.append(request)
        request.fault = self._take_fault(request.model)
        if request.fault is not None:
            return await self._fault_response(http, request, request.fault)
        dimensions = int(body.get("dimensions") or self.embedding_dimensions)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = embed(text, dimensions)
            encoded: Any = (
                base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode() if as_base64 else vector
            )
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        request.status = 200
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": request.model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    async def _list_models(self, http: web.Request) -> web.Response:
        created = 1_700_000_000
        data = [{"id": m, "object": "model", "created": created, "owned_by": "system"} for m in self.models]
        return web.json_response({"object": "list", "data": data})

    # -- helpers

    def _take_fault(self, model: str | None) -> Fault | None:
        if model in self._model_faults:
            return self._model_faults[model]
        if self._faults:
            return self._faults.popleft()
        rate, faults, rng = self._random_faults
        return rng.choice(faults) if faults and rng.random() < rate else None

    async def _pause(self, seconds: float) -> None:
        """Sleep, but wake as soon as the server closes so shutdown never waits on a hang."""
        if seconds > 0 and not self._closing.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), seconds)

    async def _fault_response(
        self, http: web.Request, request: RecordedRequest, fault: Fault
    ) -> web.StreamResponse:
        if fault.kind == "hang":
            await self._pause(fault.seconds)
        request.status = fault.status
        if fault.kind != "malformed":
            return web.json_response(
                fault.body(request.model),
                status=fault.status,
                headers={"x-request-id": f"req_{next(self._ids):08d}", **dict(fault.headers)},
            )
        if not request.stream:
            return web.Response(
                text='{"id": "chatcmpl-broken", "choices": [{"mess', content_type="application/json"
            )
        good = self._completion_chunks("chatcmpl-broken", request, Reply.text("partial"), False)[0]
        return await _send_events(http, [json.dumps(good), '{"id": "chatcmpl-broken", "choices": [{"delta'])

    def _completion(self, completion_id: str, request: RecordedRequest, reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.content,
            "refusal": None,
            "annotations": [],
        }
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": self._call_id(call),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json},
                }
                for call in reply.calls
            ]
        return {
            **self._envelope(completion_id, request, "chat.completion"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": reply.effective_finish_reason,
                }
            ],
            "usage": _usage(request),
        }

    def _completion_chunks(
        self, completion_id: str, request: RecordedRequest, reply: Reply, include_usage: bool
    ) -> list[dict[str, Any]]:
        envelope = self._envelope(completion_id, request, "chat.completion.chunk")
        if include_usage:
            envelope["usage"] = None

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
            return {**envelope, "choices": [choice]}

        chunks = [chunk({"role": "assistant", "content": "", "refusal": None})]
        chunks += [chunk({"content": piece}) for piece in _STREAM_PIECE.findall(reply.content or "")]
        for index, call in enumerate(reply.calls):
            opening = {
                "index": index,
                "id": self._call_id(call),
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            chunks.append(chunk({"tool_calls": [opening]}))
            chunks += [
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                for piece in _pieces(call.arguments_json, _ARGUMENT_PIECE_CHARS)
            ]
        chunks.append(chunk({}, reply.effective_finish_reason))
        if include_usage:
            chunks.append({**envelope, "choices": [], "usage": _usage(request)})
        return chunks

    def _envelope(self, completion_id: str, request: RecordedRequest, obj: str) -> dict[str, Any]:
        return {
            "id": completion_id,
            "object": obj,
            "created": int(time.time()),
            "model": request.model,
            "system_fingerprint": "fp_fake",
            "service_tier": "default",
        }

    def _call_id(self, call: ScriptedToolCall) -> str:
        return call.id or f"call_{next(self._ids)}"


def _usage(request: RecordedRequest) -> dict[str, Any]:
    return {
        "prompt_tokens": request.prompt_tokens,
        "completion_tokens": request.completion_tokens,
        "total_tokens": request.prompt_tokens + request.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def _pieces(text: str, size: int) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]


async def _json_body(http: web.Request) -> dict[str, Any] | web.Response:
    try:
        body = await http.json()
    except ValueError:
        return _invalid_request("We could not parse the JSON body of your request.")
    if not isinstance(body, dict):
        return _invalid_request("The request body must be a JSON object.")
    return body


def _invalid_request(message: str) -> web.Response:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    return web.json_response({"error": error}, status=400)


async def _send_events(http: web.Request, payloads: Iterable[str]) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}
    )
    await response.prepare(http)
    # A client that hangs up mid-stream is not the server's error.
    with contextlib.suppress(ConnectionResetError):
        for payload in payloads:
            await response.write(f"data: {payload}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
    return response


# --- standalone ------------------------------------------------------------------------------


async def _serve(port: int, models: Sequence[str], latency: float) -> None:
    async with FakeOpenAI(models, latency=latency, port=port) as server:
        print(
            f"Fake OpenAI server on {server.base_url} (models: {', '.join(models)}); Ctrl-C stops it.",
            flush=True,
        )
        await asyncio.Event().wait()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the fake OpenAI-compatible server.")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument(
        "--models",
        default="gpt-4o-mini,text-embedding-3-small",
        help="comma-separated model ids for /v1/models",
    )
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to each chat completion")
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args.port, [m for m in args.models.split(",") if m], args.latency))


if __name__ == "__main__":
    main()
