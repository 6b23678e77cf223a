"""Checkpoints at rest: encrypted with CONCIERGE_CHECKPOINT_KEY (the user's words never appear in
the stored blobs, the conversation resumes after a restart, a wrong or missing key stops the start
with a clear error that does not show the key), and read through a strict allowlist (only the
types the agents' states declare are rebuilt; anything else stays plain data, nothing is called)."""

from __future__ import annotations

import base64
import os
import sqlite3
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import ormsgpack
import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.serde.jsonplus import EXT_CONSTRUCTOR_POS_ARGS, JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from agents.chat.agent import ChatAgent
from bot.agent import TurnInput
from bot.config import ConfigError, Settings, load_settings
from bot.conversation import ConversationKey
from bot.events import Final
from bot.runtime import ConversationRuntime
from bot.storage import CheckpointSerde, state_classes
from tests.slack.agents import CardsAgent

SECRET = "my passport number is ZX9912345 and I love aubergines"


def new_key() -> str:
    return base64.b64encode(os.urandom(32)).decode()


def settings_for(data_dir: Path, key: str | None) -> Settings:
    extra = {"CONCIERGE_CHECKPOINT_KEY": key} if key else {}
    return load_settings(CONCIERGE_DATA_DIR=data_dir, CONCIERGE_LLM="offline", _env_file=None, **extra)


async def ask(runtime: ConversationRuntime, key: ConversationKey, text: str) -> Final:
    events = [event async for event in runtime.handle(key, TurnInput.typed(text))]
    assert isinstance(events[-1], Final), events[-1]
    return events[-1]


def stored_blobs(data_dir: Path) -> list[bytes]:
    with sqlite3.connect(data_dir / "concierge.db") as conn:
        rows = conn.execute("SELECT checkpoint, metadata FROM checkpoints").fetchall()
        rows += conn.execute("SELECT value, type FROM writes").fetchall()
    return [value if isinstance(value, bytes) else str(value).encode() for row in rows for value in row if value]


async def test_encrypted_checkpoints_hold_no_user_text_and_resume_after_a_restart(tmp_path: Path) -> None:
    key = new_key()
    conversation = ConversationKey("slack", ("T1", "C1", "1.0"))
    async with await ConversationRuntime.open(settings_for(tmp_path, key), agents=[CardsAgent(statuses=0)]) as runtime:
        assert (await ask(runtime, conversation, f"/hotel {SECRET}")).text == f"Turn 1: 2 hotels for {SECRET}."
    blobs = stored_blobs(tmp_path)
    assert blobs and not any(SECRET.encode() in blob or b"ZX9912345" in blob for blob in blobs)

    async with await ConversationRuntime.open(settings_for(tmp_path, key), agents=[CardsAgent(statuses=0)]) as runtime:
        assert (await ask(runtime, conversation, "/hotel near the opera")).text == "Turn 2: 2 hotels for near the opera."


async def test_without_a_key_the_text_is_stored_in_the_clear(tmp_path: Path) -> None:
    """The other side of the test above: the blobs it reads are the ones that hold the text."""
    async with await ConversationRuntime.open(settings_for(tmp_path, None), agents=[CardsAgent(statuses=0)]) as runtime:
        await ask(runtime, ConversationKey.console("c"), f"/hotel {SECRET}")
    assert any(SECRET.encode() in blob for blob in stored_blobs(tmp_path))


async def test_messages_round_trip_encrypted_and_strict(tmp_path: Path) -> None:
    key, conversation = new_key(), ConversationKey.console("chat")
    async with await ConversationRuntime.open(settings_for(tmp_path, key), agents=[ChatAgent()]) as runtime:
        await ask(runtime, conversation, "hello there")
    async with await ConversationRuntime.open(settings_for(tmp_path, key), agents=[ChatAgent()]) as runtime:
        await ask(runtime, conversation, "what can you do?")
        config: Any = {"configurable": {"thread_id": runtime.checkpoint_thread(conversation, "chat", 0), "checkpoint_ns": ""}}
        stored = await runtime.checkpoints.saver.aget_tuple(config)
    assert stored is not None
    humans = [m.content for m in stored.checkpoint["channel_values"]["messages"] if isinstance(m, HumanMessage)]
    assert humans == ["hello there", "what can you do?"]


async def test_a_wrong_or_missing_key_is_a_clear_start_up_error_without_the_key(tmp_path: Path) -> None:
    right, wrong = new_key(), new_key()
    async with await ConversationRuntime.open(settings_for(tmp_path, right), agents=[CardsAgent(statuses=0)]) as runtime:
        await ask(runtime, ConversationKey.console("c"), f"/hotel {SECRET}")

    with pytest.raises(ConfigError) as raised:
        await ConversationRuntime.open(settings_for(tmp_path, wrong), agents=[CardsAgent(statuses=0)])
    message = str(raised.value)
    assert "CONCIERGE_CHECKPOINT_KEY" in message and "not the key" in message
    assert wrong not in message and right not in message

    with pytest.raises(ConfigError, match="encrypted: set CONCIERGE_CHECKPOINT_KEY"):
        await ConversationRuntime.open(settings_for(tmp_path, None), agents=[CardsAgent(statuses=0)])

    async with await ConversationRuntime.open(settings_for(tmp_path, right), agents=[CardsAgent(statuses=0)]) as runtime:
        assert (await ask(runtime, ConversationKey.console("c"), "/hotel again")).text == "Turn 2: 2 hotels for again."


