"""bot/llm.py's streaming fast path (`_StreamingCompletions`), through the real openai SDK and the fake
server, checked against ChatOpenAI's own typed `chat.completions.create` path."""

from __future__ import annotations

import asyncio
import gc
import json
import warnings
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from openai.resources.chat.completions import AsyncCompletions
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from pydantic import BaseModel

from bot.config import Settings
from bot.faults import FaultClass, classify
from bot.llm import ModelProvider, _StreamingCompletions, close_chat_model, openai_chat_model
from tests.fakes.openai_server import FakeOpenAI, Fault, Reply

MODEL = "gpt-4o-mini"


@tool
def lookup(topic: str, limit: int = 5) -> str:
    """Look up a topic in the knowledge base."""
    return "[]"


class Verdict(BaseModel):
    label: str
    score: int
    reasons: list[str]


class TypedCreateSpy:
    """Counts calls of the SDK's typed `chat.completions.create`, per client."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.clients: list[Any] = []
        original = AsyncCompletions.create

        async def create(resource: AsyncCompletions, *args: Any, **kwargs: Any) -> Any:
            self.clients.append(resource._client)
            return await original(resource, *args, **kwargs)

        monkeypatch.setattr(AsyncCompletions, "create", create)

    def calls(self, model: ChatOpenAI) -> int:
        return sum(client is model.root_async_client for client in self.clients)


@pytest.fixture
def typed_create(monkeypatch: pytest.MonkeyPatch) -> TypedCreateSpy:
    return TypedCreateSpy(monkeypatch)


@pytest.fixture
async def fast(openai_settings: Settings) -> AsyncIterator[ChatOpenAI]:
    model = openai_chat_model(openai_settings, MODEL)
    assert isinstance(model, ChatOpenAI) and isinstance(model.async_client, _StreamingCompletions)
    yield model
    await close_chat_model(model)


@pytest.fixture
async def reference(openai_settings: Settings) -> AsyncIterator[ChatOpenAI]:
    """ChatOpenAI with its default clients: the typed SDK path over httpx. `temperature` and `timeout`
    are set as openai_chat_model sets them, so both send the same request. The httpx client is the
    default kind, but our own: langchain-openai caches its default one per (base_url, timeout) for
    the whole process, and closing that here could hand a closed client to a later test whose fake
    server happens to reuse the port."""
    model = ChatOpenAI(
        http_async_client=openai.DefaultAsyncHttpxClient(timeout=openai_settings.llm_timeout),
        model=MODEL,
        api_key=openai_settings.openai_api_key,
        base_url=openai_settings.openai_base_url,
        streaming=True,
        stream_usage=True,
        use_responses_api=False,
        max_retries=0,
        temperature=0,
        timeout=openai_settings.llm_timeout,
    )
    assert model.async_client is model.root_async_client.chat.completions  # the typed resource
    yield model
    await model.root_async_client.close()


def conversation() -> list[BaseMessage]:
    """A conversation with every message kind the bot sends, so the request bodies have some shape."""
    return [
        SystemMessage("You are a concierge. Be brief."),
        HumanMessage("Find me something about otters."),
        AIMessage(
            "",
            tool_calls=[{"name": "lookup", "args": {"topic": "otters"}, "id": "call_prev", "type": "tool_call"}],
        ),
        ToolMessage('[{"title": "Otters hold hands"}]', tool_call_id="call_prev"),
        HumanMessage("And sea lions? Unicode too: café, 東京 ✓"),
    ]


REPLIES = {
    "text": Reply.text("Sea lions are eared seals. They bark, café-side, in 東京 too ✓"),
    "tool_calls": Reply.tool_calls(
        [
            ("lookup", {"topic": "sea lions", "limit": 3}, "call_alpha"),
            ("lookup", {"topic": "eared seals and their long-distance migrations"}, "call_beta"),
        ]
    ),
    "tool_calls_and_text": Reply.tool_calls(
        [("lookup", {"topic": "sea lions"}, "call_gamma")], content="Let me check that for you."
    ),
    "empty": Reply.text(""),
}


def chunk_view(chunk: AIMessageChunk) -> dict[str, Any]:
    return {
        "content": chunk.content,
        "tool_call_chunks": chunk.tool_call_chunks,
        "usage_metadata": chunk.usage_metadata,
        "response_metadata": chunk.response_metadata,
        "additional_kwargs": chunk.additional_kwargs,
    }


def message_view(message: AIMessage) -> dict[str, Any]:
    return {
        "content": message.content,
        "tool_calls": [(c["name"], c["args"], c["id"]) for c in message.tool_calls],
        "invalid_tool_calls": message.invalid_tool_calls,
        "usage_metadata": message.usage_metadata,
        "response_metadata": message.response_metadata,
        "additional_kwargs": message.additional_kwargs,
    }


async def run_both_ways(server: FakeOpenAI, model: ChatOpenAI, reply: Reply) -> dict[str, Any]:
    bound = model.bind_tools([lookup])
    server.script(reply)
    chunks = [chunk async for chunk in bound.astream(conversation())]
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    streamed: AIMessageChunk = chunks[0]  # type: ignore[assignment]
    for chunk in chunks[1:]:
        streamed = streamed + chunk  # type: ignore[assignment,operator]
    server.script(reply)
    final = await bound.ainvoke(conversation())
    assert isinstance(final, AIMessage)
    return {
        "chunks": [chunk_view(c) for c in chunks],  # type: ignore[arg-type]
        "streamed": message_view(streamed),  # type: ignore[arg-type]
        "final": message_view(final),
    }


@pytest.mark.parametrize("reply_name", list(REPLIES))
async def test_fast_path_gives_the_same_langchain_result_as_the_typed_path(
    reply_name: str,
    fake_openai: FakeOpenAI,
    fast: ChatOpenAI,
    reference: ChatOpenAI,
    typed_create: TypedCreateSpy,
) -> None:
    reply = REPLIES[reply_name]
    got = await run_both_ways(fake_openai, fast, reply)
    assert typed_create.calls(fast) == 0  # the fast path really was taken ...
    want = await run_both_ways(fake_openai, reference, reply)
    assert typed_create.calls(reference) == 2  # ... and the reference took the typed one

    assert [c["content"] for c in got["chunks"]] == [c["content"] for c in want["chunks"]]
    assert got["chunks"] == want["chunks"]
    assert got["streamed"] == want["streamed"]
    assert got["final"] == want["final"]

    # Not vacuous: the result is the scripted reply, with the server's token counts.
    requests = fake_openai.requests
    assert len(requests) == 4 and all(r.status == 200 and r.stream for r in requests)
    final = got["final"]
    assert final["content"] == (reply.content or "")
    assert "".join(str(c["content"]) for c in got["chunks"]) == (reply.content or "")
    assert len([c for c in got["chunks"] if c["content"]]) > 1 or not reply.content  # streamed piecewise
    assert final["tool_calls"] == [(c.name, c.arguments, c.id) for c in reply.calls]
    assert final["usage_metadata"]["input_tokens"] == requests[0].prompt_tokens > 0
    assert final["usage_metadata"]["output_tokens"] == requests[0].completion_tokens
    assert final["usage_metadata"]["total_tokens"] == requests[0].prompt_tokens + requests[0].completion_tokens
    assert final["response_metadata"]["finish_reason"] == reply.effective_finish_reason

    # Both paths put the same JSON on the wire.
    assert requests[0].body == requests[2].body
    assert requests[1].body == requests[3].body
    assert requests[0].body["stream"] is True
    assert requests[0].body["stream_options"] == {"include_usage": True}
    assert [t["function"]["name"] for t in requests[0].body["tools"]] == ["lookup"]


async def test_fast_create_sends_the_same_http_request_and_chunks_as_the_typed_create(
    fake_openai: FakeOpenAI, fast: ChatOpenAI
) -> None:
    """One SDK client, both ways: same method, URL, headers (auth included) and body; the fast path's
    dict chunks are the typed chunks' wire form."""
    client: openai.AsyncOpenAI = fast.root_async_client
    sent: list[Any] = []

    async def record(request: Any) -> None:
        sent.append(request)

    client._client.event_hooks = {"request": [record], "response": []}
    payload: dict[str, Any] = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Say hello to 東京"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}],
        "temperature": 0,
    }
    reply = Reply.tool_calls([("lookup", {"q": "hello"}, "call_1")], content="Hello, 東京!")
    fake_openai.script(reply, reply)
    streams = [await fast.async_client.create(**payload), await client.chat.completions.create(**payload)]
    received = []
    for stream in streams:
        async with stream:
            received.append([chunk async for chunk in stream])
    fast_chunks, typed_chunks = received

    assert all(type(c) is dict for c in fast_chunks)
    assert all(isinstance(c, ChatCompletionChunk) for c in typed_chunks)

    def wire(chunk: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in chunk.items() if k not in ("id", "created")}

    assert [wire(c) for c in fast_chunks] == [wire(c.model_dump(exclude_unset=True)) for c in typed_chunks]
    assert fast_chunks[-1]["usage"]["prompt_tokens"] == fake_openai.requests[0].prompt_tokens

    fast_request, typed_request = sent
    assert (fast_request.method, str(fast_request.url)) == (typed_request.method, str(typed_request.url))
    assert str(fast_request.url) == f"{fake_openai.base_url}/chat/completions"
    assert dict(fast_request.headers) == dict(typed_request.headers)
    assert fast_request.headers["authorization"] == "Bearer sk-test-secret-value"
    assert json.loads(fast_request.content) == json.loads(typed_request.content) == payload


