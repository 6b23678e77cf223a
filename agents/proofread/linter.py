"""pymarkdownlnt in a child process.

Some malformed input sends pymarkdownlnt into an endless loop, and a thread cannot be stopped; a
process can. The child also runs the linter outside this process's GIL, so it overlaps with the
other checkers. One long-lived worker serves every review, one scan at a time.

The child is `python -m agents.proofread.linter [module:function]`, started with its own pipes
(not multiprocessing, whose spawn start method re-runs an unguarded main script)."""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

log = logging.getLogger(__name__)

Failure = tuple[int, int, str, str]  # (line, column, rule id, detail)
Scan = Callable[[str, tuple[str, ...], tuple[str, ...]], list[Failure]]
DEFAULT_SCAN = "agents.proofread.linter:pymarkdown_scan"


class LinterTimeout(Exception):
    pass


class LinterFailed(Exception):
    pass


class LinterCannotRead(LinterFailed):
    """pymarkdownlnt's own parser gave up on this text (BadTokenizationError): the same text
    fails the same way every time, so trying again does not help."""

    MARKER = "BadTokenizationError"


def pymarkdown_scan(text: str, extensions: tuple[str, ...], disabled: tuple[str, ...]) -> list[Failure]:
    """Run pymarkdownlnt on `text` (in the worker process)."""
    from pymarkdown.api import PyMarkdownApi, PyMarkdownApiException

    # pymarkdownlnt logs a traceback through the root logger (and may print) before raising;
    # the exception says all we need.
    logging.getLogger("pymarkdown").disabled = True
    api = PyMarkdownApi()
    for extension in extensions:
        api.enable_extension_by_identifier(extension)
    for rule in disabled:
        api.disable_rule_by_identifier(rule)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            result = api.scan_string(text)
    except PyMarkdownApiException as exc:
        if LinterCannotRead.MARKER in str(exc):
            raise LinterCannotRead(f"{LinterCannotRead.MARKER}: pymarkdownlnt could not parse this text") from None
        raise
    return [
        (f.line_number, f.column_number, f.rule_id.lower(), (f.extra_error_information or "").strip())
        for f in result.scan_failures
    ]


class LinterWorker:
    def __init__(self, scan: str = DEFAULT_SCAN) -> None:
        self._scan = scan  # "module:function" the child imports
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._requests: Connection | None = None
        self._replies: Connection | None = None

    def start(self) -> None:
        with self._lock:
            self._ensure_started()

    def _ensure_started(self) -> None:
        if self._process is not None and self._process.poll() is None:
            return
        self._kill()
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "agents.proofread.linter", self._scan],
            stdin=request_read, stdout=reply_write, env=env, close_fds=True,
        )
        os.close(request_read)
        os.close(reply_write)
        self._requests = Connection(request_write, readable=False)
        self._replies = Connection(reply_read, writable=False)

    def scan(self, text: str, extensions: tuple[str, ...], disabled: tuple[str, ...], *, timeout: float) -> list[Failure]:
        """Blocking; call it from a worker thread. LinterTimeout when the scan takes too long
        (the child is killed and replaced on the next call), LinterFailed when it raised."""
        if not self._lock.acquire(timeout=timeout):
            raise LinterTimeout(f"the linter was busy for more than {timeout:g}s")
        try:
            self._ensure_started()
            assert self._requests is not None and self._replies is not None
            self._requests.send((text, extensions, disabled))
            if not self._replies.poll(timeout):
                log.warning("pymarkdownlnt did not finish in %.1fs; restarting it", timeout)
                self._kill()
                raise LinterTimeout(f"pymarkdownlnt did not finish within {timeout:g}s")
            status, payload = self._replies.recv()
        except (EOFError, OSError) as exc:
            self._kill()
            raise LinterFailed(f"the linter process stopped ({type(exc).__name__})") from None
        finally:
            self._lock.release()
        if status == "error":
            if LinterCannotRead.MARKER in payload:
                raise LinterCannotRead(payload)
            raise LinterFailed(payload)
        return payload  # type: ignore[no-any-return]

    def _kill(self) -> None:
        for connection in (self._requests, self._replies):
            if connection is not None:
                connection.close()
        if self._process is not None:
            self._process.kill()
            self._process.wait(timeout=5)
        self._process = self._requests = self._replies = None

    def close(self) -> None:
        with self._lock:
            self._kill()


WORKER = LinterWorker()


def serve(scan: Scan, requests: Connection, replies: Connection) -> None:
    while True:
        try:
            request: Any = requests.recv()
        except (EOFError, OSError):
            return
        try:
            replies.send(("ok", scan(*request)))
        except Exception as exc:
            replies.send(("error", f"{type(exc).__name__}: {exc}"))


def main() -> None:
    module, _, name = (sys.argv[1] if len(sys.argv) > 1 else DEFAULT_SCAN).partition(":")
    scan = getattr(importlib.import_module(module), name)
    # The protocol owns stdin/stdout; anything the linter prints goes to stderr instead.
    replies = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)
    serve(scan, Connection(os.dup(0), writable=False), replies)


if __name__ == "__main__":
    main()
