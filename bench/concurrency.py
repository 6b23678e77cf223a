"""Concurrency: 200 conversations × 3 turns against the fake OpenAI server with 300 ms per model
call, through the real openai SDK; achieved wall time versus the ideal (infinite parallelism).

It also measures the runtime's CPU per turn and prints the best wall time that CPU cost allows on
this machine's cores, and, as a baseline in the same run, the same conversations through the
frameworks alone (LangGraph + ChatOpenAI with in-memory checkpoints): what no runtime built on them
can beat here.

`--processes N` runs N runtime processes on one database (SQLite, or PostgreSQL with
`--database-url`), each driving the conversations whose index is its own modulo N, as Discord shards
own guilds; the runtime's cross-process turn locks would keep them apart on shared threads too.

`--rounds N` with `--database-url`: N more rounds of the runtime, each on PostgreSQL and on a fresh
SQLite database, the order alternating from round to round so that a change in the machine's load
falls on both; prints each one's CPU per turn and the ratio of their medians (on a shared machine a
single pair of runs can differ by half either way)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agents.chat.agent import ChatAgent
from bench._common import describe, scratch_settings
from bot.agent import TurnInput
from bot.conversation import ConversationKey
from bot.events import Final
from bot.loop import startup_complete
from bot.runtime import ConversationRuntime

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_port(port: int) -> None:
    for _ in range(200):
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise RuntimeError("fake server did not start")


def _settings(port: int, data_dir: Path | None, database_url: str | None) -> Any:
    overrides: dict[str, object] = {
        "OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "CONCIERGE_LLM": "openai",
        "CONCIERGE_LLM_TIMEOUT": 60,
    }
    if data_dir is not None:
        overrides["CONCIERGE_DATA_DIR"] = data_dir
    if database_url:
        overrides["CONCIERGE_DATABASE_URL"] = database_url
    return scratch_settings(**overrides)


async def _drive(runtime: Any, indexes: list[int], turns: int, run: str) -> list[float]:
    """Run the conversations; the time of each turn."""
    turn_times: list[float] = []

    async def conversation(i: int) -> None:
        key = ConversationKey.console(f"{run}-c{i}")
        for t in range(turns):
            start = time.perf_counter()
            last = None
            async for event in runtime.handle(key, TurnInput(text=f"message {t} of conversation {i}", command="chat")):
                last = event
            assert isinstance(last, Final), last
            turn_times.append(time.perf_counter() - start)

    await asyncio.gather(*(conversation(i) for i in indexes))
    return turn_times


class _FrameworksOnly:
    """A baseline: the same conversations through the frameworks alone — a one-node LangGraph graph,
    in-memory checkpoints, the runtime's four stream modes, none of our runtime (no storage,
    lifecycle, routing). Its node streams the reply either from ChatOpenAI (`sdk=False`, what the
    agents use) or straight from the openai SDK, tokens sent through LangGraph's stream writer
    (`sdk=True`: no LangChain model layer at all)."""

    def __init__(self, port: int, *, sdk: bool = False) -> None:
        from langchain_core.messages import AIMessage, AnyMessage
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.config import get_stream_writer
        from langgraph.graph import START, MessagesState, StateGraph

        from bot.llm import openai_chat_model

        self.model = openai_chat_model(_settings(port, None, None), "gpt-4o-mini")
        completions: Any = self.model.async_client  # type: ignore[attr-defined]  # bot.llm's streaming path

        async def reply(state: MessagesState) -> dict[str, list[AnyMessage]]:
            if not sdk:
                return {"messages": [await self.model.ainvoke(state["messages"])]}
            write, text = get_stream_writer(), []
            roles = {"human": "user", "ai": "assistant", "system": "system"}
            body = {
                "model": "gpt-4o-mini", "stream": True,
                "messages": [{"role": roles[m.type], "content": m.content} for m in state["messages"]],
            }
            stream = await completions.create(**body)
            async for chunk in stream:
                for choice in chunk.get("choices") or ():
                    if piece := (choice.get("delta") or {}).get("content"):
                        text.append(piece)
                        write({"token": piece})
            return {"messages": [AIMessage("".join(text))]}

        self.graph = StateGraph(MessagesState).add_node("reply", reply).add_edge(START, "reply").compile(
            checkpointer=InMemorySaver()
        )
        startup_complete()  # the same collector settings the runtime gets

    async def __aenter__(self) -> _FrameworksOnly:
        return self

    async def __aexit__(self, *exc: object) -> None:
        from bot.llm import close_chat_model

        await close_chat_model(self.model)

    async def handle(self, key: ConversationKey, turn: TurnInput) -> Any:
        from langchain_core.messages import HumanMessage

        config: Any = {"configurable": {"thread_id": key.thread_id}}
        last: Any = None
        async for mode, chunk in self.graph.astream(
            {"messages": [HumanMessage(turn.text)]}, config, stream_mode=["messages", "updates", "custom", "values"]
        ):
            if mode == "values":
                last = chunk
        yield Final(text=str(last["messages"][-1].content)) if last else None


async def _shard(argv: list[str]) -> int:
    """One runtime process of a multi-process run: ready → wait for "go" → run → report JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--shard", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--conversations", type=int, required=True)
    parser.add_argument("--turns", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--database-url")
    parser.add_argument("--run", required=True)
    parser.add_argument("--baseline", choices=["langchain", "sdk"])
    args = parser.parse_args(argv)
    index, count = (int(x) for x in args.shard.split("/"))
    settings = _settings(args.port, args.data_dir, args.database_url)
    opened: Any = (
        _FrameworksOnly(args.port, sdk=args.baseline == "sdk") if args.baseline
        else await ConversationRuntime.open(settings, agents=[ChatAgent()])
    )
    async with opened as runtime:
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        cpu, started = time.process_time(), time.time()
        turn_times = await _drive(runtime, list(range(index, args.conversations, count)), args.turns, args.run)
        finished, cpu = time.time(), time.process_time() - cpu
    print(json.dumps({"started": started, "finished": finished, "cpu": cpu, "turns": turn_times}), flush=True)
    return 0


async def _in_process(
    args: argparse.Namespace, port: int, run: str, baseline: str | None = None
) -> tuple[float, float, list[float]]:
    settings = _settings(port, None, args.database_url)
    opened: Any = (
        _FrameworksOnly(port, sdk=baseline == "sdk") if baseline
        else await ConversationRuntime.open(settings, agents=[ChatAgent()])
    )
    async with opened as runtime:
        cpu, start = time.process_time(), time.perf_counter()
        turn_times = await _drive(runtime, list(range(args.conversations)), args.turns, run)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return wall, cpu, turn_times


async def _multi_process(
    args: argparse.Namespace, port: int, run: str, baseline: str | None = None
) -> tuple[float, float, list[float]]:
    data_dir = Path(tempfile.mkdtemp(prefix="concierge-bench-"))
    shards = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench", "concurrency", "--shard", f"{i}/{args.processes}", "--port", str(port),
            "--conversations", str(args.conversations), "--turns", str(args.turns), "--data-dir", str(data_dir),
            "--run", run, *(["--database-url", args.database_url] if args.database_url else []),
            *(["--baseline", baseline] if baseline else []),
            cwd=ROOT, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        )
        for i in range(args.processes)
    ]
    for shard in shards:  # every runtime open before the clock starts
        assert shard.stdout is not None
        line = await shard.stdout.readline()
        if line.strip() != b"ready":
            raise RuntimeError(f"a runtime process failed to start: {line!r}")
    for shard in shards:
        assert shard.stdin is not None
        shard.stdin.write(b"go\n")
        await shard.stdin.drain()
    reports = []
    for shard in shards:
        out, _ = await shard.communicate()
        if shard.returncode != 0:
            raise RuntimeError(f"a runtime process failed (exit {shard.returncode})")
        reports.append(json.loads(out.decode().strip().splitlines()[-1]))
    wall = max(r["finished"] for r in reports) - min(r["started"] for r in reports)
    return wall, sum(r["cpu"] for r in reports), [t for r in reports for t in r["turns"]]


