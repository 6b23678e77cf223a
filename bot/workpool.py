"""Worker processes for CPU-heavy work on untrusted input: a job that overruns its timeout (or is
cancelled, e.g. by the turn deadline) has its process killed and replaced, so no upload can keep
the bot busy after the turn gave up.

Each worker is a child process of its own (`python -m bot.workpool`) running one job at a time
over a pair of pipes; the event loop waits on the reply pipe with `add_reader`, so no thread is
tied up per job. Workers start on first use and are reused. A job is a picklable top-level
function; what it returns must be picklable too (plain data).

Why not concurrent.futures.ProcessPoolExecutor: cancelling its future does not stop a running
job, and killing one of its processes breaks the whole executor. pebble's ProcessPool kills an
overrunning worker, but brings its own scheduler threads and futures, and the per-user limit
and the asyncio waiting would still be ours; what is left is this module. Not multiprocessing's
processes either: its `fork` is unsafe in a process with threads, and `spawn`/`forkserver`
re-run the parent's main script when it lacks an `if __name__ == "__main__"` guard.

Limits: `timeout` seconds per job, an optional address-space limit per worker (RLIMIT_AS, Linux:
a job that allocates past it fails with MemoryError, reported as a job failure), and at most
`per_user` jobs in flight per owner (the user the work is for): further jobs of that owner wait
their turn (in order) rather than being refused, because one review is several jobs; the wait
counts against the turn deadline like any other."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from bot.faults import FAULT_TABLE, FaultClass, TurnFailed

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

log = logging.getLogger(__name__)

T = TypeVar("T")
Reason = Literal["timeout", "memory", "crashed", "error"]

# Who the current work is for; set by the code that knows the user (see `owner()`).
JOB_OWNER: ContextVar[str | None] = ContextVar("job_owner", default=None)
ANONYMOUS = "-"


class WorkFailed(TurnFailed):
    """A job did not produce a result: `reason` says why; `user_message` is safe to show."""

    def __init__(self, reason: Reason, detail: str = "", *, timeout: float = 0.0) -> None:
        fault = _FAULTS.get(reason, FaultClass.WORK_CRASHED)
        strategy = FAULT_TABLE[fault]
        super().__init__(strategy.failure, strategy.user_message.format(seconds=timeout), fault=fault)
        self.values = {"seconds": timeout}
        self.reason = reason
        self.detail = detail
        self.timeout = timeout


_FAULTS: dict[str, FaultClass] = {
    "timeout": FaultClass.WORK_TIMEOUT,
    "memory": FaultClass.WORK_MEMORY,
    "crashed": FaultClass.WORK_CRASHED,
    "error": FaultClass.WORK_CRASHED,
}


@dataclass(frozen=True)
class WorkLimits:
    processes: int = 2
    timeout: float = 30.0
    memory_mb: int = 0  # 0: no limit
    per_user: int = 1

    @classmethod
    def from_settings(cls, settings: Any) -> WorkLimits:
        return cls(
            processes=settings.work_processes or min(2, os.cpu_count() or 1),
            timeout=settings.work_timeout,
            memory_mb=settings.work_memory_mb,
            per_user=settings.work_per_user,
        )


@contextlib.contextmanager
def owner(user: str | None) -> Iterator[None]:
    """Jobs started inside the block (also from tasks it creates) count against `user`'s limit."""
    token = JOB_OWNER.set(user)
    try:
        yield
    finally:
        JOB_OWNER.reset(token)


def _serve(requests: Connection, replies: Connection) -> None:
    """A worker process: run jobs until the pipe closes."""
    while True:
        try:
            job = requests.recv()
        except (EOFError, OSError):
            return
        except MemoryError:
            replies.send(("memory", "the job's input did not fit in memory"))
            continue
        if job is None:
            return
        function, args = job
        try:
            reply: tuple[str, Any] = ("ok", function(*args))
        except MemoryError:
            reply = ("memory", f"{getattr(function, '__name__', 'job')} ran out of memory")
        except Exception as exc:
            reply = ("error", f"{type(exc).__name__}: {exc}"[:500])
        del job, function, args
        try:
            replies.send(reply)
        except MemoryError:
            replies.send(("memory", "the job's result did not fit in memory"))
        except Exception as exc:  # an unpicklable result
            replies.send(("error", f"the result could not be sent back ({type(exc).__name__})"))


def main() -> None:
    """`python -m bot.workpool REQUEST_FD REPLY_FD MEMORY_MB`: one worker process."""
    from multiprocessing.connection import Connection

    request_fd, reply_fd, memory_mb = (int(arg) for arg in sys.argv[1:4])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the bot; it stops its workers
    if sys.platform == "linux":
        import ctypes

        with contextlib.suppress(Exception):  # die with the bot, even when it is killed
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if memory_mb:
        import resource

        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _serve(Connection(request_fd, writable=False), Connection(reply_fd, readable=False))


