"""The terminal as a platform: a Surface with one live status line (plain lines when not a
terminal) and answers printed once; `ask` for one turn, `chat` for a conversation."""

from __future__ import annotations

import asyncio
import json
import mimetypes
import os
import shutil
import sys
import unicodedata
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import TextIO
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.agent import IncomingFile, TurnInput
from bot.app import App
from bot.conversation import ConversationKey
from bot.editor import STATUS_LINE, StatusLineSink
from bot.events import Attachment, Card, Failure, Final, StreamEvent
from bot.platform import locale_fields
from bot.render import Surface, TurnRenderer


def render_card(card: Card) -> str:
    lines = [f"  ▸ {card.title}" + (f" — {card.subtitle}" if card.subtitle else "")]
    lines += [f"      {name}: {value}" for name, value in card.fields.items()]
    lines += [f"      {card.url}"] if card.url else []
    lines += ["      " + "  ".join(f"[{a.label}]" for a in card.actions)] if card.actions else []
    return "\n".join(lines)


def columns(text: str) -> int:
    """How many terminal columns `text` takes: two for a wide character (kanji, kana, full-width)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def tail_in(text: str, width: int) -> str:
    """The end of `text` that fits in `width` columns."""
    used, start = 0, len(text)
    while start and used + columns(text[start - 1]) <= width:
        start -= 1
        used += columns(text[start])
    return text[start:]


class StatusLine(StatusLineSink):
    """The terminal's status message: one line rewritten in place on a terminal (never wider than
    it, counted in columns, so it never wraps onto a line `\r` cannot reach); elsewhere each new
    text is a line of its own."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.live, self.shown = out, out.isatty(), ""
        self.max_chars = shutil.get_terminal_size((100, 20)).columns - 1 if self.live else 100_000

    async def edit(self, message_id: str, text: str) -> None:
        text = tail_in(" ".join(text.split()), self.max_chars)
        if self.live:
            self.out.write("\r" + " " * columns(self.shown) + "\r" + text)
        elif text != self.shown:
            self.out.write(text + "\n")
        self.out.flush()
        self.shown = text

    def clear(self) -> None:
        if self.live and self.shown:
            self.out.write("\r" + " " * columns(self.shown) + "\r")
            self.out.flush()
        self.shown = ""


class TerminalSurface(Surface):
    name, live_answer, edit_interval, max_chars = "the terminal", False, 0.0, 1_000_000

    def __init__(self, out: TextIO, files_dir: Path | None = None) -> None:
        self.out, self.files_dir, self.printed = out, files_dir, 0
        self.progress = self.status = StatusLine(out)
        self.stream_to_progress = self.status.live
        self.answer = self  # printed once: the renderer never edits it (live_answer is False)

    async def post(self, text: str) -> str:
        self.status.clear()
        self.out.write(text + "\n")
        self.out.flush()
        self.printed += 1
        return str(self.printed)

    async def edit(self, message_id: str, text: str) -> None:
        await self.post(text)

    async def delete(self, message_id: str) -> None:
        if message_id == STATUS_LINE:
            self.status.clear()

    def progress_markup(self, line: str) -> str:
        return f"… {line}"

    def failure_markup(self, failure: Failure) -> str:
        return f"⚠ {failure.user_message}"

    async def post_cards(self, cards: Sequence[Card]) -> list[str]:
        return [await self.post(render_card(card)) for card in cards]

    async def post_file(self, file: Attachment) -> None:
        where = ""
        if self.files_dir is not None:  # keep it where the user can open it
            self.files_dir.mkdir(parents=True, exist_ok=True)
            path = self.files_dir / ("".join(c if c.isalnum() or c in "-_." else "_" for c in file.filename) or "file")
            path.write_bytes(file.payload())
            where = f" → {path}"
        size = f"{len(file.payload()):,} bytes" if file.is_binary else f"{len(file.content)} chars"
        await self.post(f"  📎 {file.filename} ({size}){where}")


