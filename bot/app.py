"""The application the entry module assembles: settings, agents and the command-line commands the
agents and platforms bring; what every command needs from them (a runtime, seeding, the worker)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from bot import workpool
from bot.agent import AgentDefinition, AgentEnv, CliCommand
from bot.commands import CommandTable
from bot.config import Settings
from bot.llm import ModelProvider
from bot.loopwatch import LoopWatch
from bot.runtime import ConversationRuntime
from bot.workpool import WorkLimits, WorkPool

log = logging.getLogger(__name__)


@dataclass
class App:
    settings: Settings
    agents: Sequence[AgentDefinition]
    cli: Sequence[CliCommand] = ()  # the platforms' commands; agents' are added by cli_commands()

    @cached_property
    def commands(self) -> CommandTable:
        return CommandTable.of(self.agents)

    def cli_commands(self) -> list[CliCommand]:
        return [*self.cli, *(c for agent in self.agents for c in agent.cli_commands())]

    def env(self, agent: AgentDefinition) -> AgentEnv:
        return AgentEnv(settings=self.settings, agent_settings=agent.load_settings(self.settings))

    async def open_runtime(self, *, models: ModelProvider | None = None) -> ConversationRuntime:
        """The runtime, with what runs beside it for its lifetime: the work pool (its processes
        start on first use) and the loop-lag watch; closing the runtime stops both."""
        runtime = await _ServedRuntime.open(self.settings, agents=self.agents, models=models)
        await runtime.models.warm()  # the SDK's lazy imports, off the loop before the first turn
        # Started once the runtime is built: building it (imports, graphs) is not a stall to report.
        runtime.services = await _Services.start(self.settings)
        return runtime

    async def seed(self) -> list[str]:
        """Every agent's demo data (idempotent); what each one did."""
        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        done = []
        for agent in self.agents:
            line = await agent.seed(self.env(agent))
            if line:
                done.append(line)
        return done

    async def work(self, stop: asyncio.Event) -> None:
        """Every agent's background jobs, until `stop` is set. A job that crashes is logged; the
        others go on."""
        jobs = [job for agent in self.agents for job in agent.worker_jobs(self.env(agent))]
        if not jobs:
            log.warning("worker: no agent has background jobs")
            await stop.wait()
            return
        services = await _Services.start(self.settings)

        async def run(job: Any) -> None:
            try:
                await job.run(stop)
            except Exception:
                log.exception("worker job %s failed", job.name)

        log.info("worker: running %s", ", ".join(job.name for job in jobs))
        tasks = [asyncio.create_task(run(job), name=job.name) for job in jobs]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*tasks, return_exceptions=True)
            await services.close()


@dataclass
class _Services:
    """The process-wide helpers of a long-running mode: the shared work pool and the loop watch."""

    pool: WorkPool
    watch: LoopWatch | None

    @classmethod
    async def start(cls, settings: Settings) -> _Services:
        watch = LoopWatch(settings.loop_lag_warn_ms) if settings.loop_lag_warn_ms else None
        if watch is not None:
            watch.start()
        return cls(pool=workpool.shared(WorkLimits.from_settings(settings)), watch=watch)

    async def close(self) -> None:
        if self.watch is not None:
            await self.watch.stop()
        await workpool.release(self.pool)


class _ServedRuntime(ConversationRuntime):
    services: _Services | None = None

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            if self.services is not None:
                services, self.services = self.services, None
                await services.close()