class _Worker:
    """One worker process (`python -m bot.workpool`) and its two pipes. A child process of its
    own rather than multiprocessing's, whose spawn and forkserver methods re-run the parent's main
    script when it has no `if __name__ == "__main__"` guard."""

    def __init__(self, memory_mb: int) -> None:
        self.memory_mb = memory_mb
        self.process: subprocess.Popen[bytes] | None = None
        self.requests: Connection | None = None
        self.replies: Connection | None = None

    def start(self) -> None:
        from multiprocessing.connection import Connection  # imported on first use, not at start-up

        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "bot.workpool", str(request_read), str(reply_write), str(self.memory_mb)],
                stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno() if _has_fileno(sys.stderr) else None,
                env=env, pass_fds=(request_read, reply_write), close_fds=True,
            )
        finally:
            os.close(request_read)
            os.close(reply_write)
        self.requests = Connection(request_write, readable=False)
        self.replies = Connection(reply_read, writable=False)

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    async def call(self, function: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> Any:  # noqa: ASYNC109
        assert self.requests is not None and self.replies is not None
        replies = self.replies
        loop = asyncio.get_running_loop()
        reply: asyncio.Future[tuple[str, Any]] = loop.create_future()

        def readable() -> None:
            loop.remove_reader(replies.fileno())
            if reply.done():
                return
            try:
                # The reply has started to arrive; the worker writes the rest at once. Some
                # loops (uvloop) make a watched descriptor non-blocking: read it blocking.
                os.set_blocking(replies.fileno(), True)
                reply.set_result(replies.recv())
            except (EOFError, OSError):
                reply.set_result(("crashed", "the worker process stopped"))
            except Exception as exc:
                reply.set_result(("error", f"the result could not be read ({type(exc).__name__})"))

        try:
            self.requests.send((function, args))
        except (BrokenPipeError, OSError):
            raise WorkFailed("crashed", "the worker process stopped", timeout=timeout) from None
        loop.add_reader(replies.fileno(), readable)
        try:
            async with asyncio.timeout(timeout):
                status, payload = await reply
        except TimeoutError:
            raise WorkFailed("timeout", f"over {timeout:g}s", timeout=timeout) from None
        finally:
            with contextlib.suppress(Exception):
                loop.remove_reader(replies.fileno())
        if status == "ok":
            return payload
        raise WorkFailed(status, str(payload), timeout=timeout)  # type: ignore[arg-type]

    def stop(self, *, kill: bool) -> None:
        """Ask an idle worker to exit (it sees the pipe close), or kill a busy one; `reap()`
        collects it."""
        if kill and self.process is not None:
            with contextlib.suppress(Exception):
                self.process.kill()
        for connection in (self.requests, self.replies):
            with contextlib.suppress(Exception):
                if connection is not None:
                    connection.close()

    async def reap(self, within: float = 5.0) -> None:
        """Wait (polling, without blocking the loop) until the process has exited; kill it at
        `within` seconds."""
        process = self.process
        if process is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while process.poll() is None:
            if loop.time() > deadline:
                process.kill()
                deadline = loop.time() + within
            await asyncio.sleep(0.02)


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
    except Exception:
        return False
    return True


class _PerOwner:
    """At most `limit` jobs in flight per owner; the others wait in order. Entries for owners with
    nothing running or waiting are dropped."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._users: Counter[str] = Counter()  # running or waiting
        self._running: Counter[str] = Counter()

    def in_flight(self, who: str) -> int:
        return self._running[who]

    @contextlib.asynccontextmanager
    async def hold(self, who: str) -> AsyncIterator[None]:
        slots = self._slots.setdefault(who, asyncio.Semaphore(self.limit))
        self._users[who] += 1
        try:
            async with slots:
                self._running[who] += 1
                try:
                    yield
                finally:
                    self._running[who] -= 1
                    if self._running[who] <= 0:
                        del self._running[who]
        finally:
            self._users[who] -= 1
            if self._users[who] <= 0:
                del self._users[who]
                self._slots.pop(who, None)


class WorkPool:
    """Up to `limits.processes` worker processes, started on first use. `run()` a job; `close()`
    when the application stops."""

    def __init__(self, limits: WorkLimits | None = None) -> None:
        self.limits = limits or WorkLimits()
        self._slots: asyncio.Semaphore | None = None
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._owners = _PerOwner(self.limits.per_user)
        self._reaping: set[asyncio.Task[None]] = set()
        self._closed = False
        self.replaced = 0  # workers killed and replaced (overrun, cancelled job, out of memory, crash)

    @property
    def started(self) -> int:
        return len(self._idle) + len(self._busy)

    def in_flight(self, who: str) -> int:
        return self._owners.in_flight(who)

    async def run(self, function: Callable[..., T], *args: Any, timeout: float | None = None) -> T:  # noqa: ASYNC109
        """`function(*args)` in a worker process; its result. WorkFailed when it overran `timeout`
        (default: the pool's), ran out of memory, raised, or its process died. The owner is
        JOB_OWNER (see `owner()`)."""
        if self._closed:
            raise RuntimeError("the work pool is closed")
        limit = self.limits.timeout if timeout is None else timeout
        who = JOB_OWNER.get() or ANONYMOUS
        if self._slots is None:
            self._slots = asyncio.Semaphore(max(1, self.limits.processes))
        async with self._owners.hold(who), self._slots:
            worker = await self._take()
            finished = False
            try:
                result = await worker.call(function, args, limit)
                finished = True
                return result  # type: ignore[no-any-return]
            except WorkFailed as exc:
                finished = exc.reason == "error"  # the job raised; the process is fine
                if exc.reason == "timeout":
                    log.warning("work job %s overran %.1fs; its process was killed", _name(function), limit)
                elif exc.reason != "error":
                    log.warning("work job %s failed (%s): %s", _name(function), exc.reason, exc.detail)
                raise
            finally:
                self._give_back(worker, healthy=finished)

    async def _take(self) -> _Worker:
        while self._idle:
            worker = self._idle.pop()
            if worker.alive:
                self._busy.add(worker)
                return worker
            self._retire(worker, kill=True)
        worker = _Worker(self.limits.memory_mb)
        # Directly, not in a thread: fork-exec (vfork) takes a millisecond or two, and the
        # default executor's threads may all be busy with other work.
        worker.start()
        if self._closed:
            self._retire(worker, kill=True)
            raise RuntimeError("the work pool is closed")
        self._busy.add(worker)
        return worker

    def _give_back(self, worker: _Worker, *, healthy: bool) -> None:
        if worker not in self._busy:
            return  # close() stopped it already
        self._busy.discard(worker)
        if healthy and not self._closed and worker.alive:
            self._idle.append(worker)
            return
        if not healthy:
            self.replaced += 1
        self._retire(worker, kill=True)

    def _retire(self, worker: _Worker, *, kill: bool) -> None:
        worker.stop(kill=kill)
        task = asyncio.get_running_loop().create_task(worker.reap(), name="work-reap")
        self._reaping.add(task)
        task.add_done_callback(self._reaping.discard)

    async def close(self) -> None:
        """Stop every worker: idle ones are asked to exit, busy ones are killed."""
        self._closed = True
        for worker in self._idle:
            self._retire(worker, kill=False)
        for worker in self._busy:
            self._retire(worker, kill=True)
        self._idle.clear()
        self._busy.clear()
        if self._reaping:
            await asyncio.gather(*self._reaping, return_exceptions=True)


def _name(function: Callable[..., Any]) -> str:
    return f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', '?')}"


# The application's pool, shared by everything that runs in this process (see `shared`).
_shared: WorkPool | None = None
_users = 0


def shared(limits: WorkLimits) -> WorkPool:
    """The process's pool, created on the first call (nothing starts until a job runs); pair with
    `release()`. Later callers get the same pool whatever limits they pass."""
    global _shared, _users
    if _shared is None:
        _shared = WorkPool(limits)
    _users += 1
    return _shared


async def release(pool: WorkPool) -> None:
    """Drop one user of the shared pool; the last one closes it."""
    global _shared, _users
    if pool is not _shared:
        await pool.close()
        return
    _users -= 1
    if _users <= 0:
        _shared, _users = None, 0
        await pool.close()


def installed() -> WorkPool | None:
    """The shared pool, when the application runs one; None elsewhere (e.g. a graph built
    directly in a test), where callers run the work in-process."""
    return _shared


async def run_untrusted(function: Callable[..., T], *args: Any, timeout: float | None = None) -> T:  # noqa: ASYNC109
    """`function(*args)` in the shared pool when there is one, else in a thread of this process."""
    pool = _shared
    if pool is None:
        return await asyncio.to_thread(function, *args)
    return await pool.run(function, *args, timeout=timeout)


__all__ = [
    "JOB_OWNER", "WorkFailed", "WorkLimits", "WorkPool", "installed", "owner", "release", "run_untrusted", "shared",
]


if __name__ == "__main__":
    main()
