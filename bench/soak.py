"""Soak: several `python -m bot slack` processes on one PostgreSQL, Slack deliveries for the same
threads spread over them (interleaved, duplicated, retried when a process does not answer), the
model failing a share of requests (429, 500, timeouts), one process SIGKILLed and started again
mid-run, another's turn-lock connection ended by the server while it holds turns, and a third's
connections (pool, lock, checkpoints) all ended at once; meanwhile the worker refreshes hotel rates
into the same database from a supplier that fails about a third of its requests (429, 500, 503,
garbage, dropped connections). Counts every message sent, answered, answered twice, lost or answered out of order.

`python -m bench soak [--minutes N]` runs it for N minutes (default: one round of threads) and
prints sent/answered/duplicated/lost, p50/p99 turn and acknowledgement latency and each process's
RSS at start and end; tests/reliability/test_soak.py runs a short round and asserts on the report.

A thread's next message is sent once its previous one has arrived (queued in the database, or
answered): the order they arrived in is the order they must be answered in. Different threads'
messages are in flight together, on different processes."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import random
import re
import signal
import socket
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench._common import percentile
from tests.fakes.openai_server import FakeOpenAI, Fault
from tests.fakes.slack_api import BOT_TOKEN, SIGNING_SECRET, FakeSlackAPI, SlackDelivery
from tests.fakes.supplier_server import FakeSupplier

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATABASE = "postgresql://postgres@127.0.0.1:5432/test"
_MARKER = re.compile(r"q\d{4}x\d{2}z")
# What a user must never see: Python's own words for a crash.
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+|\b\w+(Error|Exception): ")


def marker(thread: int, k: int) -> str:
    """The text of message `k` of thread `thread`; the fake model echoes it in the answer."""
    return f"q{thread:04d}x{k:02d}z"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_kb(pid: int) -> int:
    """A process's resident set size (KB), 0 when unknown."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class BotProcess:
    """`python -m bot slack` in its own process, on the shared database, the fake Slack and model."""

    def __init__(self, name: str, env: dict[str, str], work_dir: Path, command: str = "slack") -> None:
        self.name = name
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/slack/events"
        data_dir = work_dir / name  # its own: the shop's embedded Qdrant is one process's
        data_dir.mkdir(parents=True, exist_ok=True)
        self.env = {**env, "PORT": str(self.port), "CONCIERGE_DATA_DIR": str(data_dir)}
        url = self.env.get("CONCIERGE_DATABASE_URL", "")
        if url.startswith("postgres") and "application_name" not in url:  # its connections, by name
            self.env["CONCIERGE_DATABASE_URL"] = f"{url}{'&' if '?' in url else '?'}application_name=soak-{name}"
        self.command = command
        self.proc: asyncio.subprocess.Process | None = None
        self.log = Path(self.env["CONCIERGE_DATA_DIR"]) / "bot.log"
        self.rss_start = 0

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def start(self, within: float = 90.0) -> None:
        with self.log.open("ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", self.command, cwd=ROOT, env=self.env, stdout=log, stderr=log,
            )
        if self.command != "slack":  # nothing to poll: it counts as started once it runs
            self.rss_start = rss_kb(self.proc.pid)
            return
        deadline = time.monotonic() + within
        async with aiohttp.ClientSession() as http:
            while True:
                if self.proc.returncode is not None:
                    raise RuntimeError(f"{self.name} exited while starting; see {self.log}")
                with contextlib.suppress(aiohttp.ClientError):
                    async with http.get(f"http://127.0.0.1:{self.port}/healthz") as resp:
                        if resp.status == 200:
                            break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self.name} did not start; see {self.log}")
                await asyncio.sleep(0.05)
        self.rss_start = rss_kb(self.proc.pid)

    async def stop(self, sig: int = signal.SIGTERM, within: float = 30.0) -> None:
        if self.proc is None or self.proc.returncode is not None:
            return
        self.proc.send_signal(sig)
        try:
            await asyncio.wait_for(self.proc.wait(), within)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()