async def test_only_plain_streaming_requests_take_the_fast_path(
    fake_openai: FakeOpenAI, fast: ChatOpenAI, typed_create: TypedCreateSpy
) -> None:
    payload = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    completion = await fast.async_client.create(**payload)
    assert isinstance(completion, ChatCompletion)
    assert completion.choices[0].message.content == "Echo: hi"
    stream = await fast.async_client.create(**payload, stream=True, extra_headers={"X-Trace": "1"})
    async with stream:
        assert all(isinstance(c, ChatCompletionChunk) for c in [c async for c in stream])
    assert typed_create.calls(fast) == 2
    stream = await fast.async_client.create(**payload, stream=True)
    async with stream:
        assert all(type(c) is dict for c in [c async for c in stream])
    assert typed_create.calls(fast) == 2
    assert [r.stream for r in fake_openai.requests] == [False, True, True]


async def test_rate_limit_through_the_fast_path_is_a_rate_limit_error(
    fake_openai: FakeOpenAI, fast: ChatOpenAI, typed_create: TypedCreateSpy
) -> None:
    fake_openai.fail_next(Fault.rate_limit(retry_after=2.5))
    with pytest.raises(openai.RateLimitError) as info:
        await fast.ainvoke("hello")
    assert typed_create.calls(fast) == 0
    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "3"
    fault = classify(info.value)
    assert fault.cls is FaultClass.RATE_LIMITED
    assert fault.retry_after == 2.5  # retry-after-ms wins over the rounded Retry-After
    assert fault.strategy.retry and fault.strategy.honour_retry_after
    assert len(fake_openai.requests) == 1  # max_retries=0: the SDK did not retry on its own

    fake_openai.script(Reply.text("Fine now."))
    assert (await fast.ainvoke("hello")).content == "Fine now."  # the client is still usable