def terminal_profile(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The terminal user's turn fields (`locale_fields`): the POSIX locale (LC_ALL, LC_MESSAGES,
    LANG; `ja_JP.UTF-8` → `ja-JP`, so the currency is yen) and TZ when it names a time zone."""
    raw = next((environ[name] for name in ("LC_ALL", "LC_MESSAGES", "LANG") if environ.get(name)), "")
    tag = raw.split(".")[0].split("@")[0].replace("_", "-")
    zone = environ.get("TZ", "").lstrip(":")
    try:
        zone = zone if "/" in zone and ZoneInfo(zone) else ""
    except (ValueError, ZoneInfoNotFoundError):
        zone = ""
    return locale_fields(tag if tag not in ("", "C", "POSIX") else None, zone or None)


def load_attachment(path: str) -> IncomingFile:
    file = Path(path)
    mime = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
    return IncomingFile(filename=file.name, content=file.read_bytes(), mime_type=mime)


async def render(app: App, key: ConversationKey, events: AsyncIterator[StreamEvent], out: TextIO) -> StreamEvent | None:
    """A turn shown in the terminal; the files it sends are kept under the data dir."""
    surface = TerminalSurface(out, app.settings.data_dir / "files" / key.thread_id.replace(":", "_"))
    return await TurnRenderer(surface, working="").run(events)


async def _or_nothing_waiting(events: AsyncIterator[StreamEvent]) -> AsyncIterator[StreamEvent]:
    empty = True
    async for event in events:
        empty = False
        yield event
    if empty:
        yield Failure(kind="bad_input", user_message="Nothing in this conversation is waiting for an answer.")


async def ask(
    app: App, text: str, *, thread: str | None, user: str, attach: list[str], as_json: bool,
    resume: str | None = None, out: TextIO = sys.stdout,
) -> int:
    """One turn, then exit: 0 after a Final, 1 after a Failure; `as_json` prints each event.
    `resume` answers the question the conversation is waiting on (as a button press would); 1 when
    nothing is waiting."""
    try:
        files = tuple(load_attachment(p) for p in attach)
    except OSError as exc:
        print(f"cannot read attachment: {exc.strerror}: {exc.filename}", file=sys.stderr)
        return 2
    key = ConversationKey.console(thread or f"ask-{uuid.uuid4().hex[:12]}")
    async with await app.open_runtime() as runtime:
        if resume is not None:
            events = _or_nothing_waiting(runtime.resume(key, resume, user_id=user))
        else:
            events = runtime.handle(key, TurnInput.typed(text, user_id=user, attachments=files).but(**terminal_profile()))
        if not as_json:
            return 0 if isinstance(await render(app, key, events, out), Final) else 1
        last = None
        async for last in events:
            out.write(json.dumps(last.model_dump(mode="json"), ensure_ascii=False) + "\n")
            out.flush()
    return 0 if isinstance(last, Final) else 1


async def chat(app: App, *, agent: str | None, thread: str, user: str = "console") -> int:
    """Interactive terminal chat. Lines starting with `/` are commands; `/quit` leaves."""
    key = ConversationKey.console(thread)
    await app.seed()  # the demo data, on the first start only
    async with await app.open_runtime() as runtime:
        print(f"Concierge — model: {app.settings.llm_mode}; commands: {', '.join(c.slash for c in runtime.commands)}, /quit")
        if key.thread_id in runtime.interrupted_at_start:  # answer the request a restart stopped
            print("bot › (your last request here was interrupted by a restart; resuming it)")
            await render(app, key, runtime.recover(key), sys.stdout)
        default = runtime.commands.for_agent(agent) if agent else None
        profile = terminal_profile()
        while True:
            try:
                line = (await asyncio.get_running_loop().run_in_executor(None, lambda: input("you › "))).strip()
            except (EOFError, KeyboardInterrupt):
                print()
                return 0
            if line in ("/quit", "/exit"):
                return 0
            if line:
                turn = TurnInput.typed(line, user_id=user).but(**profile)
                if turn.command is None and default is not None:
                    turn = turn.but(command=default.name)
                print("bot › ", end="", flush=True)
                await render(app, key, runtime.handle(key, turn), sys.stdout)
