"""The fake OpenAI server, driven by the real `openai` SDK and langchain-openai's ChatOpenAI."""

from __future__ import annotations

import asyncio
import json
import math
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import openai
import pytest
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, SecretStr

from tests.fakes.openai_server import FakeOpenAI, Fault, RecordedRequest, Reply, count_tokens

REPO = Path(__file__).resolve().parents[1]


class Hotel(BaseModel):
    name: str
    stars: int


class HotelAnswer(BaseModel):
    text: str
    hotels: list[Hotel]


@tool
def search_hotels(city: str, max_price: int | None = None) -> str:
    """Search hotels in a city."""
    return "[]"


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


@pytest.fixture
async def server():
    async with FakeOpenAI(models=("gpt-4o-mini", "backup-model")) as fake:
        yield fake


@pytest.fixture
async def client(server: FakeOpenAI):
    sdk = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=5.0)
    yield sdk
    await sdk.close()


# Short enough that a hung reply (Fault.hang) ends the call at once, but only once connected: a
# connect timeout as short fails on a loaded machine before the fault is ever reached.
HANG_TIMEOUT = openai.Timeout(0.3, connect=5.0)


def chat_model(server: FakeOpenAI, model: str = "gpt-4o-mini", timeout: float | openai.Timeout = 5.0) -> ChatOpenAI:
    return ChatOpenAI(
        model=model,
        base_url=server.base_url,
        api_key=SecretStr("sk-test"),
        use_responses_api=False,
        streaming=True,
        max_retries=0,
        stream_usage=True,
        timeout=timeout,
    )


# langchain-openai model_dumps the SDK's typed stream events, whose `parsed` field is declared None,
# so pydantic warns on every structured-output stream; the result is unaffected.
quiet_parsed_dump = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")


def user(text: str) -> Any:
    return [{"role": "user", "content": text}]


# --- chat completions ------------------------------------------------------------------------


async def test_streamed_text_arrives_in_several_chunks_then_a_usage_chunk(server, client):
    server.script(Reply.text("Three hotels match your dates."))

    stream = await client.chat.completions.create(
        model="gpt-4o-mini", messages=user("hotels?"), stream=True, stream_options={"include_usage": True}
    )
    chunks = [chunk async for chunk in stream]

    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Three hotels match your dates."
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == count_tokens("Three hotels match your dates.")
    assert (
        chunks[-1].usage.total_tokens == chunks[-1].usage.prompt_tokens + chunks[-1].usage.completion_tokens
    )


async def test_streamed_response_without_include_usage_has_no_usage_chunk(server, client):
    stream = await client.chat.completions.create(model="gpt-4o-mini", messages=user("hi"), stream=True)
    chunks = [chunk async for chunk in stream]

    assert all(c.choices and c.usage is None for c in chunks)


async def test_non_streamed_completion_carries_message_and_usage(server, client):
    server.script(Reply.text("Hello"))

    completion = await client.chat.completions.create(model="gpt-4o-mini", messages=user("hi"))

    assert completion.choices[0].message.content == "Hello"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "gpt-4o-mini"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (1, 1)


async def test_chat_openai_streams_text_tokens(server):
    server.script(Reply.text("Paris has many small hotels near the river."))

    chunks = [chunk async for chunk in chat_model(server).astream("hotels in Paris")]

    assert len([c for c in chunks if c.content]) > 1
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged += chunk
    assert isinstance(merged, AIMessageChunk)
    assert merged.content == "Paris has many small hotels near the river."
    assert merged.usage_metadata is not None
    assert merged.usage_metadata["output_tokens"] == count_tokens(
        "Paris has many small hotels near the river."
    )


async def test_streamed_tool_call_arguments_are_split_over_several_chunks(server, client):
    server.script(Reply.tool_calls([("search_hotels", {"city": "Paris", "max_price": 200}, "call_abc")]))

    stream = await client.chat.completions.create(
        model="gpt-4o-mini", messages=user("hotels?"), stream=True, tools=[_schema(search_hotels)]
    )
    deltas = [d for c in [c async for c in stream] for d in (c.choices[0].delta.tool_calls or [])]

    assert len(deltas) > 2
    assert deltas[0].id == "call_abc"
    assert deltas[0].function is not None and deltas[0].function.name == "search_hotels"
    assert all(d.index == 0 and d.id is None for d in deltas[1:])
    arguments = "".join(d.function.arguments or "" for d in deltas if d.function)
    assert json.loads(arguments) == {"city": "Paris", "max_price": 200}


