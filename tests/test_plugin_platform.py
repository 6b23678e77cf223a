"""A new platform is one package: a plugin platform defined outside the project
(tests/plugins/inbox.py) gets its `python -m bot` command, its own settings, the command table,
de-duplication, thread binding, the access policy and the turn renderer, with no core edit."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


async def inbox(tmp_path: Path, messages: list[dict[str, str]], **extra: str) -> tuple[int, list[dict], str]:
    """Run `python -m bot inbox` on `messages`: exit status, what it did on its surface, stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CONCIERGE_", "INBOX_"))}
    env.update(
        CONCIERGE_DATA_DIR=str(tmp_path), CONCIERGE_LLM="offline", CONCIERGE_AGENT_PLUGINS="tests.plugins.todo:TodoAgent",
        CONCIERGE_PLATFORM_PLUGINS="tests.plugins.inbox",
    )
    env.update(extra)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "inbox", cwd=ROOT, env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    lines = "".join(json.dumps(m) + "\n" for m in messages).encode()
    out, err = await asyncio.wait_for(proc.communicate(lines), timeout=120)
    return proc.returncode or 0, [json.loads(line) for line in out.decode().splitlines()], err.decode()


def shown(ops: list[dict], thread: str) -> list[str]:
    """The last text of each message in `thread`, in the order they were first posted."""
    texts: dict[str, str] = {}
    for op in ops:
        if op["thread"] == thread and op["op"] in ("post", "edit"):
            texts[op["id"]] = op["text"]
    return list(texts.values())


async def test_a_plugin_platform_runs_turns_through_the_core(tmp_path: Path) -> None:
    code, ops, err = await inbox(tmp_path, [
        {"id": "d1", "thread": "t1", "user": "U1", "text": "/todo buy milk"},
        {"id": "d1", "thread": "t1", "user": "U1", "text": "/todo buy milk"},  # redelivered: answered once
        {"id": "d2", "thread": "t1", "user": "U1", "text": "call Ann"},  # the thread's agent, no command
        {"id": "d3", "thread": "t2", "user": "U1", "text": "/help"},
    ], INBOX_WORKSPACE="W1")
    assert code == 0, err
    assert shown(ops, "t1") == ["To do: buy milk", "To do: buy milk; call Ann"]
    assert "`/todo` — Keep a to-do list" in shown(ops, "t2")[-1]
    assert "Traceback" not in err


async def test_a_plugin_platform_is_held_to_the_access_policy(tmp_path: Path) -> None:
    turn = {"id": "d1", "thread": "t1", "user": "U1", "text": "/todo buy milk"}
    code, ops, err = await inbox(tmp_path, [turn], INBOX_WORKSPACE="W2", CONCIERGE_ALLOWED_WORKSPACES="W1")
    assert code == 0, err
    assert shown(ops, "t1") == ["⚠️ Sorry, I'm not enabled in this workspace. Ask an admin of this bot to add it."]


async def test_a_plugin_platforms_bad_settings_and_bad_plugins_are_named(tmp_path: Path) -> None:
    code, _, err = await inbox(tmp_path, [], INBOX_MAX_CHARS="5")
    assert code == 2 and "INBOX_MAX_CHARS" in err and "Traceback" not in err
    code, _, err = await inbox(tmp_path, [], CONCIERGE_PLATFORM_PLUGINS="tests.plugins.nowhere")
    assert code == 2 and "CONCIERGE_PLATFORM_PLUGINS" in err and "tests.plugins.nowhere" in err
    assert "Traceback" not in err
