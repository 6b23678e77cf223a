"""Console adapter: a terminal as a Surface (a live status line, answers printed once), `ask` for
one turn (with `--json`, one stream event per line) and the interactive `console` chat."""

from __future__ import annotations

import asyncio
import itertools
import json
import mimetypes
import shutil
import sys
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TextIO

from bot.agent import IncomingFile, TurnInput
from bot.app import App
from bot.conversation import ConversationKey
from bot.events import Attachment, Card, Final, StreamEvent
from bot.render import Surface, TurnRenderer


def render_card(card: Card) -> str:
    lines = [f"  ▸ {card.title}" + (f" — {card.subtitle}" if card.subtitle else "")]
    lines += [f"      {name}: {value}" for name, value in card.fields.items()]
    if card.url:
        lines.append(f"      {card.url}")
    if card.actions:
        lines.append("      " + "  ".join(f"[{a.label}]" for a in card.actions))
    return "\n".join(lines)


class StatusLine:
    """One live-edited line on a terminal (the console's status message); plain lines otherwise."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.live = out.isatty()
        self.max_chars = shutil.get_terminal_size((100, 20)).columns - 1 if self.live else 100_000
        self.shown = ""

    async def post(self, text: str) -> str:
        await self.edit("status", text)
        return "status"

    async def edit(self, message_id: str, text: str) -> None:
        text = " ".join(text.split())
        if self.live:
            text = text[-self.max_chars :]
            self.out.write("\r" + text.ljust(len(self.shown)) + "\r" + text)
        elif text != self.shown:
            self.out.write(text + "\n")
        self.out.flush()
        self.shown = text

    def clear(self) -> None:
        if self.live and self.shown:
            self.out.write("\r" + " " * len(self.shown) + "\r")
            self.out.flush()
        self.shown = ""


class Printed:
    """Messages printed one after another: a terminal cannot edit what it printed."""

    max_chars = 1_000_000

    def __init__(self, out: TextIO, status: StatusLine) -> None:
        self.out = out
        self.status = status
        self.ids = itertools.count(1)

    async def post(self, text: str) -> str:
        self.status.clear()
        self.out.write(text + "\n")
        self.out.flush()
        return str(next(self.ids))

    async def edit(self, message_id: str, text: str) -> None:
        await self.post(text)


class TerminalSurface(Surface):
    name = "the terminal"
    live_answer = False
    edit_interval = 0.0

    def __init__(self, out: TextIO, files_dir: Path | None = None) -> None:
        self.progress = self.status_line = StatusLine(out)
        self.stream_to_progress = self.status_line.live
        self.answer = Printed(out, self.status_line)
        self.files_dir = files_dir

    def progress_markup(self, line: str) -> str:
        return f"… {line}"

    def failure_markup(self, failure: object) -> str:
        return f"⚠ {getattr(failure, 'user_message', failure)}"

    async def post(self, text: str) -> str:
        return await self.answer.post(text)

    async def delete(self, message_id: str) -> None:
        if message_id == "status":
            self.status_line.clear()

    async def post_cards(self, cards: Sequence[Card]) -> list[str]:
        return [await self.post(render_card(card)) for card in cards]

    async def post_file(self, file: Attachment) -> None:
        where = f" → {save_file(self.files_dir, file)}" if self.files_dir is not None else ""
        await self.post(f"  📎 {file.filename} ({len(file.content)} chars){where}")


def save_file(directory: Path, file: Attachment) -> Path:
    """Keep a file the bot sent (e.g. a full report) where the user can open it."""
    directory.mkdir(parents=True, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in file.filename) or "file"
    path = directory / safe
    path.write_text(file.content, encoding="utf-8")
    return path


async def render(events: AsyncIterator[StreamEvent], out: TextIO, files_dir: Path | None = None) -> StreamEvent | None:
    """Show progress on the status line, then the final answer; returns the terminal event."""
    return await TurnRenderer(TerminalSurface(out, files_dir), working="").run(events)


def load_attachment(path: str) -> IncomingFile:
    file = Path(path)
    mime = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
    return IncomingFile(filename=file.name, content=file.read_bytes(), mime_type=mime)


def _files_dir(app: App, key: ConversationKey) -> Path:
    return app.settings.data_dir / "files" / key.thread_id.replace(":", "_")


async def ask(
    app: App, text: str, *, thread: str | None, user: str, attach: list[str], as_json: bool, out: TextIO = sys.stdout
) -> int:
    """One turn, then exit: 0 after a Final, 1 after a Failure."""
    try:
        files = tuple(load_attachment(p) for p in attach)
    except OSError as exc:
        print(f"cannot read attachment: {exc.strerror}: {exc.filename}", file=sys.stderr)
        return 2
    key = ConversationKey.console(thread or f"ask-{uuid.uuid4().hex[:12]}")
    async with await app.open_runtime() as runtime:
        events = runtime.handle(key, TurnInput.typed(text, user_id=user, attachments=files))
        if as_json:
            last = None
            async for event in events:
                last = event
                out.write(json.dumps(event.model_dump(mode="json"), ensure_ascii=False) + "\n")
                out.flush()
        else:
            last = await render(events, out, files_dir=_files_dir(app, key))
    return 0 if isinstance(last, Final) else 1


async def chat(app: App, *, agent: str | None, thread: str, user: str = "console") -> int:
    """Interactive terminal chat. Lines starting with `/` are commands; `/quit` leaves."""
    key = ConversationKey.console(thread)
    loop = asyncio.get_running_loop()
    await app.seed()  # the demo data, on the first start only
    async with await app.open_runtime() as runtime:
        names = ", ".join(c.slash for c in runtime.commands)
        print(f"Concierge — model: {app.settings.llm_mode}; commands: {names}, /quit")
        if key.thread_id in runtime.interrupted_at_start:
            print("(your last request here was interrupted by a restart)")
        default = runtime.commands.for_agent(agent) if agent else None
        while True:
            try:
                line = await loop.run_in_executor(None, lambda: input("you › "))
            except (EOFError, KeyboardInterrupt):
                print()
                return 0
            line = line.strip()
            if line in ("/quit", "/exit"):
                return 0
            if not line:
                continue
            turn = TurnInput.typed(line, user_id=user)
            if turn.command is None and default is not None:
                turn = turn.but(command=default.name)
            print("bot › ", end="", flush=True)
            await render(runtime.handle(key, turn), sys.stdout, files_dir=_files_dir(app, key))