async def test_streamed_tool_calls_assemble_into_ai_message_tool_calls(server):
    server.script(
        Reply.tool_calls([("search_hotels", {"city": "Paris"}), ("get_weather", {"city": "Paris"})])
    )

    message = await chat_model(server).bind_tools([search_hotels, get_weather]).ainvoke("Paris trip")

    assert isinstance(message, AIMessage)
    assert [(c["name"], c["args"]) for c in message.tool_calls] == [
        ("search_hotels", {"city": "Paris"}),
        ("get_weather", {"city": "Paris"}),
    ]
    assert all(c["id"] for c in message.tool_calls)
    assert message.response_metadata["finish_reason"] == "tool_calls"
    request = server.requests[-1]
    assert request.stream is True
    assert [t["function"]["name"] for t in request.tools or []] == ["search_hotels", "get_weather"]


async def test_tool_results_round_trip_into_the_next_request(server):
    server.script(Reply.tool_calls([("search_hotels", {"city": "Rome"}, "call_1")]), Reply.text("Found one."))
    model = chat_model(server).bind_tools([search_hotels], tool_choice="auto")

    first = await model.ainvoke([HumanMessage("Rome hotels")])
    second = await model.ainvoke(
        [HumanMessage("Rome hotels"), first, ToolMessage('[{"name": "Roma Inn"}]', tool_call_id="call_1")]
    )

    assert second.content == "Found one."
    sent = server.requests[-1]
    assert sent.tool_choice == "auto"
    assert [m["role"] for m in sent.messages] == ["user", "assistant", "tool"]
    assert sent.messages[1]["tool_calls"][0]["function"]["arguments"] == '{"city": "Rome"}'


@quiet_parsed_dump
async def test_structured_output_parses_into_a_pydantic_model(server):
    server.script(Reply.json({"text": "Two options.", "hotels": [{"name": "Ritz", "stars": 5}]}))

    answer = await chat_model(server).with_structured_output(HotelAnswer).ainvoke("find me a hotel")

    assert answer == HotelAnswer(text="Two options.", hotels=[Hotel(name="Ritz", stars=5)])
    response_format = server.requests[-1].response_format
    assert response_format is not None
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "HotelAnswer"
    assert response_format["json_schema"]["strict"] is True


@quiet_parsed_dump
async def test_default_responder_answers_a_schema_request_with_a_valid_minimal_value(server):
    answer = await chat_model(server).with_structured_output(HotelAnswer).ainvoke("anything")

    assert answer == HotelAnswer(text="", hotels=[])


async def test_default_responder_calls_a_forced_tool(server):
    model = chat_model(server).with_structured_output(HotelAnswer, method="function_calling")

    assert await model.ainvoke("anything") == HotelAnswer(text="", hotels=[])


async def test_default_responder_echoes_the_last_user_message(server, client):
    completion = await client.chat.completions.create(model="gpt-4o-mini", messages=user("ping"))

    assert completion.choices[0].message.content == "Echo: ping"


async def test_responder_answers_once_the_script_is_used_up(server, client):
    seen: list[RecordedRequest] = []

    def responder(request: RecordedRequest) -> Reply:
        seen.append(request)
        return Reply.text(request.last_user_message.upper())

    server.responder = responder
    server.script(Reply.text("scripted"))

    first = await client.chat.completions.create(model="gpt-4o-mini", messages=user("one"))
    second = await client.chat.completions.create(model="gpt-4o-mini", messages=user("two"))

    assert first.choices[0].message.content == "scripted"
    assert second.choices[0].message.content == "TWO"
    assert seen == [server.requests[1]]


# --- embeddings and models -------------------------------------------------------------------


async def test_embeddings_are_deterministic_normalised_and_closer_for_shared_words(server, client):
    texts = ["quiet hotel near the river", "a quiet hotel by the river", "cheap running shoes"]

    first = await client.embeddings.create(model="text-embedding-3-small", input=texts)
    again = await client.embeddings.create(
        model="text-embedding-3-small", input=texts, encoding_format="float"
    )

    vectors = [d.embedding for d in first.data]  # the SDK asked for base64: float32 precision
    as_floats = [d.embedding for d in again.data]
    assert all(_close(v, w) for v, w in zip(vectors, as_floats, strict=True))
    assert [len(v) for v in vectors] == [64, 64, 64]
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-5) for v in vectors)
    similar, unrelated = _dot(vectors[0], vectors[1]), _dot(vectors[0], vectors[2])
    assert similar > unrelated
    assert first.usage.prompt_tokens == sum(count_tokens(t) for t in texts)
    assert server.requests[-1].input == texts