async def test_malformed_stream_chunk_through_the_fast_path_is_transient(
    fake_openai: FakeOpenAI, fast: ChatOpenAI, typed_create: TypedCreateSpy
) -> None:
    fake_openai.fail_next(Fault.malformed_chunk())
    with pytest.raises(Exception) as info:
        await fast.ainvoke("hello")
    assert typed_create.calls(fast) == 0
    fault = classify(info.value)
    assert fault.cls is FaultClass.TRANSIENT
    assert fault.strategy.retry

    fake_openai.script(Reply.text("Recovered."))
    assert (await fast.ainvoke("hello")).content == "Recovered."


FAULTS = {
    "rate_limit": Fault.rate_limit(retry_after=1.5),
    "server_error": Fault.server_error(503),
    "unauthorized": Fault.unauthorized(),
    "model_not_found": Fault.model_not_found(),
    "context_length": Fault.error(
        400, "This model's maximum context length is 128000 tokens.",
        type="invalid_request_error", code="context_length_exceeded", param="messages",
    ),
    "malformed_chunk": Fault.malformed_chunk(),
}


@pytest.mark.parametrize("fault_name", list(FAULTS))
async def test_faults_classify_the_same_on_both_paths(
    fault_name: str, fake_openai: FakeOpenAI, fast: ChatOpenAI, reference: ChatOpenAI
) -> None:
    errors: list[BaseException] = []
    for model in (fast, reference):
        fake_openai.fail_next(FAULTS[fault_name])
        with pytest.raises(Exception) as info:
            await model.ainvoke("hello")
        errors.append(info.value)
    fast_error, reference_error = errors
    assert type(fast_error) is type(reference_error)
    assert classify(fast_error) == classify(reference_error)
    if isinstance(fast_error, openai.APIStatusError):
        assert isinstance(reference_error, openai.APIStatusError)
        assert fast_error.status_code == reference_error.status_code == FAULTS[fault_name].status
        assert fast_error.body == reference_error.body
    assert len(fake_openai.requests) == 2