async def _against_sqlite(
    args: argparse.Namespace, port: int, run: str, measure: Any
) -> tuple[list[float], list[float]]:
    """CPU per turn (ms) of the runtime on SQLite and on PostgreSQL over `args.rounds` rounds,
    interleaved: SQLite first in even rounds, PostgreSQL first in odd ones."""
    on_sqlite = argparse.Namespace(**{**vars(args), "database_url": None})
    turns = args.conversations * args.turns
    sqlite: list[float] = []
    postgres: list[float] = []
    for number in range(args.rounds):
        pair = [(on_sqlite, sqlite, "s"), (args, postgres, "p")]
        for chosen, into, tag in pair if number % 2 == 0 else pair[::-1]:
            _, cpu, _ = await measure(chosen, port, f"{run}r{number}{tag}")
            into.append(cpu / turns * 1000)
    return sqlite, postgres


def _spread(values: list[float]) -> str:
    return f"{min(values):.1f}–{max(values):.1f} ms (median {statistics.median(values):.1f})"


async def main(argv: list[str]) -> int:
    if "--shard" in argv:
        return await _shard(argv)
    parser = argparse.ArgumentParser(prog="python -m bench concurrency")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--processes", type=int, default=1, help="runtime processes (default: 1, in this process)")
    parser.add_argument("--database-url", help="default: a fresh SQLite database")
    parser.add_argument(
        "--rounds", type=int, default=0,
        help="with --database-url: N rounds on PostgreSQL and SQLite, interleaved; the ratio of their median CPU per turn",
    )
    args = parser.parse_args(argv)
    if args.rounds and not args.database_url:
        parser.error("--rounds compares PostgreSQL with SQLite: give --database-url too")

    port = free_port()
    run = f"r{os.getpid()}"
    # The fake server runs in its own process, as a real model server would.
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.fakes.openai_server", "--port", str(port), "--latency", str(args.latency),
        cwd=ROOT, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, env={**os.environ},
    )
    try:
        await wait_port(port)
        measure = _multi_process if args.processes > 1 else _in_process
        base_wall, base_cpu, _ = await measure(args, port, f"{run}b", "langchain")
        sdk_wall, sdk_cpu, _ = await measure(args, port, f"{run}s", "sdk")
        wall, cpu, turn_times = await measure(args, port, run)
        compared = await _against_sqlite(args, port, run, measure) if args.rounds else None
    finally:
        server.terminate()
        await server.wait()

    turns = args.conversations * args.turns
    ideal = args.turns * args.latency
    cores = os.cpu_count() or 1
    usable = min(cores, args.processes)
    cpu_bound = max(ideal, cpu / usable)  # the best wall time this CPU cost allows
    where = "in this process" if args.processes == 1 else f"{args.processes} runtime processes"
    print(f"concurrency benchmark: {args.conversations} conversations x {args.turns} turns, "
          f"{args.latency * 1000:.0f} ms per model call, fake server in its own process, {where}")
    print(f"  ideal wall time (infinite parallelism): {ideal:.2f} s")
    print(f"  achieved wall time:                     {wall:.2f} s")
    print(f"  efficiency ideal/achieved:              {ideal / wall:.0%}   (target >= 70%)")
    print(f"  per turn: {describe(turn_times)}")
    print(f"  runtime CPU: {cpu:.2f} s = {cpu / turns * 1000:.1f} ms per turn; on {usable} of {cores} core(s) "
          f"that CPU alone needs {cpu_bound:.2f} s (efficiency at most {ideal / cpu_bound:.0%})")
    print(f"  baseline, same run — the frameworks alone (LangGraph one-node graph + ChatOpenAI, in-memory "
          f"checkpoints, no runtime): {base_wall:.2f} s, {ideal / base_wall:.0%} efficiency, "
          f"{base_cpu / turns * 1000:.1f} ms CPU per turn; the runtime costs {wall / base_wall:.2f}x its wall time")
    print(f"  baseline, same run — LangGraph and the bare openai SDK (no LangChain model layer): {sdk_wall:.2f} s, "
          f"{ideal / sdk_wall:.0%} efficiency, {sdk_cpu / turns * 1000:.1f} ms CPU per turn")
    if compared is not None:
        sqlite, postgres = compared
        ratios = [p / q for p, q in zip(postgres, sqlite, strict=True)]
        print(f"  PostgreSQL against SQLite, {args.rounds} rounds interleaved in this run — runtime CPU per turn: "
              f"SQLite {_spread(sqlite)}, PostgreSQL {_spread(postgres)}; ratio of the medians "
              f"{statistics.median(postgres) / statistics.median(sqlite):.2f} (round by round {min(ratios):.2f}–{max(ratios):.2f})")
    return 0