async def test_embedding_dimensions_can_be_requested(server, client):
    result = await client.embeddings.create(model="text-embedding-3-small", input="hello", dimensions=16)

    assert len(result.data[0].embedding) == 16


async def test_models_lists_the_configured_models(client):
    models = await client.models.list()

    assert [m.id for m in models.data] == ["gpt-4o-mini", "backup-model"]


# --- faults ----------------------------------------------------------------------------------

SDK_FAULTS = [
    pytest.param(Fault.rate_limit(retry_after=1.5), openai.RateLimitError, id="rate_limit"),
    pytest.param(Fault.server_error(500), openai.InternalServerError, id="server_error_500"),
    pytest.param(Fault.server_error(503), openai.InternalServerError, id="server_error_503"),
    pytest.param(Fault.unauthorized(), openai.AuthenticationError, id="unauthorized"),
    pytest.param(Fault.model_not_found(), openai.NotFoundError, id="model_not_found"),
    pytest.param(Fault.hang(seconds=10), openai.APITimeoutError, id="hang"),
    # The SDK does not wrap an undecodable body or SSE chunk: json.loads's error escapes as is.
    pytest.param(Fault.malformed_chunk(), json.JSONDecodeError, id="malformed_chunk"),
]


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "non_streaming"])
@pytest.mark.parametrize(("fault", "expected"), SDK_FAULTS)
async def test_sdk_raises_the_matching_exception_for_each_fault(server, fault, expected, stream):
    server.fail_next(fault)
    sdk = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=HANG_TIMEOUT)
    try:
        with pytest.raises(expected):
            response = await sdk.chat.completions.create(
                model="gpt-4o-mini", messages=user("hi"), stream=stream
            )
            if stream:
                async for _ in response:  # type: ignore[attr-defined]
                    pass
    finally:
        await sdk.close()


@pytest.mark.parametrize(("fault", "expected"), SDK_FAULTS)
async def test_chat_openai_raises_the_matching_exception_for_each_fault(server, fault, expected):
    server.fail_next(fault)

    with pytest.raises(expected):
        await chat_model(server, timeout=HANG_TIMEOUT).ainvoke("hi")


async def test_errors_use_openai_error_bodies_and_headers(server, client):
    server.fail_next(Fault.rate_limit(retry_after=1.5), Fault.unauthorized(), Fault.model_not_found())

    with pytest.raises(openai.RateLimitError) as rate_limited:
        await client.chat.completions.create(model="gpt-4o-mini", messages=user("hi"))
    with pytest.raises(openai.AuthenticationError) as unauthorized:
        await client.chat.completions.create(model="gpt-4o-mini", messages=user("hi"))
    with pytest.raises(openai.NotFoundError) as not_found:
        await client.chat.completions.create(model="gpt-4o-mini", messages=user("hi"))

    assert rate_limited.value.response.headers["retry-after"] == "2"
    assert rate_limited.value.response.headers["retry-after-ms"] == "1500"
    assert rate_limited.value.code == "rate_limit_exceeded"
    assert unauthorized.value.code == "invalid_api_key"
    assert not_found.value.code == "model_not_found"
    assert not_found.value.type == "invalid_request_error"
    assert "gpt-4o-mini" in not_found.value.message
    body = not_found.value.body
    assert isinstance(body, dict) and set(body) == {"message", "type", "param", "code"}
    assert [r.status for r in server.requests] == [429, 401, 404]


async def test_each_queued_fault_fails_one_request_and_keeps_the_script(server, client):
    server.script(Reply.text("after the storm"))
    server.fail_next(Fault.server_error(502), Fault.malformed_chunk())

    with pytest.raises(openai.InternalServerError):
        await client.chat.completions.create(model="gpt-4o-mini", messages=user("hi"))
    with pytest.raises(json.JSONDecodeError):
        await client.chat.completions.create(model="gpt-4o-mini", messages=user("hi"))
    completion = await client.chat.completions.create(model="gpt-4o-mini", messages=user("hi"))

    assert completion.choices[0].message.content == "after the storm"
    assert server.pending_replies == 0
    assert [(r.status, r.reply) for r in server.requests[:2]] == [(502, None), (200, None)]


