"""A fake Slack: the Web API the bot calls, and the platform side that delivers signed requests to it.

`FakeSlackAPI` is an aiohttp server on 127.0.0.1 that implements every Web API method the bot uses,
keeps the messages it was asked to post, records every call, and can be told to answer the next
calls with 429 + Retry-After or `ok: false`. `SlackDelivery` plays Slack's side of the Events API:
it signs slash commands, events and button presses the way Slack does and POSTs them to the app.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import ClientSession, ClientTimeout, WSMsgType, web

BOT_TOKEN = "xoxb-fake-bot-token"
APP_TOKEN = "xapp-fake-app-token"
SIGNING_SECRET = "fake-signing-secret"
TEAM_ID = "T0FAKE"
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
APP_ID = "A0FAKE"

# Fields that the SDK sends as JSON strings inside form bodies.
_JSON_FIELDS = ("blocks", "attachments", "files", "chunks", "metadata", "prompts")


@dataclass
class ApiCall:
    method: str
    args: dict[str, Any]
    at: float  # time.monotonic() when the fake received it
    status: int = 200
    response: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == 200 and bool(self.response.get("ok"))


@dataclass
class FakeMessage:
    channel: str
    ts: str
    text: str = ""
    thread_ts: str | None = None
    blocks: list[dict[str, Any]] = field(default_factory=list)
    user: str = BOT_USER_ID
    bot_id: str | None = BOT_ID
    ephemeral_to: str | None = None
    streaming: bool = False
    history: list[str] = field(default_factory=list)  # every text the message has shown, in order
    edit_times: list[float] = field(default_factory=list)  # monotonic time of each chat.update/appendStream

    @property
    def edits(self) -> int:
        return len(self.edit_times)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "message", "ts": self.ts, "text": self.text, "user": self.user}
        if self.bot_id:
            out["bot_id"] = self.bot_id
        if self.thread_ts:
            out["thread_ts"] = self.thread_ts
        if self.blocks:
            out["blocks"] = self.blocks
        return out


@dataclass
class FakeFile:
    id: str
    name: str
    content: bytes
    mimetype: str
    filetype: str
    title: str = ""
    channel: str | None = None
    thread_ts: str | None = None
    claimed_size: int | None = None  # what the metadata says, when a test wants it to lie

    def metadata(self, base: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "title": self.title or self.name,
            "mimetype": self.mimetype,
            "filetype": self.filetype,
            "size": self.claimed_size if self.claimed_size is not None else len(self.content),
            "url_private": f"{base}/files-pri/{self.id}/{self.name}",
            "url_private_download": f"{base}/files-pri/{self.id}/download/{self.name}",
        }


@dataclass
class _Failure:
    status: int
    error: str
    retry_after: int | None
    remaining: int
    when: Callable[[dict[str, Any]], bool] | None = None  # only calls whose arguments match


class FakeSlackAPI:
    """The Slack Web API on 127.0.0.1, for tests and benchmarks."""

    def __init__(
        self,
        *,
        bot_token: str = BOT_TOKEN,
        app_token: str = APP_TOKEN,
        team_id: str = TEAM_ID,
        bot_user_id: str = BOT_USER_ID,
        bot_id: str = BOT_ID,
        latency: float = 0.0,
    ) -> None:
        self.bot_token = bot_token
        self.app_token = app_token
        self.team_id = team_id
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.latency = latency  # seconds added to every Web API answer, to make the fake feel remote
        self.calls: list[ApiCall] = []
        self.messages: dict[tuple[str, str], FakeMessage] = {}
        self.files: dict[str, FakeFile] = {}
        self.responses: list[tuple[str, dict[str, Any]]] = []  # (response_url id, body)
        self.downloads: list[tuple[str, str | None]] = []  # (path, Authorization header)
        self.hold_downloads: asyncio.Event | None = None  # downloads wait until it is set
        self.users: dict[str, dict[str, Any]] = {}
        self._failures: dict[str, list[_Failure]] = {}
        self._ts = itertools.count(1)
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._changed = asyncio.Event()
        self._sockets: list[web.WebSocketResponse] = []
        self._socket_acks: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._socket_connected = asyncio.Event()

    @classmethod
    def in_other_process(cls, port: int) -> FakeSlackAPI:
        """A handle on a fake running elsewhere (`python -m tests.fakes.slack_api --port N`): ids
        and URLs only, for SlackDelivery; its calls are not recorded here."""
        api = cls()
        api._port = port
        return api

    # --- lifecycle ------------------------------------------------------------------------
    async def start(self, *, port: int = 0) -> FakeSlackAPI:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes(
            [
                web.post("/api/{method}", self._api),
                web.get("/api/{method}", self._api),
                web.get("/files-pri/{file_id}/{rest:.*}", self._download),
                web.post("/upload/{file_id}", self._upload),
                web.post("/response/{rid}", self._response_url),
                web.get("/socket", self._socket),
                web.get("/_fake/stats", self._stats),
            ]
        )
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        self._port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeSlackAPI:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def base_url(self) -> str:
        """What SLACK_API_BASE_URL should be set to."""
        return f"{self.origin}/api/"

    # --- scripting ------------------------------------------------------------------------
    def fail(
        self,
        method: str,
        *,
        status: int = 200,
        error: str = "internal_error",
        retry_after: int | None = None,
        times: int = 1,
        when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        """Answer the next `times` calls of `method` (those whose arguments satisfy `when`, if
        given) with an HTTP status (429 + Retry-After) or ok:false."""
        self._failures.setdefault(method, []).append(_Failure(status, error, retry_after, times, when))

    def rate_limit(self, method: str, *, retry_after: int | None = 1, times: int = 1, status: int = 429) -> None:
        """`status=200`: Slack's other way of saying it, `ok: false, error: ratelimited` in a 200."""
        self.fail(method, status=status, error="ratelimited", retry_after=retry_after, times=times)

    def add_file(
        self,
        name: str,
        content: bytes,
        *,
        mimetype: str = "text/markdown",
        filetype: str = "markdown",
        claimed_size: int | None = None,
    ) -> dict[str, Any]:
        """Store a file as if a user uploaded it; returns the file object Slack puts in events."""
        f = FakeFile(f"F{next(self._ids):06d}", name, content, mimetype, filetype, claimed_size=claimed_size)
        self.files[f.id] = f
        return f.metadata(self.origin)

    def add_user_message(self, channel: str, text: str, *, user: str, thread_ts: str | None = None) -> str:
        """A message a human posted (so the fake's threads look like Slack's); returns its ts."""
        ts = self._next_ts()
        self.messages[(channel, ts)] = FakeMessage(
            channel, ts, text, thread_ts=thread_ts, user=user, bot_id=None, history=[text]
        )
        return ts

    def response_url(self) -> str:
        return f"{self.origin}/response/R{next(self._ids):06d}"

    # --- inspection -----------------------------------------------------------------------
    def calls_to(self, method: str) -> list[ApiCall]:
        return [c for c in self.calls if c.method == method]

    def thread(self, channel: str, thread_ts: str) -> list[FakeMessage]:
        """Messages posted in a thread (replies only), oldest first."""
        found = [
            m
            for (ch, _), m in self.messages.items()
            if ch == channel and m.thread_ts == thread_ts and m.ts != thread_ts and m.ephemeral_to is None
        ]
        return sorted(found, key=lambda m: float(m.ts))

    def channel_messages(self, channel: str) -> list[FakeMessage]:
        """Top-level messages in a channel (no thread replies, no ephemerals), oldest first."""
        found = [
            m
            for (ch, _), m in self.messages.items()
            if ch == channel and (m.thread_ts is None or m.thread_ts == m.ts) and m.ephemeral_to is None
        ]
        return sorted(found, key=lambda m: float(m.ts))

    def bot_messages(self) -> list[FakeMessage]:
        return sorted(
            (m for m in self.messages.values() if m.user == self.bot_user_id and m.ephemeral_to is None),
            key=lambda m: float(m.ts),
        )

    def ephemerals(self, user: str | None = None) -> list[FakeMessage]:
        return [m for m in self.messages.values() if m.ephemeral_to and (user is None or m.ephemeral_to == user)]

    async def wait_for(self, predicate: Callable[[], Any], *, within: float = 10.0) -> Any:
        """Wait until predicate() is truthy (re-checked after every call the fake receives)."""
        deadline = asyncio.get_running_loop().time() + within
        while True:
            value = predicate()
            if value:
                return value
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting; last calls: {[c.method for c in self.calls[-10:]]}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), min(remaining, 0.2))
            except TimeoutError:
                pass

    # --- Socket Mode ----------------------------------------------------------------------
    async def wait_for_socket(self, within: float = 10.0) -> None:
        await asyncio.wait_for(self._socket_connected.wait(), within)

    async def send_envelope(
        self, type_: str, payload: dict[str, Any], *, retry_attempt: int = 0, within: float = 10.0
    ) -> dict[str, Any]:
        """Deliver one Socket Mode envelope and wait for the app's acknowledgement."""
        await self.wait_for_socket(within)
        envelope_id = f"env-{next(self._ids)}"
        ack: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._socket_acks[envelope_id] = ack
        envelope = {
            "envelope_id": envelope_id,
            "type": type_,
            "payload": payload,
            "accepts_response_payload": type_ in ("slash_commands", "interactive"),
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else "",
        }
        await self._sockets[-1].send_str(json.dumps(envelope))
        return await asyncio.wait_for(ack, within)

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(heartbeat=None)
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_str(json.dumps({"type": "hello", "num_connections": 1}))
        self._socket_connected.set()
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                data = json.loads(msg.data)
                fut = self._socket_acks.pop(data.get("envelope_id", ""), None)
                if fut is not None and not fut.done():
                    fut.set_result(data)
        finally:
            self._sockets.remove(ws)
            if not self._sockets:
                self._socket_connected.clear()
        return ws

    # --- HTTP handlers --------------------------------------------------------------------
    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await _read_args(request)
        token = _bearer(request) or args.pop("token", None)
        if self.latency:
            await asyncio.sleep(self.latency)
        call = ApiCall(method, args, time.monotonic())
        self.calls.append(call)
        try:
            failure = self._take_failure(method, args)
            if failure is not None:
                call.status = failure.status
                call.response = {"ok": False, "error": failure.error}
                headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after is not None else {}
                return web.json_response(call.response, status=failure.status, headers=headers)
            expected = self.app_token if method == "apps.connections.open" else self.bot_token
            if token != expected:
                call.response = {"ok": False, "error": "invalid_auth"}
                return web.json_response(call.response)
            handler = getattr(self, "_m_" + method.replace(".", "_"), None)
            if handler is None:
                call.response = {"ok": False, "error": "unknown_method"}
            else:
                call.response = handler(args)
            return web.json_response(call.response)
        finally:
            self._changed.set()

    def _take_failure(self, method: str, args: dict[str, Any]) -> _Failure | None:
        queue = self._failures.get(method)
        failure = next((f for f in queue or () if f.when is None or f.when(args)), None)
        if queue is None or failure is None:
            return None
        failure.remaining -= 1
        if failure.remaining <= 0:
            queue.remove(failure)
        return failure

    async def _stats(self, request: web.Request) -> web.Response:
        """Counts for a harness in another process: calls per method, messages, open streams."""
        methods: dict[str, int] = {}
        for call in self.calls:
            methods[call.method] = methods.get(call.method, 0) + 1
        return web.json_response(
            {
                "calls": methods,
                "messages": len(self.messages),
                "with_blocks": sum(1 for m in self.messages.values() if m.blocks),
                "streaming": sum(1 for m in self.messages.values() if m.streaming),
            }
        )

    async def _download(self, request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Authorization")
        self.downloads.append((request.path, auth))
        self._changed.set()
        if self.hold_downloads is not None:
            await self.hold_downloads.wait()
        f = self.files.get(request.match_info["file_id"])
        if auth != f"Bearer {self.bot_token}":
            # Slack answers an unauthenticated download with its HTML sign-in page.
            return web.Response(text="<html>sign in</html>", content_type="text/html")
        if f is None:
            return web.Response(status=404)
        return web.Response(body=f.content, content_type=f.mimetype)

    async def _upload(self, request: web.Request) -> web.Response:
        f = self.files.get(request.match_info["file_id"])
        if f is None:
            return web.Response(status=404, text="no such upload")
        f.content = await request.read()
        self._changed.set()
        return web.Response(text=f"OK - {len(f.content)}")

    async def _response_url(self, request: web.Request) -> web.Response:
        self.responses.append((request.match_info["rid"], await request.json()))
        self._changed.set()
        return web.Response(text="ok")

    # --- methods --------------------------------------------------------------------------
    def _next_ts(self) -> str:
        n = next(self._ts)
        return f"{1_700_000_000 + n}.{n:06d}"

    def _message(self, args: dict[str, Any]) -> FakeMessage | None:
        return self.messages.get((str(args.get("channel") or args.get("channel_id")), str(args.get("ts"))))

    def _m_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://fake.slack.test/",
            "team": "Fake Team",
            "user": "concierge",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "app_id": APP_ID,
        }

    def _m_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = args.get("channel")
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        text = args.get("text") or args.get("markdown_text") or ""
        if not text and not args.get("blocks"):
            return {"ok": False, "error": "no_text"}
        if len(text) > 40_000:
            return {"ok": False, "error": "msg_too_long"}
        if len(args.get("blocks") or []) > 50:
            return {"ok": False, "error": "invalid_blocks"}
        ts = self._next_ts()
        msg = FakeMessage(
            str(channel),
            ts,
            text,
            thread_ts=args.get("thread_ts"),
            blocks=list(args.get("blocks") or []),
            history=[text],
        )
        self.messages[(msg.channel, ts)] = msg
        return {"ok": True, "channel": channel, "ts": ts, "message": msg.as_dict()}

    def _m_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        ts = self._next_ts()
        msg = FakeMessage(
            str(args.get("channel")),
            ts,
            args.get("text") or "",
            thread_ts=args.get("thread_ts"),
            blocks=list(args.get("blocks") or []),
            ephemeral_to=str(args.get("user")),
        )
        self.messages[(msg.channel, ts)] = msg
        return {"ok": True, "message_ts": ts}

    def _m_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        msg = self._message(args)
        if msg is None:
            return {"ok": False, "error": "message_not_found"}
        if msg.user != self.bot_user_id:
            return {"ok": False, "error": "cant_update_message"}
        text = args.get("text") or args.get("markdown_text") or ""
        if len(text) > 40_000:
            return {"ok": False, "error": "msg_too_long"}
        msg.text = text
        if "blocks" in args:
            msg.blocks = list(args.get("blocks") or [])
        msg.history.append(text)
        msg.edit_times.append(time.monotonic())
        return {"ok": True, "channel": msg.channel, "ts": msg.ts, "text": text}

    def _m_chat_delete(self, args: dict[str, Any]) -> dict[str, Any]:
        msg = self._message(args)
        if msg is None:
            return {"ok": False, "error": "message_not_found"}
        del self.messages[(msg.channel, msg.ts)]
        return {"ok": True, "channel": msg.channel, "ts": msg.ts}

    @staticmethod
    def _chunk_text(args: dict[str, Any]) -> str:
        text = args.get("markdown_text") or ""
        for chunk in args.get("chunks") or []:
            if chunk.get("type") == "markdown_text":
                text += chunk.get("text", "")
        return text

    def _m_chat_startStream(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args.get("channel"))
        if not args.get("thread_ts"):
            return {"ok": False, "error": "invalid_arguments"}
        if not channel.startswith("D") and not (args.get("recipient_team_id") and args.get("recipient_user_id")):
            return {"ok": False, "error": "missing_recipient_team_id"}
        ts = self._next_ts()
        text = self._chunk_text(args)
        msg = FakeMessage(channel, ts, text, thread_ts=args["thread_ts"], streaming=True, history=[text])
        self.messages[(channel, ts)] = msg
        return {"ok": True, "channel": channel, "ts": ts}

    def _m_chat_appendStream(self, args: dict[str, Any]) -> dict[str, Any]:
        msg = self._message(args)
        if msg is None:
            return {"ok": False, "error": "message_not_found"}
        if not msg.streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        msg.text += self._chunk_text(args)
        msg.history.append(msg.text)
        msg.edit_times.append(time.monotonic())
        return {"ok": True, "channel": msg.channel, "ts": msg.ts}

    def _m_chat_stopStream(self, args: dict[str, Any]) -> dict[str, Any]:
        msg = self._message(args)
        if msg is None:
            return {"ok": False, "error": "message_not_found"}
        if not msg.streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        added = self._chunk_text(args)
        if added:
            msg.text += added
            msg.history.append(msg.text)
            msg.edit_times.append(time.monotonic())
        if args.get("blocks"):
            msg.blocks = list(args["blocks"])
        msg.streaming = False
        return {"ok": True, "channel": msg.channel, "ts": msg.ts, "message": msg.as_dict()}

    def _m_assistant_threads_setStatus(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("channel_id") or not args.get("thread_ts") or "status" not in args:
            return {"ok": False, "error": "invalid_arguments"}
        return {"ok": True}

    def _m_assistant_threads_setSuggestedPrompts(self, args: dict[str, Any]) -> dict[str, Any]:
        prompts = args.get("prompts") or []
        if not prompts or len(prompts) > 4:
            return {"ok": False, "error": "invalid_arguments"}
        return {"ok": True}

    def _m_assistant_threads_setTitle(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def _m_users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        uid = str(args.get("user"))
        user = self.users.get(uid) or {
            "id": uid,
            "team_id": self.team_id,
            "name": uid.lower(),
            "is_bot": uid == self.bot_user_id,
            "tz": "UTC",
            "locale": "en-US",
            "profile": {"display_name": uid.lower(), "real_name": uid},
        }
        return {"ok": True, "user": user}

    def _m_conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(args.get("channel")), str(args.get("ts"))
        root = self.messages.get((channel, ts))
        msgs = ([root] if root else []) + self.thread(channel, ts)
        return {"ok": True, "messages": [m.as_dict() for m in msgs], "has_more": False}

    def _m_files_info(self, args: dict[str, Any]) -> dict[str, Any]:
        f = self.files.get(str(args.get("file")))
        if f is None:
            return {"ok": False, "error": "file_not_found"}
        return {"ok": True, "file": f.metadata(self.origin)}

    def _m_files_getUploadURLExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("filename") or not str(args.get("length", "")).isdigit():
            return {"ok": False, "error": "invalid_arguments"}
        f = FakeFile(f"F{next(self._ids):06d}", str(args["filename"]), b"", "", "")
        self.files[f.id] = f
        return {"ok": True, "upload_url": f"{self.origin}/upload/{f.id}", "file_id": f.id}

    def _m_files_completeUploadExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        out = []
        for item in args.get("files") or []:
            f = self.files.get(item.get("id"))
            if f is None or not f.content:
                return {"ok": False, "error": "file_not_found"}
            f.title = item.get("title") or f.name
            f.channel = args.get("channel_id")
            f.thread_ts = args.get("thread_ts")
            out.append({"id": f.id, "name": f.name, "title": f.title})
        return {"ok": True, "files": out}

    def _m_apps_connections_open(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": f"ws://127.0.0.1:{self._port}/socket"}

    def uploaded(self) -> list[FakeFile]:
        """Files the bot uploaded and shared (upload v2 completed)."""
        return [f for f in self.files.values() if f.channel is not None]


async def _read_args(request: web.Request) -> dict[str, Any]:
    args: dict[str, Any] = dict(request.query)
    ctype = request.content_type
    if request.can_read_body:
        if ctype == "application/json":
            args.update(await request.json())
        elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
            args.update({k: v for k, v in (await request.post()).items() if isinstance(v, str)})
    for key in _JSON_FIELDS:
        if isinstance(args.get(key), str):
            try:
                args[key] = json.loads(args[key])
            except ValueError:
                pass
    return args


def _bearer(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None


# --- Slack's side: signed deliveries to the app ---------------------------------------------


def sign(body: str, *, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict[str, str]:
    """The X-Slack-Signature / X-Slack-Request-Timestamp headers Slack would send with `body`."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


@dataclass
class Delivered:
    status: int
    text: str
    elapsed: float  # seconds until the app's HTTP response arrived

    def json(self) -> Any:
        return json.loads(self.text) if self.text else None


class SlackDelivery:
    """Delivers slash commands, events and interactions to the app's HTTP endpoint, signed."""

    def __init__(
        self,
        app_url: str,
        api: FakeSlackAPI,
        *,
        secret: str = SIGNING_SECRET,
        session: ClientSession | None = None,
    ) -> None:
        self.app_url = app_url
        self.api = api
        self.secret = secret
        self._session = session
        self._own_session = session is None
        self._event_ids = itertools.count(1)
        self._triggers = f"{time.time_ns():x}"  # trigger ids are unique across runs, as Slack's are

    async def __aenter__(self) -> SlackDelivery:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None and self._own_session:
            await self._session.close()
            self._session = None

    def _client(self) -> ClientSession:
        if self._session is None:
            self._session = ClientSession(timeout=ClientTimeout(total=30))
        return self._session

    async def post(
        self,
        body: str,
        content_type: str,
        *,
        headers: dict[str, str] | None = None,
        timestamp: int | None = None,
        secret: str | None = None,
    ) -> Delivered:
        all_headers = {"Content-Type": content_type, **sign(body, secret=secret or self.secret, timestamp=timestamp)}
        all_headers.update(headers or {})
        started = time.perf_counter()
        async with self._client().post(self.app_url, data=body.encode(), headers=all_headers) as resp:
            text = await resp.text()
            return Delivered(resp.status, text, time.perf_counter() - started)

    async def command(
        self,
        command: str,
        text: str = "",
        *,
        user: str = "U0ALICE",
        channel: str = "C0GENERAL",
        channel_name: str = "general",
        **kwargs: Any,
    ) -> Delivered:
        form = {
            "token": "verification-token-unused",
            "team_id": self.api.team_id,
            "team_domain": "fake",
            "channel_id": channel,
            "channel_name": channel_name,
            "user_id": user,
            "user_name": user.lower(),
            "command": command,
            "text": text,
            "api_app_id": APP_ID,
            "is_enterprise_install": "false",
            "response_url": self.api.response_url(),
            "trigger_id": f"trigger-{next(self._event_ids)}.{self._triggers}",
        }
        return await self.post(urlencode(form), "application/x-www-form-urlencoded", **kwargs)

    def event_body(self, event: dict[str, Any], *, event_id: str | None = None) -> dict[str, Any]:
        return {
            "token": "verification-token-unused",
            "team_id": self.api.team_id,
            "api_app_id": APP_ID,
            "event": event,
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(self._event_ids):08d}",
            "event_time": int(time.time()),
            "authorizations": [
                {
                    "team_id": self.api.team_id,
                    "user_id": self.api.bot_user_id,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
        }

    async def event(
        self,
        event: dict[str, Any],
        *,
        event_id: str | None = None,
        retry_num: int | None = None,
        **kwargs: Any,
    ) -> Delivered:
        headers = {}
        if retry_num:
            headers = {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
        body = json.dumps(self.event_body(event, event_id=event_id))
        return await self.post(body, "application/json", headers=headers, **kwargs)

    def message_event(
        self,
        text: str,
        *,
        user: str = "U0ALICE",
        channel: str = "C0GENERAL",
        channel_type: str = "channel",
        thread_ts: str | None = None,
        files: list[dict[str, Any]] | None = None,
        type_: str = "message",
        **extra: Any,
    ) -> dict[str, Any]:
        """A user message event; the message is also stored in the fake so threads look real."""
        ts = self.api.add_user_message(channel, text, user=user, thread_ts=thread_ts)
        event: dict[str, Any] = {
            "type": type_,
            "user": user,
            "text": text,
            "ts": ts,
            "channel": channel,
            "channel_type": channel_type,
            "team": self.api.team_id,
            "event_ts": ts,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
            parent = self.api.messages.get((channel, thread_ts))
            if parent is not None:  # Slack names the thread's starter in every reply
                event["parent_user_id"] = parent.user
        if files:
            event["files"] = files
            if type_ == "message":
                event["subtype"] = "file_share"
        event.update(extra)
        return event

    async def block_action(
        self,
        message: FakeMessage,
        *,
        action_id: str,
        value: str,
        user: str = "U0ALICE",
        **kwargs: Any,
    ) -> Delivered:
        label = next(
            (
                e["text"]
                for b in message.blocks
                for e in b.get("elements", [])
                if b.get("type") == "actions" and e.get("action_id") == action_id
            ),
            {"type": "plain_text", "text": value},
        )
        payload = {
            "type": "block_actions",
            "team": {"id": self.api.team_id, "domain": "fake"},
            "user": {"id": user, "username": user.lower(), "team_id": self.api.team_id},
            "api_app_id": APP_ID,
            "token": "verification-token-unused",
            "container": {
                "type": "message",
                "message_ts": message.ts,
                "channel_id": message.channel,
                "is_ephemeral": False,
                "thread_ts": message.thread_ts,
            },
            "trigger_id": f"trigger-{next(self._event_ids)}.{self._triggers}",
            "channel": {"id": message.channel, "name": "general"},
            "message": message.as_dict(),
            "response_url": self.api.response_url(),
            "actions": [
                {
                    "type": "button",
                    "action_id": action_id,
                    "block_id": "actions",
                    "text": label,
                    "value": value,
                    "action_ts": f"{time.time():.6f}",
                }
            ],
        }
        body = urlencode({"payload": json.dumps(payload)})
        return await self.post(body, "application/x-www-form-urlencoded", **kwargs)


def find_button(message: FakeMessage, label: str) -> dict[str, Any]:
    """The button element labelled `label` in a message's blocks."""
    for block in message.blocks:
        for element in block.get("elements", []) if block.get("type") == "actions" else []:
            if element.get("type") == "button" and element["text"]["text"] == label:
                return element
    raise AssertionError(f"no button {label!r} in {message.blocks}")


async def _serve_forever(port: int, latency: float) -> None:
    api = FakeSlackAPI(latency=latency)
    await api.start(port=port)
    print(f"fake Slack Web API on {api.base_url}", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await api.close()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Run the fake Slack Web API on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every Web API answer")
    cli = parser.parse_args()
    try:
        asyncio.run(_serve_forever(cli.port, cli.latency))
    except KeyboardInterrupt:
        pass