@dataclass
class SoakReport:
    processes: int = 0
    threads: int = 0
    sent: int = 0  # user messages (each once, however many times it was delivered)
    deliveries: int = 0  # HTTP deliveries, duplicates and retries included
    duplicates_sent: int = 0
    retries_sent: int = 0
    answered: int = 0  # messages with exactly one answer
    duplicated: int = 0  # messages answered more than once
    lost: int = 0  # messages never answered
    out_of_order: int = 0  # answers that came before an earlier message's in the same thread
    failed: int = 0  # messages answered with an error message (the model failed every attempt)
    failures_shown: int = 0  # answers that were an error message rather than the model's reply
    tracebacks: int = 0  # bot messages with Python's crash words in them
    killed: int = 0
    killed_holding: int = 0  # turns queued or running in the killed process when it died
    connections_cut: int = 0  # turn-lock connections the server ended while they held turns
    pool_cut: int = 0  # connections of one process (pool, lock, checkpoints) the server ended at once
    model_requests: int = 0
    model_faults: int = 0
    supplier_requests: int = 0  # the worker's hotel-rate requests to the supplier
    supplier_faults: int = 0  # answered with 429/500/503, garbage or a dropped connection on purpose
    refreshes_done: int = 0  # the worker's refresh runs that wrote rates
    refreshes_failed: int = 0  # runs the supplier's faults ended (the next run still comes)
    worker_alive: bool = False  # the worker process still running at the end
    turn_latencies: list[float] = field(default_factory=list)
    ack_latencies: list[float] = field(default_factory=list)
    rss: dict[str, tuple[int, int]] = field(default_factory=dict)  # process → (start, end) KB
    wall: float = 0.0
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        def ms(values: list[float], p: float) -> str:
            return f"{percentile(values, p) * 1000:.0f} ms" if values else "n/a"

        lines = [
            f"soak: {self.processes} bot processes on one PostgreSQL, {self.threads} threads, {self.wall:.0f} s, "
            f"{self.killed} process SIGKILLed and restarted (holding {self.killed_holding} queued or running turns), "
            f"{self.connections_cut} turn-lock connection cut, {self.pool_cut} connections of one process cut at once",
            f"  messages: sent {self.sent}, answered {self.answered}, answered with an error {self.failed}, "
            f"duplicated {self.duplicated}, lost {self.lost}, out of order {self.out_of_order}",
            f"  deliveries: {self.deliveries} ({self.duplicates_sent} duplicates, {self.retries_sent} retries after "
            "no answer)",
            f"  model: {self.model_requests} requests, {self.model_faults} failed on purpose (429/500/timeout); "
            f"error answers shown {self.failures_shown}, tracebacks shown {self.tracebacks}",
            f"  supplier: {self.supplier_requests} requests from the worker, {self.supplier_faults} failed on purpose; "
            f"refresh runs that wrote rates {self.refreshes_done}, that failed {self.refreshes_failed}; "
            f"worker {'still running' if self.worker_alive else 'GONE'}",
            f"  turn latency (sent → answered): p50 {ms(self.turn_latencies, 50)}, p99 {ms(self.turn_latencies, 99)}",
            f"  ack latency (HTTP 200):         p50 {ms(self.ack_latencies, 50)}, p99 {ms(self.ack_latencies, 99)}",
            "  RSS (MB) start → end: " + ", ".join(
                f"{name} {start / 1024:.0f} → {end / 1024:.0f}" for name, (start, end) in self.rss.items()
            ),
        ]
        lines += [f"  problem: {p}" for p in self.problems[:20]]
        return "\n".join(lines)


@dataclass
class _Thread:
    index: int
    root_ts: str | None = None