async def test_hang_does_not_consume_the_script_either(server, client):
    server.script(Reply.text("answer"))
    server.fail_next(Fault.hang(seconds=10))

    with pytest.raises(openai.APITimeoutError):
        await client.chat.completions.create(model="gpt-4o-mini", messages=user("hi"), timeout=HANG_TIMEOUT)

    assert server.pending_replies == 1


async def test_failing_model_fails_every_request_for_it_until_healed(server):
    server.fail_model("gpt-4o-mini", Fault.model_not_found())
    server.script(Reply.text("from the backup"))

    for _ in range(2):
        with pytest.raises(openai.NotFoundError):
            await chat_model(server, "gpt-4o-mini").ainvoke("hi")
    backup = await chat_model(server, "backup-model").ainvoke("hi")
    server.fail_model("gpt-4o-mini", None)
    healed = await chat_model(server, "gpt-4o-mini").ainvoke("hi")

    assert backup.content == "from the backup"
    assert healed.content == "Echo: hi"
    assert [(r.model, r.status) for r in server.requests] == [
        ("gpt-4o-mini", 404),
        ("gpt-4o-mini", 404),
        ("backup-model", 200),
        ("gpt-4o-mini", 200),
    ]


async def test_queued_faults_also_apply_to_embeddings(server, client):
    server.fail_next(Fault.rate_limit())

    with pytest.raises(openai.RateLimitError):
        await client.embeddings.create(model="text-embedding-3-small", input="hello")


async def test_invalid_request_body_is_a_bad_request(server, client):
    with pytest.raises(openai.BadRequestError):
        await client.chat.completions.create(model="gpt-4o-mini", messages=[], extra_body={"messages": None})


# --- tokens and latency ----------------------------------------------------------------------


def test_token_rule_counts_words_and_punctuation():
    assert count_tokens("Hello, world!") == 4
    assert count_tokens('{"city": "Paris"}') == 9
    assert count_tokens("") == 0


async def test_token_counts_are_recorded_per_request_and_grow_with_the_prompt(server):
    model = chat_model(server)

    await model.ainvoke("hotels in Paris")
    await model.ainvoke("hotels in Paris near the Louvre, under 200 euros a night, with breakfast")
    await model.bind_tools([search_hotels]).ainvoke("hotels in Paris")

    short, long, with_tools = server.requests
    assert short.prompt_tokens == count_tokens("hotels in Paris") == 3
    assert long.prompt_tokens > short.prompt_tokens
    assert with_tools.prompt_tokens == 3 + count_tokens(json.dumps(with_tools.tools))
    assert short.completion_tokens == count_tokens("Echo: hotels in Paris")
    assert server.total_prompt_tokens == short.prompt_tokens + long.prompt_tokens + with_tools.prompt_tokens


async def test_tool_call_arguments_in_the_history_count_as_prompt_tokens(server, client):
    history = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"city": "Paris"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]

    await client.chat.completions.create(model="gpt-4o-mini", messages=history)  # type: ignore[arg-type]

    assert server.requests[-1].prompt_tokens == 1 + 9 + 1


async def test_latency_holds_each_answer_while_requests_are_recorded(server, client):
    server.latency = 0.3

    pending = [
        asyncio.create_task(client.chat.completions.create(model="gpt-4o-mini", messages=user(str(i))))
        for i in range(3)
    ]
    for _ in range(500):
        if len(server.requests) == 3:
            break
        await asyncio.sleep(0.01)
    statuses_while_waiting = [r.status for r in server.requests]
    await asyncio.gather(*pending)

    assert statuses_while_waiting == [None, None, None]
    assert [r.status for r in server.requests] == [200, 200, 200]


# --- standalone ------------------------------------------------------------------------------


def test_runs_standalone_from_the_command_line():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", "--port", str(port), "--models", "m1,m2"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert f"http://127.0.0.1:{port}/v1" in process.stdout.readline()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5) as response:
            assert [m["id"] for m in json.load(response)["data"]] == ["m1", "m2"]
    finally:
        process.terminate()
        process.wait(timeout=5)


# --- helpers ---------------------------------------------------------------------------------


def _schema(tool_object) -> dict:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return convert_to_openai_tool(tool_object)


def _close(a: list[float], b: list[float]) -> bool:
    return all(math.isclose(x, y, abs_tol=1e-6) for x, y in zip(a, b, strict=True))


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))