async def test_structured_output_with_json_schema_still_works(
    fake_openai: FakeOpenAI, fast: ChatOpenAI, typed_create: TypedCreateSpy
) -> None:
    structured = fast.with_structured_output(Verdict, method="json_schema")
    fake_openai.script(Reply.json({"label": "fine", "score": 7, "reasons": ["short", "clear"]}))
    with warnings.catch_warnings():
        # langchain-openai model_dumps the SDK's typed stream events, whose `parsed` field is
        # declared None, so pydantic warns; the result is unaffected (see test_fake_openai_server).
        warnings.filterwarnings("ignore", "Pydantic serializer warnings", UserWarning)
        verdict = await structured.ainvoke("Judge this text.")
    assert verdict == Verdict(label="fine", score=7, reasons=["short", "clear"])
    request = fake_openai.requests[-1]
    assert request.response_format is not None and request.response_format["type"] == "json_schema"
    assert request.response_format["json_schema"]["name"] == "Verdict"
    assert request.response_format["json_schema"]["schema"]["required"] == ["label", "score", "reasons"]
    assert len(fake_openai.requests) == 1 and request.stream
    assert typed_create.calls(fast) == 1  # the SDK's typed streaming helper, not the fast path


async def test_closing_releases_the_aiohttp_session(openai_settings: Settings, fake_openai: FakeOpenAI) -> None:
    contexts: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: contexts.append(context))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            provider = ModelProvider(
                openai_chat_model(openai_settings, MODEL), openai_chat_model(openai_settings, "backup-model")
            )
            assert provider.fallback is not None
            for model in (provider.primary, provider.fallback):
                fake_openai.script(Reply.text("ok"))
                assert (await model.ainvoke("hello")).content == "ok"  # opens a session and a connection
            clients = [provider.primary.root_async_client, provider.fallback.root_async_client]  # type: ignore[attr-defined]
            assert not any(client.is_closed() for client in clients)

            await provider.aclose()

            assert all(client.is_closed() for client in clients)
            del provider, model, clients
            gc.collect()
            await asyncio.sleep(0)  # let any exception-handler callback run
    finally:
        loop.set_exception_handler(None)
    assert [str(w.message) for w in caught if "Unclosed" in str(w.message)] == []
    assert [c["message"] for c in contexts] == []