class Soak:
    def __init__(
        self,
        *,
        processes: int = 3,
        threads: int = 6,
        messages: int = 5,
        minutes: float | None = None,
        fault_rate: float = 0.1,
        supplier_fault_rate: float = 0.3,
        duplicate_rate: float = 0.3,
        kill: bool = True,
        cut: bool = True,
        database_url: str = DEFAULT_DATABASE,
        seed: int = 1,
        work_dir: Path | None = None,
    ) -> None:
        self.work_dir = work_dir or Path(tempfile.mkdtemp(prefix="concierge-soak-"))
        self.n_processes, self.n_threads, self.messages = processes, threads, messages
        self.minutes, self.fault_rate, self.duplicate_rate, self.kill = minutes, fault_rate, duplicate_rate, kill
        self.cut = cut
        self.supplier_fault_rate = supplier_fault_rate
        self.database_url = database_url
        self.rng = random.Random(seed)
        self.channel = f"C{uuid.uuid4().hex[:10].upper()}"
        self.report = SoakReport(processes=processes)
        self.bots: list[BotProcess] = []
        self.arrived: set[str] = set()  # markers seen queued or answered
        self._paused = asyncio.Event()
        self._paused.set()  # set: sending allowed
        self._in_flight = 0
        self.sent_at: dict[str, float] = {}  # marker → when it was first sent

    # --- the run ------------------------------------------------------------------------------
    async def run(self) -> SoakReport:
        started = time.monotonic()
        async with (
            FakeSlackAPI() as api,
            FakeOpenAI(models=("gpt-4o-mini", "text-embedding-3-small"), latency=0.05) as model,
            FakeSupplier() as supplier,
        ):
            model.fail_randomly(
                self.fault_rate, [Fault.rate_limit(retry_after=0.2), Fault.server_error(500), Fault.hang(2.5)], seed=7
            )
            supplier.fail_randomly(self.supplier_fault_rate, ["429", "500", "503", "garbage", "disconnect"], seed=11)
            self.api, self.model = api, model
            env = self._env(api, model)
            self.bots = [BotProcess(f"slack-{i + 1}", env, self.work_dir) for i in range(self.n_processes)]
            # The hotel refresh on the same database, pulling rates from a supplier that fails often.
            worker = BotProcess("worker", {
                **env, "CONCIERGE_HOTEL_SUPPLIER_URL": supplier.base_url, "CONCIERGE_HOTEL_REFRESH_INTERVAL": "1",
                "CONCIERGE_HOTEL_SUPPLIER_RATE": "50",
            }, self.work_dir, command="worker")
            await asyncio.gather(*(bot.start() for bot in self.bots), worker.start())
            async with self._database() as db, contextlib.AsyncExitStack() as stack:
                self.db = db
                self.deliveries = {bot.name: await stack.enter_async_context(SlackDelivery(bot.url, api)) for bot in self.bots}
                watcher = asyncio.create_task(self._watch())
                chaos = [asyncio.create_task(self._kill_one())] if self.kill and self.n_processes > 1 else []
                if self.cut:
                    chaos.append(asyncio.create_task(self._cut_one()))
                    if self.n_processes > 2:
                        chaos.append(asyncio.create_task(self._cut_pool()))
                try:
                    await self._converse()
                    await self._settle()
                finally:
                    for task in (watcher, *chaos):
                        task.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await task
                for bot in self.bots:
                    self.report.rss[bot.name] = (bot.rss_start, rss_kb(bot.proc.pid) if bot.proc else 0)
            self.report.worker_alive = worker.alive
            await asyncio.gather(*(bot.stop() for bot in self.bots), worker.stop())
            self._count(api, model)
            self._count_supplier(supplier, worker)
        self.report.wall = time.monotonic() - started
        return self.report

    def _env(self, api: FakeSlackAPI, model: FakeOpenAI) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CONCIERGE_", "SLACK_", "DISCORD_"))}
        env.update(
            CONCIERGE_DATABASE_URL=self.database_url, CONCIERGE_DB_POOL_SIZE="4",
            CONCIERGE_LLM="openai", OPENAI_API_KEY="sk-soak", OPENAI_BASE_URL=model.base_url,
            CONCIERGE_LLM_TIMEOUT="1", CONCIERGE_RETRY_BASE_DELAY="0.05", CONCIERGE_RETRY_MAX_DELAY="0.3",
            CONCIERGE_EDIT_INTERVAL="0.2", SLACK_BOT_TOKEN=BOT_TOKEN, SLACK_SIGNING_SECRET=SIGNING_SECRET,
            SLACK_API_BASE_URL=api.base_url,
        )
        return env

    @contextlib.asynccontextmanager
    async def _database(self) -> AsyncIterator[Any]:
        import psycopg

        conn = await psycopg.AsyncConnection.connect(self.database_url, autocommit=True)
        try:
            yield conn
        finally:
            await conn.close()

    # --- senders ------------------------------------------------------------------------------
    async def _converse(self) -> None:
        deadline = time.monotonic() + self.minutes * 60 if self.minutes else None
        index = itertools.count()

        async def worker() -> None:
            while True:
                i = next(index)
                if deadline is None and i >= self.n_threads:
                    return
                if deadline is not None and time.monotonic() > deadline:
                    return
                await self._thread(_Thread(i))

        await asyncio.gather(*(worker() for _ in range(self.n_threads)))

    async def _thread(self, thread: _Thread) -> None:
        self.report.threads += 1
        self.report.sent += 1
        first = marker(thread.index, 0)
        self.sent_at[first] = time.monotonic()
        await self._command(first)
        root = await self._until(lambda: self._root(first), f"the root message of {first}")
        thread.root_ts = root.ts
        await self._until(lambda: first in self.arrived, f"{first} to arrive")
        for k in range(1, self.messages):
            await self._paused.wait()
            text = marker(thread.index, k)
            self.report.sent += 1
            self.sent_at[text] = time.monotonic()
            await self._message(text, root.ts)
            await self._until(lambda text=text: text in self.arrived, f"{text} to arrive")  # type: ignore[misc]

    def _root(self, text: str) -> Any:
        return next((m for m in self.api.channel_messages(self.channel) if text in m.text), None)

    def _live(self, exclude: str | None = None) -> list[BotProcess]:
        return [bot for bot in self.bots if bot.alive and bot.name != exclude]

    async def _command(self, text: str) -> None:
        """A slash command to one process; sent again elsewhere only if it never got there."""
        for _ in range(20):
            await self._paused.wait()
            bot = self.rng.choice(self._live())
            self._in_flight += 1
            try:
                delivered = await self.deliveries[bot.name].command("/chat", text, channel=self.channel, channel_name="soak")
            except aiohttp.ClientConnectorError:
                self.report.retries_sent += 1
                continue
            finally:
                self._in_flight -= 1
            self.report.deliveries += 1
            self.report.ack_latencies.append(delivered.elapsed)
            return
        raise RuntimeError(f"no process took the command {text}")

    async def _message(self, text: str, thread_ts: str) -> None:
        sender = self.deliveries[self.rng.choice(self._live()).name]
        event = sender.message_event(text, channel=self.channel, thread_ts=thread_ts)
        event_id = f"Ev{uuid.uuid4().hex[:12].upper()}"
        first = self.rng.choice(self._live())
        sends = [self._event(event, event_id, first, retry=0)]
        if self.rng.random() < self.duplicate_rate and len(self._live(first.name)) > 0:
            self.report.duplicates_sent += 1
            sends.append(self._event(event, event_id, self.rng.choice(self._live(first.name)), retry=1))
        await asyncio.gather(*sends)

    async def _event(self, event: dict[str, Any], event_id: str, bot: BotProcess, *, retry: int) -> None:
        """One delivery, retried on another process (with X-Slack-Retry-Num) when it gets no 200,
        as Slack retries."""
        for attempt in range(retry, retry + 6):
            self._in_flight += 1
            try:
                delivered = await self.deliveries[bot.name].event(event, event_id=event_id, retry_num=attempt or None)
                ok = delivered.status == 200
            except (aiohttp.ClientError, TimeoutError):
                ok = False
            finally:
                self._in_flight -= 1
            self.report.deliveries += 1
            if ok:
                self.report.ack_latencies.append(delivered.elapsed)
                return
            self.report.retries_sent += 1
            await self._until(lambda: bool(self._live()), "a live process")
            bot = self.rng.choice(self._live(bot.name) or self._live())
        self.report.problems.append(f"delivery {event_id} never acknowledged")

    async def _until(self, predicate: Any, what: str, within: float = 120.0) -> Any:
        deadline = time.monotonic() + within
        while not (value := predicate()):
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for {what}")
            await asyncio.sleep(0.02)
        return value

    # --- observers ----------------------------------------------------------------------------
    async def _watch(self) -> None:
        """Keep `arrived` current: markers queued in the database, or answered in Slack."""
        while True:
            cursor = await self.db.execute(
                "SELECT request FROM concierge_turn_queue WHERE key LIKE %s", (f"slack:%:{self.channel}:%",)
            )
            for (request,) in await cursor.fetchall():
                self.arrived.update(_MARKER.findall(request or ""))
            for message in self._answers():
                self.arrived.update(_MARKER.findall(message.text))
            await asyncio.sleep(0.02)

    def _answers(self) -> list[Any]:
        return [m for m in self.api.messages.values() if m.channel == self.channel and m.bot_id and m.thread_ts]

    async def _kill_one(self) -> None:
        """Once a third of the messages have been answered, SIGKILL a process while it has a turn
        queued or running and everything sent has arrived, then start it again."""
        planned = (self.n_threads * self.messages) if not self.minutes else 30
        await self._until(lambda: len(self._answered_markers()) >= planned // 3, "a third of the answers", within=600)
        victim = self.bots[0]
        assert victim.proc is not None
        deadline = time.monotonic() + 30
        try:
            while True:  # hold new messages back until everything sent has arrived; kill if the victim holds turns
                self._paused.clear()
                with contextlib.suppress(RuntimeError):
                    await self._until(lambda: self._in_flight == 0 and set(self.sent_at) <= self.arrived, "arrivals", 10)
                busy = await self._owned_entries(victim.proc.pid)
                if busy or time.monotonic() > deadline:
                    break
                self._paused.set()
                await asyncio.sleep(0.05)  # let some traffic through, then try again
            self.report.killed_holding = busy
            victim.proc.send_signal(signal.SIGKILL)
            await victim.proc.wait()
            self.report.killed += 1
        finally:
            self._paused.set()
        rss = self.report.rss
        rss[f"{victim.name} (killed)"] = (victim.rss_start, 0)
        await victim.start()

    async def _cut_one(self) -> None:
        """Once half the messages have been answered, have PostgreSQL end the turn-lock connection
        of the last process while it holds turns (its advisory locks go with it)."""
        planned = (self.n_threads * self.messages) if not self.minutes else 60
        await self._until(lambda: len(self._answered_markers()) >= planned // 2, "half the answers", within=600)
        bot = self.bots[-1]
        deadline = time.monotonic() + 30
        while bot.proc is not None and time.monotonic() < deadline:
            cursor = await self.db.execute(
                "SELECT pg_terminate_backend(pid::int) FROM (SELECT DISTINCT pid FROM concierge_turn_queue "
                "WHERE owner LIKE %s) q",
                (f"{bot.proc.pid}-%",),
            )
            if any(row[0] for row in await cursor.fetchall()):
                self.report.connections_cut += 1
                return
            await asyncio.sleep(0.01)

    async def _cut_pool(self) -> None:
        """Once two thirds of the messages have been answered, have PostgreSQL end every connection
        of one process at once (its shared pool, its lock connection, its checkpoints), as a
        failover or a connection-killing proxy would."""
        planned = (self.n_threads * self.messages) if not self.minutes else 60
        await self._until(lambda: len(self._answered_markers()) >= 2 * planned // 3, "two thirds", within=600)
        bot = self.bots[1]
        cursor = await self.db.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = %s",
            (f"soak-{bot.name}",),
        )
        row = await cursor.fetchone()
        self.report.pool_cut = int(row[0]) if row else 0

    async def _owned_entries(self, pid: int) -> int:
        cursor = await self.db.execute(
            "SELECT COUNT(*) FROM concierge_turn_queue WHERE owner LIKE %s AND key LIKE %s",
            (f"{pid}-%", f"slack:%:{self.channel}:%"),
        )
        row = await cursor.fetchone()
        return int(row[0]) if row else 0

    def _answered_markers(self) -> set[str]:
        return {found for m in self._answers() for found in _MARKER.findall(m.text)}

    async def _settle(self, within: float = 120.0) -> None:
        """Wait until every message sent has an answer (or `within` seconds pass), then a moment
        more for answers that would come twice."""
        expected = {marker(t, k) for t in range(self.report.threads) for k in range(self.messages)}
        with contextlib.suppress(RuntimeError):  # what is still missing then is counted as lost
            await self._until(lambda: expected <= self._answered_markers(), "every answer", within=within)
        await self._until(lambda: self._quiet(), "the bots to go quiet", within=30)

    def _quiet(self) -> bool:
        """No model request and no Slack call for half a second."""
        now = time.monotonic()
        last_call = self.api.calls[-1].at if self.api.calls else 0.0
        last_model = self.model.requests[-1].received_at if self.model.requests else 0.0
        return now - max(last_call, last_model) > 0.5

    # --- the count ----------------------------------------------------------------------------
    def _count_supplier(self, supplier: FakeSupplier, worker: BotProcess) -> None:
        report = self.report
        report.supplier_requests = len(supplier.requests)
        report.supplier_faults = sum(1 for r in supplier.requests if r.status != 200)
        log = worker.log.read_text(errors="replace") if worker.log.exists() else ""
        report.refreshes_done = len(re.findall(r"refresh done: .* written=[1-9]", log))
        report.refreshes_failed = log.count("refresh run failed")

    def _count(self, api: FakeSlackAPI, model: FakeOpenAI) -> None:
        report = self.report
        posted_at = {
            str(call.response.get("ts")): call.at for call in api.calls if call.method == "chat.postMessage" and call.ok
        }
        answers: dict[str, list[float]] = {}  # marker → when each answer showed it first
        errors: dict[str, int] = {}  # thread → error answers there
        roots = {m.ts: _MARKER.findall(m.text) for m in api.messages.values() if m.channel == self.channel and m.bot_id and not m.thread_ts}
        for message in self._answers():
            if _TRACEBACK.search(message.text):
                report.tracebacks += 1
                report.problems.append(f"traceback shown: {message.text[:200]!r}")
            found = _MARKER.findall(message.text)
            if not found and message.text.strip() and not message.text.startswith("_"):
                report.failures_shown += 1
                thread = next(iter(roots.get(str(message.thread_ts)) or ["?"]))[:6]
                errors[thread] = errors.get(thread, 0) + 1
                report.problems.append(f"error answer in thread {thread}: {message.text[:160]!r}")
            for text in found:
                index = next(i for i, seen in enumerate(message.history) if text in seen)
                at = message.edit_times[index - 1] if index > 0 and index - 1 < len(message.edit_times) else posted_at.get(message.ts, 0.0)
                answers.setdefault(text, []).append(at)
        for t in range(report.threads):
            previous = 0.0
            for k in range(self.messages):
                text = marker(t, k)
                times = answers.get(text, [])
                if not times:
                    if errors.get(text[:6], 0) > 0:  # the error answer in its thread was its answer
                        errors[text[:6]] -= 1
                        report.failed += 1
                        continue
                    report.lost += 1
                    report.problems.append(f"{text} was never answered")
                    continue
                if len(times) > 1:
                    report.duplicated += 1
                    report.problems.append(f"{text} was answered {len(times)} times")
                else:
                    report.answered += 1
                first = min(times)
                if first < previous:
                    report.out_of_order += 1
                    report.problems.append(f"{text} was answered before the message sent before it")
                previous = first
                if text in self.sent_at:
                    report.turn_latencies.append(first - self.sent_at[text])
        report.model_requests = len(model.requests)
        report.model_faults = sum(1 for r in model.requests if r.status not in (None, 200))


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench soak")
    parser.add_argument("--minutes", type=float, help="keep starting threads for this long (default: one round)")
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--threads", type=int, default=6, help="threads in flight at once")
    parser.add_argument("--messages", type=int, default=5, help="messages per thread, the command included")
    parser.add_argument("--fault-rate", type=float, default=0.1)
    parser.add_argument("--supplier-fault-rate", type=float, default=0.3, help="share of the worker's supplier requests that fail")
    parser.add_argument("--no-kill", action="store_true")
    parser.add_argument("--no-cut", action="store_true", help="do not cut a turn-lock connection")
    parser.add_argument("--database-url", default=DEFAULT_DATABASE)
    args = parser.parse_args(argv)
    soaked = Soak(
        processes=args.processes, threads=args.threads, messages=args.messages, minutes=args.minutes,
        fault_rate=args.fault_rate, supplier_fault_rate=args.supplier_fault_rate, kill=not args.no_kill, cut=not args.no_cut, database_url=args.database_url,
    )
    report = await soaked.run()
    print(report.summary())
    print(f"  logs: {soaked.work_dir}/slack-*/bot.log, {soaked.work_dir}/worker/bot.log")
    worker_ok = report.worker_alive and report.refreshes_done > 0
    return 0 if worker_ok and not (report.lost or report.duplicated or report.out_of_order or report.tracebacks) else 1