@pytest.mark.parametrize("bad", ["not-a-key", "00" * 15, base64.b64encode(b"x" * 20).decode()])
def test_a_malformed_key_is_refused_by_name_without_echoing_it(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ConfigError) as raised:
        settings_for(tmp_path, bad)
    assert "CONCIERGE_CHECKPOINT_KEY" in str(raised.value) and bad not in str(raised.value)


@pytest.mark.parametrize("written", [new_key(), bytes(range(16)).hex(), base64.urlsafe_b64encode(os.urandom(24)).decode()])
def test_keys_may_be_written_as_base64_or_hex(tmp_path: Path, written: str) -> None:
    assert settings_for(tmp_path, written).checkpoint_key is not None


# --- the allowlist ---------------------------------------------------------------------------
@dataclass
class Smuggled:
    payload: str


class Pick(BaseModel):
    name: str


class PickState(TypedDict):
    pick: Pick | None
    note: str


def test_an_unexpected_type_in_a_checkpoint_is_not_rebuilt() -> None:
    for serde in (CheckpointSerde(), CheckpointSerde(os.urandom(32))):
        serializer = serde.serializer()
        loaded = serializer.loads_typed(serializer.dumps_typed({"x": Smuggled("boo"), "m": HumanMessage("hi")}))
        assert not isinstance(loaded["x"], Smuggled)  # left as plain data
        assert isinstance(loaded["m"], HumanMessage)  # messages are always allowed


def test_a_crafted_checkpoint_calls_nothing(tmp_path: Path) -> None:
    target = tmp_path / "created-by-a-checkpoint"
    crafted = ormsgpack.packb(ormsgpack.Ext(EXT_CONSTRUCTOR_POS_ARGS, ormsgpack.packb(("os", "mkdir", [str(target)]))))
    CheckpointSerde().serializer().loads_typed(("msgpack", crafted))
    assert not target.exists()
    JsonPlusSerializer(allowed_msgpack_modules=True).loads_typed(("msgpack", crafted))  # permissive: it runs
    assert target.exists()


def test_the_types_a_graph_state_declares_are_allowed() -> None:
    async def choose(state: PickState) -> dict[str, Any]:
        return {"pick": Pick(name="Rive")}

    builder = StateGraph(PickState)
    builder.add_node("choose", choose)
    builder.add_edge(START, "choose")
    builder.add_edge("choose", END)
    graph = builder.compile()
    assert Pick in state_classes(graph) and Smuggled not in state_classes(graph)

    serde = CheckpointSerde(os.urandom(16))
    serde.allow(state_classes(graph))
    serializer = serde.serializer()
    assert serializer.loads_typed(serializer.dumps_typed(Pick(name="Rive"))) == Pick(name="Rive")
    assert not isinstance(serializer.loads_typed(serializer.dumps_typed(Smuggled("boo"))), Smuggled)


# --- PostgreSQL ------------------------------------------------------------------------------
@pytest.fixture
async def own_postgres(postgres_url: str) -> AsyncIterator[str]:
    """A database of its own: the key sample it stores must not reach other tests' database."""
    import psycopg

    name = f"concierge_enc_{uuid.uuid4().hex[:10]}"
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        await conn.execute(f"CREATE DATABASE {name}")
    try:
        yield postgres_url.rsplit("/", 1)[0] + "/" + name
    finally:
        async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as conn:
            await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


async def test_postgres_checkpoints_are_encrypted_and_resume(tmp_path: Path, own_postgres: str) -> None:
    import psycopg

    key, conversation = new_key(), ConversationKey("slack", ("T1", "C1", "1.0"))

    def settings(with_key: str) -> Settings:
        return load_settings(CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", CONCIERGE_DATABASE_URL=own_postgres,
                             CONCIERGE_CHECKPOINT_KEY=with_key, _env_file=None)

    chat = ConversationKey("slack", ("T1", "C1", "2.0"))
    async with await ConversationRuntime.open(settings(key), agents=[CardsAgent(statuses=0), ChatAgent()]) as runtime:
        await ask(runtime, conversation, f"/hotel {SECRET}")
        await ask(runtime, chat, f"/chat {SECRET}")
        await runtime.app_db.add_tokens("slack:T1", "2030-06-14", 40)
        await runtime.app_db.add_tokens("slack:T1", "2030-06-14", 2)
        assert await runtime.app_db.tokens_spent("slack:T1", "2030-06-14") == 42
    async with await psycopg.AsyncConnection.connect(own_postgres) as conn:
        blobs = []
        for sql in ("SELECT blob FROM checkpoint_blobs", "SELECT blob FROM checkpoint_writes",
                    "SELECT checkpoint::text, metadata::text FROM checkpoints"):
            for row in await (await conn.execute(sql)).fetchall():
                blobs += [bytes(v) if isinstance(v, bytes | memoryview) else str(v).encode() for v in row if v]
    assert blobs and not any(b"ZX9912345" in blob for blob in blobs)

    async with await ConversationRuntime.open(settings(key), agents=[CardsAgent(statuses=0), ChatAgent()]) as runtime:
        assert (await ask(runtime, conversation, "/hotel again")).text == "Turn 2: 2 hotels for again."
        await ask(runtime, chat, "/chat what can you do?")
        config: Any = {"configurable": {"thread_id": runtime.checkpoint_thread(chat, "chat", 0), "checkpoint_ns": ""}}
        stored = await runtime.checkpoints.saver.aget_tuple(config)
    assert stored is not None
    humans = [m.content for m in stored.checkpoint["channel_values"]["messages"] if isinstance(m, HumanMessage)]
    assert humans == [SECRET, "what can you do?"]
    with pytest.raises(ConfigError, match="not the key"):
        await ConversationRuntime.open(settings(new_key()), agents=[CardsAgent(statuses=0)])
