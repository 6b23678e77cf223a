"""`python -m bot ask` as separate processes: continuity, crash recovery, exit codes, JSON events."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI, Reply

ROOT = Path(__file__).resolve().parents[1]


def env_for(data_dir: Path, server: FakeOpenAI | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CONCIERGE_", "SLACK_", "DISCORD_"))}
    env.update(CONCIERGE_DATA_DIR=str(data_dir), CONCIERGE_AGENT_PLUGINS="tests.support.agents:EchoAgent")
    if server is not None:
        env.update(OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=server.base_url, CONCIERGE_LLM="openai")
    else:
        env.update(CONCIERGE_LLM="offline")
    env.update(extra)
    return env


async def ask(env: dict[str, str], *args: str) -> tuple[int, list[dict], str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "ask", "--json", *args,
        cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    events = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    return proc.returncode or 0, events, err.decode()


async def test_second_ask_process_sees_the_first_turn(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    env = env_for(tmp_path, fake_openai)
    code, events, _ = await ask(env, "--thread", "story", "/echo My name is Ada.")
    assert code == 0 and events[-1]["type"] == "final"
    code, events, _ = await ask(env, "--thread", "story", "What is my name?")
    assert code == 0 and events[-1]["type"] == "final"
    second = fake_openai.requests[-1].messages
    user_texts = [m["content"] for m in second if m["role"] == "user"]
    assert user_texts == ["My name is Ada.", "What is my name?"]


async def test_ask_json_prints_one_event_per_line_and_exit_codes(tmp_path: Path) -> None:
    env = env_for(tmp_path)
    code, events, _ = await ask(env, "/echo look up wombats")
    types = [e["type"] for e in events]
    assert code == 0 and types[-1] == "final" and "tool_started" in types and "token" in types
    code, events, _ = await ask(env, "/nonsense")
    assert code == 1 and [e["type"] for e in events] == ["failure"]


async def test_ask_refuses_binary_attachment_clearly(tmp_path: Path) -> None:
    blob = tmp_path / "photo.md"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    code, events, err = await ask(env_for(tmp_path), "--attach", str(blob), "/echo check this")
    assert code == 1 and events[-1]["type"] == "failure" and "binary" in events[-1]["user_message"]
    assert "Traceback" not in err


async def test_a_hotel_request_longer_than_hotel_takes_is_refused_at_once(tmp_path: Path) -> None:
    # /hotel reads requests (4,000 characters); the core's limit is sized for documents (100 KB).
    code, events, err = await ask(env_for(tmp_path), "/hotel " + "Paris " * 15_000)
    assert code == 1 and [e["type"] for e in events] == ["failure"] and "Traceback" not in err
    assert events[0]["user_message"] == (
        "`/hotel` takes messages of up to 4,000 characters; yours has 89,999. Please send a shorter request."
    )


async def test_bad_configuration_is_reported_without_secrets(tmp_path: Path) -> None:
    env = env_for(tmp_path, CONCIERGE_LLM="openai", CONCIERGE_TURN_DEADLINE="-3", SLACK_BOT_TOKEN="xoxb-secret-123")
    code, _, err = await ask(env, "hello")
    assert code == 2
    assert "CONCIERGE_TURN_DEADLINE" in err and "greater than 0" in err
    assert "xoxb-secret-123" not in err and "Traceback" not in err
    code, _, err = await ask(env_for(tmp_path, CONCIERGE_LLM="openai"), "hello")
    assert code == 2 and "OPENAI_API_KEY" in err and "Traceback" not in err


async def test_a_platforms_settings_are_read_by_that_platform_only(tmp_path: Path) -> None:
    """SLACK_* and DISCORD_* belong to their adapters: a bad one stops that platform, with a
    message naming it, and nothing else (the console runs)."""
    bad = {"SLACK_API_BASE_URL": "ftp://slack.invalid", "DISCORD_API_BASE_URL": "discord.invalid",
           "SLACK_BOT_TOKEN": "xoxb-secret-123", "SLACK_SIGNING_SECRET": "s3cret", "DISCORD_BOT_TOKEN": "d-secret-456"}
    code, events, err = await ask(env_for(tmp_path, **bad), "/echo hi")
    assert code == 0 and events[-1]["type"] == "final", err
    for platform, variable in (("slack", "SLACK_API_BASE_URL"), ("discord", "DISCORD_API_BASE_URL")):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", platform, cwd=ROOT, env=env_for(tmp_path, **bad),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        _, raw = await asyncio.wait_for(proc.communicate(), timeout=120)
        err = raw.decode()
        assert proc.returncode == 2, err
        assert variable in err and "must start with http" in err and "Traceback" not in err
        assert not any(secret in err for secret in ("xoxb-secret-123", "s3cret", "d-secret-456"))


def tool_call_checkpointed(db: Path, thread_id: str, tool: str) -> bool:
    """Whether a checkpoint of `thread_id` holds a call of `tool` (checkpoints are written in the
    background while the next step runs, so it may land just after the state says tool_call)."""
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ? AND instr(checkpoint, ?) > 0",
                (thread_id, tool.encode()),
            ).fetchone()
    except sqlite3.Error:
        return False
    return bool(row and row[0])


def thread_state(db: Path, key: str) -> str | None:
    if not db.exists():
        return None
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            row = conn.execute("SELECT state FROM concierge_threads WHERE key = ?", (key,)).fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row else None


async def test_process_killed_during_a_tool_call_recovers_with_a_valid_history(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.script(Reply.tool_calls([("lookup", {"topic": "slow things"})]))
    env = env_for(tmp_path, fake_openai, ECHO_TOOL_DELAY="60")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "ask", "--json", "--thread", "crash", "/echo look up slow things",
        cwd=ROOT, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )
    db = tmp_path / "concierge.db"
    for _ in range(1800):  # generous: a loaded CI machine starts Python slowly
        in_tool = thread_state(db, "console:crash") == "tool_call"
        if (in_tool and tool_call_checkpointed(db, "console:crash/echo", "lookup")) or proc.returncode is not None:
            break
        await asyncio.sleep(0.05)
    assert thread_state(db, "console:crash") == "tool_call"
    assert tool_call_checkpointed(db, "console:crash/echo", "lookup")
    proc.send_signal(signal.SIGKILL)
    await proc.wait()

    fake_openai.script(Reply.text("Back again."))
    code, events, _ = await ask(env_for(tmp_path, fake_openai), "--thread", "crash", "are you there?")
    assert code == 0 and events[-1] == {**events[-1], "type": "final", "text": "Back again."}
    assert any(e["type"] == "status" and "interrupted" in e["text"] for e in events)
    history = fake_openai.requests[-1].messages
    calls = [c["id"] for m in history if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in history if m["role"] == "tool"]
    assert calls and sorted(calls) == sorted(answered)
    assert history[-1] == {**history[-1], "role": "user", "content": "are you there?"}
    assert thread_state(db, "console:crash") == "idle"


async def test_ask_takes_the_terminals_locale_for_the_currency(tmp_path: Path) -> None:
    env = env_for(tmp_path, LANG="ja_JP.UTF-8", LC_ALL="", LC_MESSAGES="")
    code, events, _ = await ask(env, "/hotel 京都 来週末")
    assert code == 0 and events[-1]["type"] == "final"
    prices = [card["fields"]["料金"] for card in events[-1]["cards"]]
    assert prices and all(price.startswith("¥") for price in prices)
    env = env_for(tmp_path, LANG="en_US.UTF-8", LC_ALL="", LC_MESSAGES="")
    code, events, _ = await ask(env, "/hotel Kyoto next weekend")
    assert code == 0 and all(card["fields"]["Price"].startswith("$") for card in events[-1]["cards"])
