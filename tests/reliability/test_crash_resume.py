"""A bot killed mid-turn (SIGKILL) and started again on the same data dir: the interrupted turn
continues from its last checkpoint and is answered once, in its thread, in place of the status
message the crash left; a turn whose steps must not be repeated is offered again instead. Buttons
pass the same access gate as typed turns."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import socket
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

from bot.agent import TurnInput
from bot.config import load_settings
from bot.conversation import ConversationKey
from bot.events import Failure, Final
from bot.render import WORKING
from bot.runtime import ConversationRuntime
from tests.fakes.slack_api import (
    BOT_TOKEN,
    SIGNING_SECRET,
    TEAM_ID,
    FakeMessage,
    FakeSlackAPI,
    SlackDelivery,
    find_button,
)
from tests.reliability.crash_agents import PREPARED, steps_run
from tests.support.agents import ConfirmAgent
from tests.support.waiting import eventually

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = "tests.reliability.crash_agents:StepsAgent,tests.reliability.crash_agents:OrderAgent"
CHANNEL = "C0GENERAL"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _query(db: Path, sql: str, params: tuple[Any, ...]) -> Any:
    try:
        with sqlite3.connect(db, timeout=1) as conn:
            return conn.execute(sql, params).fetchone()
    except sqlite3.Error:
        return None


def checkpointed(data_dir: Path, thread_id: str, mark: str) -> bool:
    """Whether a checkpoint of the LangGraph thread holds `mark` (they are written in the
    background while the next step runs)."""
    row = _query(
        data_dir / "concierge.db", "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ? AND instr(checkpoint, ?) > 0",
        (thread_id, mark.encode()),
    )
    return bool(row and row[0])


def thread_row(data_dir: Path, key: str) -> tuple[str, str | None, str | None] | None:
    """(state, note, status_message) of a conversation thread."""
    return _query(data_dir / "concierge.db", "SELECT state, note, status_message FROM concierge_threads WHERE key = ?", (key,))


class BotProcess:
    """`python -m bot slack` in its own process, over the fake Slack, with the crash agents."""

    def __init__(self, data_dir: Path, api: FakeSlackAPI) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/slack/events"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CONCIERGE_", "SLACK_", "DISCORD_"))}
        self.env.update(
            CONCIERGE_DATA_DIR=str(data_dir), CONCIERGE_LLM="offline", CONCIERGE_AGENT_PLUGINS=PLUGINS,
            CONCIERGE_EDIT_INTERVAL="0.2", SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET,
            SLACK_API_BASE_URL=api.base_url, PORT=str(self.port),
        )
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, within: float = 60.0) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "slack", cwd=ROOT, env=self.env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )
        deadline = asyncio.get_running_loop().time() + within
        async with aiohttp.ClientSession() as http:
            while True:
                assert self.proc.returncode is None, "the bot exited while starting"
                with contextlib.suppress(aiohttp.ClientError):
                    async with http.get(f"http://127.0.0.1:{self.port}/healthz") as resp:
                        if resp.status == 200:
                            return
                assert asyncio.get_running_loop().time() < deadline, "the bot did not start"
                await asyncio.sleep(0.05)

    async def stop(self, sig: int = signal.SIGKILL, within: float = 60.0) -> int:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(sig)
        return await asyncio.wait_for(self.proc.wait(), within)


@contextlib.asynccontextmanager
async def running(data_dir: Path, api: FakeSlackAPI) -> AsyncIterator[tuple[BotProcess, SlackDelivery]]:
    bot = BotProcess(data_dir, api)
    await bot.start()
    try:
        async with SlackDelivery(bot.url, api) as slack:
            yield bot, slack
    finally:
        await bot.stop()


# The bots here are subprocesses that start, crash and start again: a minute, checked every 50 ms.
until = functools.partial(eventually, within=60.0, interval=0.05)


async def start_and_kill_mid_turn(
    data_dir: Path, api: FakeSlackAPI, command: str, request: str
) -> tuple[FakeMessage, str]:
    """Run `command request` until its second step is held, then SIGKILL the bot: (the command's
    root message, the LangGraph thread id)."""
    (data_dir / "hold").touch()
    async with running(data_dir, api) as (_, slack):
        assert (await slack.command(command, request)).status == 200
        root = (await until(lambda: api.channel_messages(CHANNEL)))[0]
        key = ConversationKey("slack", (TEAM_ID, CHANNEL, root.ts)).thread_id
        graph_thread = f"{key}/{command.lstrip('/')}"
        await until(lambda: f"{command.lstrip('/')} finish-started {request}" in steps_run(data_dir))
        await until(lambda: checkpointed(data_dir, graph_thread, PREPARED))
        await until(lambda: (row := thread_row(data_dir, key)) is not None and row[2] is not None)
    # running() ends with SIGKILL: no chance to tidy up
    return root, key


def bot_replies(api: FakeSlackAPI, root: FakeMessage) -> list[FakeMessage]:
    return [m for m in api.thread(CHANNEL, root.ts) if m.bot_id]


async def test_a_turn_killed_mid_flight_resumes_from_its_checkpoint_and_is_answered_once(
    tmp_path: Path,
) -> None:
    async with FakeSlackAPI() as api:
        root, key = await start_and_kill_mid_turn(tmp_path, api, "/steps", "alpha")
        (status,) = bot_replies(api, root)
        assert status.text == f"_{WORKING}_"  # what a crash leaves behind
        assert thread_row(tmp_path, key) == ("processing", None, status.ts)

        (tmp_path / "hold").unlink()
        async with running(tmp_path, api) as (bot, _):
            await until(lambda: any("Done with alpha." in m.text for m in bot_replies(api, root)))
            await until(lambda: (thread_row(tmp_path, key) or ("",))[0] == "idle")
            assert await bot.stop(signal.SIGTERM) == 0  # drained: nothing more is coming

        replies = bot_replies(api, root)
        assert [m.ts for m in replies] == [status.ts]  # the old status message became the answer
        answer = replies[0]
        assert "Done with alpha." in answer.text and "Resumed after a restart" in answer.text
        assert any("Resumed after a restart" in text for text in answer.history[1:])
        assert not any(WORKING in m.text for m in api.thread(CHANNEL, root.ts))
        # continued from the checkpoint: the first step is not run again
        assert steps_run(tmp_path) == ["steps prepare alpha", "steps finish-started alpha",
                                       "steps finish-started alpha", "steps finish alpha"]
        assert thread_row(tmp_path, key) == ("idle", None, None)


async def test_a_turn_that_must_not_repeat_is_offered_again_after_a_crash_not_rerun(tmp_path: Path) -> None:
    async with FakeSlackAPI() as api:
        root, key = await start_and_kill_mid_turn(tmp_path, api, "/order", "two lamps")
        (status,) = bot_replies(api, root)
        (tmp_path / "hold").unlink()
        async with running(tmp_path, api) as (_, slack):
            offer = await until(lambda: next((m for m in bot_replies(api, root) if m.blocks), None))
            old = next(m for m in bot_replies(api, root) if m.ts == status.ts)
            assert "interrupted by a restart" in old.text and "/order two lamps" in old.text
            assert not any(WORKING in m.text for m in api.thread(CHANNEL, root.ts))
            assert steps_run(tmp_path) == ["order prepare two lamps", "order finish-started two lamps"]
            assert thread_row(tmp_path, key) == ("error", None, None)

            button = find_button(offer, "Run it again")
            assert (await slack.block_action(offer, action_id=button["action_id"], value=button["value"])).status == 200
            await until(lambda: any("Done with two lamps." in m.text for m in bot_replies(api, root)))
            await until(lambda: (thread_row(tmp_path, key) or ("",))[0] == "idle")
        assert steps_run(tmp_path)[2:] == [
            "order prepare two lamps", "order finish-started two lamps", "order finish two lamps",
        ]
        assert len([m for m in bot_replies(api, root) if "Done with two lamps." in m.text]) == 1


async def test_a_button_press_passes_the_access_gate(tmp_path: Path) -> None:
    settings = load_settings(
        CONCIERGE_DATA_DIR=tmp_path, CONCIERGE_LLM="offline", CONCIERGE_ALLOWED_USERS="U0ALICE", _env_file=None
    )
    key = ConversationKey("slack", (TEAM_ID, CHANNEL, "1700000000.000100"))
    alice = TurnInput(text="", user_id="U0ALICE", workspace_id=TEAM_ID, channel_id=CHANNEL)
    async with await ConversationRuntime.open(settings, agents=[ConfirmAgent()]) as runtime:
        events = [e async for e in runtime.handle(key, alice.but(text="delete everything", command="confirm"))]
        assert isinstance(events[-1], Final) and events[-1].data.get("awaiting_input")

        mallory = alice.but(user_id="U0MALLORY")
        refused = [e async for e in runtime.resume(key, "confirm", user_id="U0MALLORY")]
        assert len(refused) == 1 and isinstance(refused[0], Failure) and "don't have access" in refused[0].user_message
        rerun = [e async for e in runtime.resume(key, "/confirm something else", user_id="U0MALLORY", origin=mallory)]
        assert len(rerun) == 1 and isinstance(rerun[0], Failure)
        snapshot = await (await runtime._graph(runtime.agents()[0])).aget_state(
            runtime._config(key, runtime.agents()[0], 0)
        )
        assert snapshot.interrupts  # still waiting for an allowed answer

        answered = [e async for e in runtime.resume(key, "confirm", user_id="U0ALICE", origin=alice)]
        assert isinstance(answered[-1], Final) and not isinstance(answered[-1], Failure)

