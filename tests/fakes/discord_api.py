"""A fake Discord on 127.0.0.1: the REST API and the gateway websocket the real discord.py client talks to.

`FakeDiscordAPI` is an aiohttp server. Its REST half (under /api/v10) keeps the channels, threads,
messages, interactions and application commands the bot touches, validates messages the way Discord
does (and answers with Discord's error JSON), sends Discord's rate-limit headers and can be told to
answer 429. Its gateway half speaks the v10 protocol (HELLO, IDENTIFY → READY + GUILD_CREATE,
heartbeats, RESUME with replay, zlib-stream / zstd-stream transport compression) and lets a test
dispatch any event. Builders make realistic INTERACTION_CREATE and MESSAGE_CREATE payloads.

Point discord.py at it:

    discord.http.Route.BASE = api.base_url                                   # REST
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(api.gateway_url)  # gateway

(`GET /gateway/bot` on the base answers `api.gateway_url`, which is what an adapter discovers.)
"""

from __future__ import annotations

import asyncio
import datetime
import hashlib
import json
import re
import secrets
import time
import uuid
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

BOT_TOKEN = "fake-discord-bot-token"
APPLICATION_ID = "1300000000000000001"
BOT_USER_ID = APPLICATION_ID  # a modern bot's user id is its application id
GUILD_ID = "1300000000000000100"
CHANNEL_ID = "1300000000000000200"
USER_ID = "1300000000000000300"  # "alice", a member of the default guild
OTHER_USER_ID = "1300000000000000301"  # "bob", another member

DISCORD_EPOCH_MS = 1420070400000
API_VERSION = 10

# Gateway intents (https://discord.com/developers/docs/events/gateway#gateway-intents)
GUILDS = 1 << 0
GUILD_MEMBERS = 1 << 1
GUILD_PRESENCES = 1 << 8
GUILD_MESSAGES = 1 << 9
GUILD_MESSAGE_REACTIONS = 1 << 10
GUILD_MESSAGE_TYPING = 1 << 11
DIRECT_MESSAGES = 1 << 12
DIRECT_MESSAGE_REACTIONS = 1 << 13
DIRECT_MESSAGE_TYPING = 1 << 14
MESSAGE_CONTENT = 1 << 15
PRIVILEGED_INTENTS = GUILD_MEMBERS | GUILD_PRESENCES | MESSAGE_CONTENT

# Message flags
EPHEMERAL = 1 << 6
LOADING = 1 << 7
IS_COMPONENTS_V2 = 1 << 15

# Channel types
GUILD_TEXT, DM, PUBLIC_THREAD, PRIVATE_THREAD, ANNOUNCEMENT_THREAD = 0, 1, 11, 12, 10
THREAD_TYPES = (ANNOUNCEMENT_THREAD, PUBLIC_THREAD, PRIVATE_THREAD)

MEMBER_PERMISSIONS = "2248473465835073"  # what an ordinary member has in a channel
BOT_PERMISSIONS = "2251799813685247"  # what the bot was granted (everything but administrator)
ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024

_EVENT_INTENTS_GUILD = {
    "MESSAGE_CREATE": GUILD_MESSAGES,
    "MESSAGE_UPDATE": GUILD_MESSAGES,
    "MESSAGE_DELETE": GUILD_MESSAGES,
    "MESSAGE_DELETE_BULK": GUILD_MESSAGES,
    "MESSAGE_REACTION_ADD": GUILD_MESSAGE_REACTIONS,
    "MESSAGE_REACTION_REMOVE": GUILD_MESSAGE_REACTIONS,
    "TYPING_START": GUILD_MESSAGE_TYPING,
    "GUILD_MEMBER_ADD": GUILD_MEMBERS,
    "GUILD_MEMBER_UPDATE": GUILD_MEMBERS,
    "GUILD_MEMBER_REMOVE": GUILD_MEMBERS,
    "PRESENCE_UPDATE": GUILD_PRESENCES,
    "GUILD_UPDATE": GUILDS,
    "GUILD_DELETE": GUILDS,
    "CHANNEL_CREATE": GUILDS,
    "CHANNEL_UPDATE": GUILDS,
    "CHANNEL_DELETE": GUILDS,
    "THREAD_CREATE": GUILDS,
    "THREAD_UPDATE": GUILDS,
    "THREAD_DELETE": GUILDS,
    "THREAD_LIST_SYNC": GUILDS,
    "THREAD_MEMBER_UPDATE": GUILDS,
}
_EVENT_INTENTS_DM = {
    "MESSAGE_CREATE": DIRECT_MESSAGES,
    "MESSAGE_UPDATE": DIRECT_MESSAGES,
    "MESSAGE_DELETE": DIRECT_MESSAGES,
    "MESSAGE_REACTION_ADD": DIRECT_MESSAGE_REACTIONS,
    "MESSAGE_REACTION_REMOVE": DIRECT_MESSAGE_REACTIONS,
    "TYPING_START": DIRECT_MESSAGE_TYPING,
}
_CONTENT_FIELDS = ("content", "embeds", "attachments", "components", "poll")


def _iso(at: float | None = None) -> str:
    return datetime.datetime.fromtimestamp(time.time() if at is None else at, datetime.UTC).isoformat()


def snowflake_time(snowflake: str | int) -> float:
    """The Unix time a snowflake was minted."""
    return ((int(snowflake) >> 22) + DISCORD_EPOCH_MS) / 1000


def shard_for(guild_id: str | int | None, shard_count: int) -> int:
    """Which shard Discord routes a guild's events to (DMs go to shard 0)."""
    return 0 if guild_id is None else (int(guild_id) >> 22) % shard_count


class DiscordError(Exception):
    """An error answer: Discord's JSON body `{"message", "code"[, "errors"]}` with an HTTP status."""

    def __init__(
        self, status: int, code: int, message: str, errors: dict[str, Any] | None = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(f"{status} {code} {message}")
        self.status = status
        self.body: dict[str, Any] = {"message": message, "code": code}
        if errors is not None:
            self.body["errors"] = errors
        self.headers = headers or {}


def form_error(problems: dict[tuple[str, ...], tuple[str, str]]) -> DiscordError:
    """400 Invalid Form Body (50035), `errors` nested the way Discord nests them:
    {("embeds", "0", "description"): ("BASE_TYPE_MAX_LENGTH", "Must be 4096 or fewer in length.")}."""
    errors: dict[str, Any] = {}
    for path, (code, message) in problems.items():
        node = errors
        for key in path:
            node = node.setdefault(key, {})
        node.setdefault("_errors", []).append({"code": code, "message": message})
    return DiscordError(400, 50035, "Invalid Form Body", errors)


def unknown(what: str, code: int) -> DiscordError:
    return DiscordError(404, code, f"Unknown {what}")


@dataclass
class ApiCall:
    """One REST request, as the fake received it."""

    method: str
    path: str  # relative to the API base: "/channels/1/messages"
    route: str  # the route template: "/channels/{channel_id}/messages"
    query: dict[str, str]
    json: Any  # the JSON body (or multipart payload_json), None without one
    headers: dict[str, str]  # without Authorization
    at: float  # time.monotonic() when it arrived
    files: list[FakeAttachment] = field(default_factory=list)
    authorized: bool = False  # carried the right "Bot <token>"
    status: int = 0
    response: Any = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass
class FakeAttachment:
    id: str
    filename: str
    content: bytes
    content_type: str | None
    channel_id: str
    description: str | None = None

    def payload(self, origin: str) -> dict[str, Any]:
        now = int(time.time())
        sig = f"?ex={now + 86400:x}&is={now:x}&hm={hashlib.sha256(self.content).hexdigest()[:64]}&"
        path = f"/attachments/{self.channel_id}/{self.id}/{self.filename}"
        out: dict[str, Any] = {
            "id": self.id,
            "filename": self.filename,
            "size": len(self.content),
            "url": f"{origin}{path}{sig}",
            "proxy_url": f"{origin}/media{path}{sig}",
        }
        if self.content_type:
            out["content_type"] = self.content_type
        if self.description:
            out["description"] = self.description
        return out


@dataclass
class FakeMessage:
    """A message as Discord holds it; `history` is every content it has shown, oldest first."""

    id: str
    channel_id: str
    guild_id: str | None
    author: dict[str, Any]
    content: str = ""
    embeds: list[dict[str, Any]] = field(default_factory=list)
    components: list[dict[str, Any]] = field(default_factory=list)
    attachments: list[FakeAttachment] = field(default_factory=list)
    flags: int = 0
    type: int = 0
    mentions: list[dict[str, Any]] = field(default_factory=list)
    webhook_id: str | None = None
    application_id: str | None = None
    interaction_id: str | None = None
    interaction_metadata: dict[str, Any] | None = None
    interaction: dict[str, Any] | None = None
    message_reference: dict[str, Any] | None = None
    thread_id: str | None = None  # the thread started from this message
    timestamp: str = field(default_factory=_iso)
    edited_timestamp: str | None = None
    history: list[str] = field(default_factory=list)
    revisions: list[dict[str, Any]] = field(default_factory=list)  # content/embeds/components/flags per version
    edit_times: list[float] = field(default_factory=list)  # time.monotonic() of each edit
    deleted: bool = False

    @property
    def edits(self) -> int:
        return len(self.edit_times)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def loading(self) -> bool:
        """A deferred interaction response still showing "<bot> is thinking…"."""
        return bool(self.flags & LOADING)

    @property
    def from_bot(self) -> bool:
        return bool(self.author.get("bot"))

    def buttons(self) -> list[dict[str, Any]]:
        """Every button (type 2) in the message's components, at any depth."""
        return [c for c in _walk_components(self.components) if c.get("type") == 2]

    def snapshot(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "embeds": json.loads(json.dumps(self.embeds)),
            "components": json.loads(json.dumps(self.components)),
            "flags": self.flags,
            "attachments": [a.filename for a in self.attachments],
        }

    def payload(self, origin: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "channel_id": self.channel_id,
            "type": self.type,
            "content": self.content,
            "author": self.author,
            "attachments": [a.payload(origin) for a in self.attachments],
            "embeds": self.embeds,
            "components": self.components,
            "mentions": self.mentions,
            "mention_roles": [],
            "mention_everyone": False,
            "pinned": False,
            "tts": False,
            "timestamp": self.timestamp,
            "edited_timestamp": self.edited_timestamp,
            "flags": self.flags,
        }
        for key in ("webhook_id", "application_id", "interaction_metadata", "interaction", "message_reference"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass
class FakeInteraction:
    """An interaction the fake built; `callbacks` are the types the app answered with, in order."""

    id: str
    token: str
    type: int  # 2 command, 3 component, 4 autocomplete, 5 modal submit
    payload: dict[str, Any]
    channel_id: str
    guild_id: str | None
    dispatched_at: float | None = None  # time.monotonic()
    deadline: float | None = None  # the callback must arrive before this
    acked_at: float | None = None
    response_type: int | None = None  # the accepted callback's type
    callbacks: list[tuple[int, int]] = field(default_factory=list)  # (callback type, HTTP status)
    original_id: str | None = None  # the message @original refers to
    followup_ids: list[str] = field(default_factory=list)
    modal: dict[str, Any] | None = None
    choices: list[dict[str, Any]] | None = None

    @property
    def acknowledged(self) -> bool:
        return self.response_type is not None

    @property
    def expired(self) -> bool:
        """Past the acknowledgement deadline (3 s on Discord)."""
        return self.deadline is not None and time.monotonic() > self.deadline

    @property
    def ack_delay(self) -> float | None:
        if self.acked_at is None or self.dispatched_at is None:
            return None
        return self.acked_at - self.dispatched_at


@dataclass
class GatewaySession:
    session_id: str
    shard: tuple[int, int]
    intents: int
    identify: dict[str, Any]
    seq: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)  # every dispatch frame, for RESUME
    conn: GatewayConnection | None = None
    resumes: int = 0
    invalid: bool = False


@dataclass
class GatewayConnection:
    """One websocket to the gateway; `sent`/`received` are decoded frames."""

    number: int
    path: str
    compress: str | None
    ws: web.WebSocketResponse
    opened_at: float
    pack: Callable[[str], bytes | str]
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    session: GatewaySession | None = None
    sent: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    closed_at: float | None = None
    close_code: int | None = None

    @property
    def open(self) -> bool:
        return self.closed_at is None


@dataclass
class _Fault:
    path: str
    method: str | None
    remaining: int
    status: int
    body: dict[str, Any]
    headers: dict[str, str]


@dataclass
class _Bucket:
    hash: str
    started: float = 0.0
    count: int = 0


@dataclass
class _Request:
    method: str
    path: str
    params: dict[str, str]
    query: dict[str, str]
    json: Any
    files: list[tuple[str, str, bytes, str | None]]  # (field, filename, content, content type)
    call: ApiCall


def _walk_components(components: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    for component in components or []:
        yield component
        yield from _walk_components(component.get("components") or [])
        if isinstance(component.get("accessory"), dict):
            yield from _walk_components([component["accessory"]])


# --- transport compression -------------------------------------------------------------------------


def zlib_stream_packer() -> Callable[[str], bytes]:
    """One zlib stream per connection; every message ends with Z_SYNC_FLUSH (00 00 ff ff)."""
    compressor = zlib.compressobj()

    def pack(text: str) -> bytes:
        return compressor.compress(text.encode()) + compressor.flush(zlib.Z_SYNC_FLUSH)

    return pack


def zstd_stream_packer() -> Callable[[str], bytes]:
    """One zstd frame per connection, never finished; every message is a flushed block."""
    try:
        import zstandard
    except ImportError:  # Python 3.14's stdlib zstd
        from compression import zstd  # type: ignore[import-not-found]

        stdlib = zstd.ZstdCompressor()

        def pack_stdlib(text: str) -> bytes:
            return stdlib.compress(text.encode(), mode=zstd.ZstdCompressor.FLUSH_BLOCK)

        return pack_stdlib
    compressor = zstandard.ZstdCompressor().compressobj()

    def pack(text: str) -> bytes:
        return compressor.compress(text.encode()) + compressor.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)

    return pack


_PACKERS: dict[str, Callable[[], Callable[[str], bytes]]] = {
    "zlib-stream": zlib_stream_packer,
    "zstd-stream": zstd_stream_packer,
}


class FakeDiscordAPI:
    """Discord's REST API and gateway on 127.0.0.1, for tests."""

    def __init__(
        self,
        *,
        token: str = BOT_TOKEN,
        application_id: str = APPLICATION_ID,
        bot_name: str = "Concierge",
        shards: int = 1,
        heartbeat_interval: float = 41.25,
        ack_deadline: float = 3.0,
        token_lifetime: float = 15 * 60.0,
        privileged_intents: int = PRIVILEGED_INTENTS,
        enforce_intents: bool = True,
        echo_events: bool = True,
        bucket_limit: int = 50,
        bucket_window: float = 1.0,
        upload_limit: int = ATTACHMENT_SIZE_LIMIT,
        latency: float = 0.0,
        default_guild: bool = True,
    ) -> None:
        self.token = token
        self.application_id = application_id
        self.shards = shards
        self.heartbeat_interval = heartbeat_interval  # seconds, sent in HELLO as milliseconds
        self.ack_deadline = ack_deadline  # seconds an interaction may wait for its callback
        self.token_lifetime = token_lifetime  # seconds an interaction token works for webhooks
        self.privileged_intents = privileged_intents  # those enabled in the "developer portal"
        self.enforce_intents = enforce_intents  # drop events and message content the intents don't cover
        self.echo_events = echo_events  # REST writes dispatch MESSAGE_CREATE/UPDATE/DELETE, THREAD_CREATE
        self.bucket_limit = bucket_limit  # requests per route bucket per window (Discord: 5 per 5 s for messages)
        self.bucket_window = bucket_window
        self.upload_limit = upload_limit
        self.latency = latency  # seconds added to every REST answer
        self.answer_heartbeats = True  # False: a zombie gateway that never ACKs

        self.calls: list[ApiCall] = []
        self.users: dict[str, dict[str, Any]] = {}
        self.guilds: dict[str, dict[str, Any]] = {}  # id → {"id", "name", "channels": [ids], "members": [ids]}
        self.channels: dict[str, dict[str, Any]] = {}  # id → channel payload (text, DM, thread)
        self.all_messages: dict[str, FakeMessage] = {}  # every message, deleted ones too
        self.attachments: dict[str, FakeAttachment] = {}
        self.downloads: list[str] = []  # attachment paths fetched
        self.interactions: dict[str, FakeInteraction] = {}
        self.commands: list[dict[str, Any]] = []  # global application commands
        self.guild_commands: dict[str, list[dict[str, Any]]] = {}
        self.identifies: list[dict[str, Any]] = []  # IDENTIFY payloads ("d"), token included
        self.resumes: list[dict[str, Any]] = []  # RESUME payloads
        self.presence_updates: list[dict[str, Any]] = []
        self.heartbeats = 0
        self.replayed = 0  # dispatches re-sent on RESUME
        self.connections: list[GatewayConnection] = []
        self.sessions: dict[str, GatewaySession] = {}
        self._shard_sessions: dict[int, GatewaySession] = {}
        self._faults: list[_Fault] = []
        self._buckets: dict[str, _Bucket] = {}
        self._dm_channels: dict[str, str] = {}  # user id → DM channel id
        self._command_ids: dict[tuple[str, int], str] = {}
        self._last_id = 0
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._changed = asyncio.Event()
        self._closing = False

        self.bot_user = self.add_user(bot_name, user_id=application_id, bot=True)
        if default_guild:
            self.alice = self.add_user("alice", user_id=USER_ID)
            self.bob = self.add_user("bob", user_id=OTHER_USER_ID)
            self.add_guild("Fake Guild", guild_id=GUILD_ID, channels={CHANNEL_ID: "general"}, members=[USER_ID, OTHER_USER_ID])

    # --- lifecycle ---------------------------------------------------------------------------------
    async def start(self, *, port: int = 0) -> FakeDiscordAPI:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        api = r"/api/v{version:\d+}"
        routes: list[tuple[str, str, Callable[[_Request], Any], bool]] = [
            ("GET", "/gateway", self._r_gateway, False),
            ("GET", "/gateway/bot", self._r_gateway_bot, True),
            ("GET", "/users/{user_id}", self._r_get_user, True),
            ("POST", "/users/@me/channels", self._r_create_dm, True),
            ("GET", "/applications/{app}", self._r_application, True),
            ("GET", "/oauth2/applications/@me", self._r_application, True),
            ("GET", "/applications/{application_id}/commands", self._r_get_commands, True),
            ("PUT", "/applications/{application_id}/commands", self._r_put_commands, True),
            ("POST", "/applications/{application_id}/commands", self._r_post_command, True),
            ("GET", "/applications/{application_id}/guilds/{guild_id}/commands", self._r_get_commands, True),
            ("PUT", "/applications/{application_id}/guilds/{guild_id}/commands", self._r_put_commands, True),
            ("POST", "/applications/{application_id}/guilds/{guild_id}/commands", self._r_post_command, True),
            ("GET", "/channels/{channel_id}", self._r_get_channel, True),
            ("GET", "/channels/{channel_id}/messages", self._r_history, True),
            ("POST", "/channels/{channel_id}/messages", self._r_send, True),
            ("GET", "/channels/{channel_id}/messages/{message_id}", self._r_get_message, True),
            ("PATCH", "/channels/{channel_id}/messages/{message_id}", self._r_edit, True),
            ("DELETE", "/channels/{channel_id}/messages/{message_id}", self._r_delete, True),
            ("POST", "/channels/{channel_id}/messages/{message_id}/threads", self._r_thread_from_message, True),
            ("POST", "/channels/{channel_id}/threads", self._r_thread, True),
            ("POST", "/channels/{channel_id}/typing", self._r_typing, True),
            ("POST", "/interactions/{interaction_id}/{token}/callback", self._r_callback, False),
            ("POST", "/webhooks/{application_id}/{token}", self._r_followup, False),
            ("GET", "/webhooks/{application_id}/{token}/messages/{message_id}", self._r_webhook_get, False),
            ("PATCH", "/webhooks/{application_id}/{token}/messages/{message_id}", self._r_webhook_edit, False),
            ("DELETE", "/webhooks/{application_id}/{token}/messages/{message_id}", self._r_webhook_delete, False),
        ]
        for method, template, handler, auth in routes:
            app.router.add_route(method, api + template, self._endpoint(template, handler, auth))
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/resume", self._gateway)
        app.router.add_get("/attachments/{channel_id}/{attachment_id}/{filename}", self._download)
        app.router.add_get("/media/attachments/{channel_id}/{attachment_id}/{filename}", self._download)
        app.router.add_route("*", "/{tail:.*}", self._endpoint("/{unknown}", self._r_unknown, False))
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=2.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        self._port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        """Stop serving; a client still connected sees the gateway go away (close 1001)."""
        self._closing = True
        for conn in list(self.connections):
            if conn.open:
                await conn.ws.close(code=1001, message=b"fake Discord shutting down")
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeDiscordAPI:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    @property
    def base_url(self) -> str:
        """What discord.http.Route.BASE should be set to."""
        return f"{self.origin}/api/v{API_VERSION}"

    @property
    def gateway_url(self) -> str:
        """What GET /gateway/bot answers (and DiscordWebSocket.DEFAULT_GATEWAY should be)."""
        return f"ws://127.0.0.1:{self._port}/gateway"

    @property
    def resume_gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self._port}/resume"

    # --- world building ----------------------------------------------------------------------------
    def snowflake(self) -> str:
        """A fresh snowflake: minted now, greater than every one before it."""
        candidate = (int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22
        self._last_id = max(candidate, self._last_id + 1)
        return str(self._last_id)

    def add_user(self, username: str, *, user_id: str | None = None, bot: bool = False) -> dict[str, Any]:
        user: dict[str, Any] = {
            "id": user_id or self.snowflake(),
            "username": username,
            "global_name": None if bot else username.title(),
            "discriminator": "0",
            "avatar": None,
            "public_flags": 0,
            "flags": 0,
            "banner": None,
            "accent_color": None,
            "avatar_decoration_data": None,
            "collectibles": None,
            "primary_guild": None,
        }
        if bot:
            user["bot"] = True
        self.users[user["id"]] = user
        return user

    def add_guild(
        self,
        name: str,
        *,
        guild_id: str | None = None,
        channels: dict[str, str] | Sequence[str] = ("general",),
        members: Sequence[str] = (),
    ) -> dict[str, Any]:
        """A guild the bot is in, with text channels ({id: name} or names) and member user ids.
        Added while a session is connected, it arrives as GUILD_CREATE (the bot joined it)."""
        gid = guild_id or self.snowflake()
        guild: dict[str, Any] = {"id": gid, "name": name, "channels": [], "members": [self.bot_user["id"], *members]}
        self.guilds[gid] = guild
        named = channels.items() if isinstance(channels, dict) else [(None, n) for n in channels]
        for cid, cname in named:
            self.add_channel(gid, cname, channel_id=cid)
        return guild

    def add_channel(self, guild_id: str, name: str, *, channel_id: str | None = None, type: int = GUILD_TEXT) -> dict[str, Any]:
        cid = channel_id or self.snowflake()
        guild = self.guilds[guild_id]
        channel = {
            "id": cid,
            "type": type,
            "guild_id": guild_id,
            "name": name,
            "position": len(guild["channels"]),
            "parent_id": None,
            "topic": None,
            "nsfw": False,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "permission_overwrites": [],
            "flags": 0,
        }
        self.channels[cid] = channel
        guild["channels"].append(cid)
        return channel

    def dm_channel(self, user: dict[str, Any] | str) -> dict[str, Any]:
        """The DM channel between the bot and a user (created on first use)."""
        uid = user if isinstance(user, str) else user["id"]
        cid = self._dm_channels.get(uid)
        if cid is None:
            cid = self._dm_channels[uid] = self.snowflake()
            self.channels[cid] = {
                "id": cid,
                "type": DM,
                "last_message_id": None,
                "flags": 0,
                "recipients": [self.users[uid]],
            }
        return self.channels[cid]

    def add_attachment(
        self,
        filename: str,
        content: bytes,
        *,
        content_type: str | None = None,
        channel_id: str = CHANNEL_ID,
        description: str | None = None,
    ) -> dict[str, Any]:
        """A file a user uploaded, served at its `url`; returns Discord's attachment payload."""
        if content_type is None:
            content_type = _guess_type(filename)
        att = FakeAttachment(self.snowflake(), filename, content, content_type, channel_id, description)
        self.attachments[att.id] = att
        return att.payload(self.origin)

    # --- inspection --------------------------------------------------------------------------------
    @property
    def threads(self) -> dict[str, dict[str, Any]]:
        return {cid: ch for cid, ch in self.channels.items() if ch["type"] in THREAD_TYPES}

    def messages(self, channel_id: str = CHANNEL_ID, *, ephemeral: bool = True) -> list[FakeMessage]:
        """Messages in a channel or thread that were not deleted, oldest first."""
        found = [
            m
            for m in self.all_messages.values()
            if m.channel_id == channel_id and not m.deleted and (ephemeral or not m.ephemeral)
        ]
        return sorted(found, key=lambda m: int(m.id))

    def message(self, message_id: str | int) -> FakeMessage:
        return self.all_messages[str(message_id)]

    def bot_messages(self, channel_id: str | None = None) -> list[FakeMessage]:
        found = [
            m
            for m in self.all_messages.values()
            if m.author["id"] == self.bot_user["id"] and not m.deleted and channel_id in (None, m.channel_id)
        ]
        return sorted(found, key=lambda m: int(m.id))

    def calls_to(self, method: str, path_prefix: str = "") -> list[ApiCall]:
        """REST calls with this method (or "*") whose path (relative to the base) starts with path_prefix."""
        return [c for c in self.calls if method in ("*", c.method) and c.path.startswith(path_prefix)]

    def session(self, shard: int = 0) -> GatewaySession | None:
        """The shard's current gateway session (None before IDENTIFY)."""
        return self._shard_sessions.get(shard)

    def connected(self, shard: int = 0) -> bool:
        session = self._shard_sessions.get(shard)
        return session is not None and session.conn is not None and session.conn.open

    def sent_events(self, shard: int | None = None) -> list[str]:
        """Names of the dispatches sent so far (over every connection), in order."""
        return [
            f["t"]
            for c in self.connections
            if shard is None or (c.session is not None and c.session.shard[0] == shard)
            for f in c.sent
            if f.get("op") == 0
        ]

    async def wait_for(self, predicate: Callable[[], Any], *, timeout: float = 10.0) -> Any:  # noqa: ASYNC109
        """Wait until predicate() is truthy, re-checked after every request and gateway frame (and
        at least every 50 ms); AssertionError at the deadline."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = predicate()
            if value:
                return value
            remaining = deadline - loop.time()
            if remaining <= 0:
                recent = [f"{c.method} {c.path} → {c.status}" for c in self.calls[-8:]]
                raise AssertionError(f"timed out after {timeout}s; last calls: {recent}; events: {self.sent_events()[-8:]}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), min(remaining, 0.05))
            except TimeoutError:
                pass

    async def wait_until_connected(self, shard: int = 0, *, timeout: float = 10.0) -> GatewaySession:  # noqa: ASYNC109
        await self.wait_for(lambda: self.connected(shard), timeout=timeout)
        return self._shard_sessions[shard]

    # --- faults ------------------------------------------------------------------------------------
    def fail(
        self,
        path: str,
        *,
        status: int = 500,
        code: int = 0,
        message: str = "500: Internal Server Error",
        times: int = 1,
        method: str | None = None,
        headers: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ) -> None:
        """Answer the next `times` calls whose path contains `path` (and with `method`) with an error."""
        payload = body if body is not None else {"message": message, "code": code}
        self._faults.append(_Fault(path, method, times, status, payload, dict(headers or {})))

    def rate_limit(
        self,
        path: str,
        *,
        times: int = 1,
        retry_after: float = 0.5,
        method: str | None = None,
        is_global: bool = False,
        scope: str = "user",
    ) -> None:
        """Answer the next `times` matching calls with 429, as Discord does (body and headers)."""
        body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": is_global}
        headers = {
            "Retry-After": str(max(1, int(-(-retry_after // 1)))),
            "X-RateLimit-Limit": str(self.bucket_limit),
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": f"{time.time() + retry_after:.3f}",
            "X-RateLimit-Reset-After": f"{retry_after:.3f}",
            "X-RateLimit-Scope": "global" if is_global else scope,
        }
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        self._faults.append(_Fault(path, method, times, 429, body, headers))

    def _take_fault(self, method: str, path: str) -> _Fault | None:
        for fault in self._faults:
            if fault.path in path and fault.method in (None, method):
                fault.remaining -= 1
                if fault.remaining <= 0:
                    self._faults.remove(fault)
                return fault
        return None

    # --- gateway: events ---------------------------------------------------------------------------
    async def dispatch(self, event: str, data: dict[str, Any], *, shard: int | None = None) -> int | None:
        """Send a dispatch (op 0) to the session of the shard the event belongs to (by guild_id);
        returns its sequence number, or None when the session's intents filter it out. While the
        connection is down the event is kept and replayed on RESUME."""
        if shard is None:
            shard = shard_for(data.get("guild_id"), self.shards)
        session = self._shard_sessions.get(shard)
        if session is None or session.invalid:
            raise AssertionError(f"no gateway session for shard {shard}: has the client identified?")
        if event == "INTERACTION_CREATE":
            self._mark_dispatched(data)
        return await self._dispatch_to(session, event, data)

    def _mark_dispatched(self, data: dict[str, Any]) -> None:
        interaction = self.interactions.get(str(data.get("id")))
        if interaction is not None and interaction.dispatched_at is None:
            interaction.dispatched_at = time.monotonic()
            interaction.deadline = interaction.dispatched_at + self.ack_deadline

    async def _echo(self, event: str, data: dict[str, Any]) -> None:
        """An event Discord sends because of a REST write; dropped when no session is there."""
        if not self.echo_events:
            return
        session = self._shard_sessions.get(shard_for(data.get("guild_id"), self.shards))
        if session is not None and not session.invalid:
            await self._dispatch_to(session, event, data)

    def _filter(self, session: GatewaySession, event: str, data: dict[str, Any]) -> dict[str, Any] | None:
        if not self.enforce_intents:
            return data
        in_guild = data.get("guild_id") is not None
        needed = (_EVENT_INTENTS_GUILD if in_guild else _EVENT_INTENTS_DM).get(event)
        if needed is not None and not session.intents & needed:
            return None
        if event in ("MESSAGE_CREATE", "MESSAGE_UPDATE") and in_guild and not session.intents & MESSAGE_CONTENT:
            author = (data.get("author") or {}).get("id")
            mentioned = any(u.get("id") == self.bot_user["id"] for u in data.get("mentions") or [])
            if author != self.bot_user["id"] and not mentioned:
                data = dict(data)
                for key in _CONTENT_FIELDS:
                    if key in data:
                        data[key] = "" if key == "content" else ([] if key != "poll" else None)
        return data

    async def _dispatch_to(self, session: GatewaySession, event: str, data: dict[str, Any]) -> int | None:
        filtered = self._filter(session, event, data)
        if filtered is None:
            return None
        frame = self._frame(session, event, filtered)
        conn = session.conn
        if conn is not None:
            await self._send(conn, [frame])
        self._changed.set()
        return frame["s"]

    @staticmethod
    def _frame(session: GatewaySession, event: str, data: dict[str, Any]) -> dict[str, Any]:
        session.seq += 1
        frame = {"op": 0, "t": event, "s": session.seq, "d": data}
        session.history.append(frame)
        return frame

    async def drop_connection(
        self, shard: int = 0, *, code: int = 4000, missed: Sequence[tuple[str, dict[str, Any]]] = ()
    ) -> None:
        """Close the shard's websocket (code 4000: the client RESUMEs). `missed` events are dispatched
        after the drop and before the client can resume, so they arrive by replay."""
        session = self._shard_sessions.get(shard)
        if session is None or session.conn is None:
            raise AssertionError(f"shard {shard} is not connected")
        conn, session.conn = session.conn, None
        for event, data in missed:
            if event == "INTERACTION_CREATE":
                self._mark_dispatched(data)
            filtered = self._filter(session, event, data)
            if filtered is not None:
                self._frame(session, event, filtered)
        await conn.ws.close(code=code, message=b"fake Discord dropped the connection")

    async def request_reconnect(self, shard: int = 0) -> None:
        """Op 7 RECONNECT: the client closes and RESUMEs."""
        session = self._shard_sessions.get(shard)
        if session is None or session.conn is None:
            raise AssertionError(f"shard {shard} is not connected")
        await self._send(session.conn, [{"op": 7, "d": None}])

    async def invalidate_session(self, shard: int = 0, *, resumable: bool = False) -> None:
        """Op 9 INVALID_SESSION. Not resumable: the client IDENTIFYs anew (discord.py waits 5 s first)."""
        session = self._shard_sessions.get(shard)
        if session is None or session.conn is None:
            raise AssertionError(f"shard {shard} is not connected")
        if not resumable:
            session.invalid = True
        await self._send(session.conn, [{"op": 9, "d": resumable}])

    # --- gateway: the websocket --------------------------------------------------------------------
    async def _send(
        self,
        conn: GatewayConnection,
        frames: Sequence[dict[str, Any]] = (),
        build: Callable[[], list[dict[str, Any]]] | None = None,
    ) -> None:
        """Send frames in order (one compressor per connection: every send holds the lock); `build`
        runs under the lock, so frames it numbers go out before anything dispatched meanwhile."""
        async with conn.lock:
            if build is not None:
                frames = [*frames, *build()]
            for frame in frames:
                if conn.ws.closed:
                    return
                text = json.dumps(frame, separators=(",", ":"))
                packed = conn.pack(text)
                try:
                    if isinstance(packed, bytes):
                        await conn.ws.send_bytes(packed)
                    else:
                        await conn.ws.send_str(packed)
                except (ConnectionError, RuntimeError):
                    return
                conn.sent.append(frame)
        self._changed.set()

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        if self._closing:
            return web.Response(status=503, text="shutting down")
        compress = request.query.get("compress")
        if compress is not None and compress not in _PACKERS:
            return web.Response(status=400, text=f"unknown compress {compress!r}")
        ws = web.WebSocketResponse(heartbeat=None, max_msg_size=16 * 1024 * 1024)
        await ws.prepare(request)
        pack: Callable[[str], bytes | str] = _PACKERS[compress]() if compress else (lambda text: text)
        conn = GatewayConnection(len(self.connections), request.path, compress, ws, time.monotonic(), pack)
        self.connections.append(conn)
        self._changed.set()
        try:
            if request.query.get("v") not in ("9", "10"):
                await ws.close(code=4012, message=b"Invalid API version")
                return ws
            if request.query.get("encoding", "json") != "json":
                await ws.close(code=4002, message=b"Error while decoding payload.")
                return ws
            await self._send(conn, [{"op": 10, "d": {"heartbeat_interval": int(self.heartbeat_interval * 1000)}, "s": None, "t": None}])
            async for msg in ws:
                if msg.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                    continue
                try:
                    frame = json.loads(msg.data)
                except ValueError:
                    await ws.close(code=4002, message=b"Error while decoding payload.")
                    break
                conn.received.append(frame)
                self._changed.set()
                await self._on_frame(conn, frame)
        finally:
            conn.closed_at = time.monotonic()
            conn.close_code = ws.close_code
            if conn.session is not None and conn.session.conn is conn:
                conn.session.conn = None
            self._changed.set()
        return ws

    async def _on_frame(self, conn: GatewayConnection, frame: dict[str, Any]) -> None:
        op, data = frame.get("op"), frame.get("d")
        if op == 1:
            self.heartbeats += 1
            if self.answer_heartbeats:
                await self._send(conn, [{"op": 11}])
        elif op == 2:
            await self._identify(conn, data or {})
        elif op == 6:
            await self._resume(conn, data or {})
        elif conn.session is None:
            await conn.ws.close(code=4003, message=b"Not authenticated.")
        elif op == 3:
            self.presence_updates.append(data)
        elif op == 8:
            await self._members_chunk(conn, data or {})
        elif op not in (4,):  # voice state updates are accepted and ignored
            await conn.ws.close(code=4001, message=b"Unknown opcode.")

    async def _identify(self, conn: GatewayConnection, data: dict[str, Any]) -> None:
        self.identifies.append(data)
        if data.get("token") != self.token:
            await conn.ws.close(code=4004, message=b"Authentication failed.")
            return
        if conn.session is not None:
            await conn.ws.close(code=4005, message=b"Already authenticated.")
            return
        intents = data.get("intents")
        if not isinstance(intents, int) or intents < 0 or intents >= 1 << 26:
            await conn.ws.close(code=4013, message=b"Invalid intent(s).")
            return
        if intents & PRIVILEGED_INTENTS & ~self.privileged_intents:
            await conn.ws.close(code=4014, message=b"Disallowed intent(s).")
            return
        if "shard" not in data and self.shards > 1:
            await conn.ws.close(code=4011, message=b"Sharding required.")
            return
        shard = data.get("shard") or [0, 1]
        if len(shard) != 2 or not 0 <= shard[0] < shard[1] or shard[1] != self.shards:
            await conn.ws.close(code=4010, message=b"Invalid shard.")
            return
        session = GatewaySession(uuid.uuid4().hex, (shard[0], shard[1]), intents, data)
        self.sessions[session.session_id] = session
        old = self._shard_sessions.get(shard[0])
        if old is not None:
            old.invalid = True
        self._shard_sessions[shard[0]] = session
        guilds = [g for g in self.guilds.values() if shard_for(g["id"], shard[1]) == shard[0]]
        ready = {
            "v": API_VERSION,
            "user": {**self.bot_user, "verified": True, "mfa_enabled": False, "email": None, "bot": True},
            "guilds": [{"id": g["id"], "unavailable": True} for g in guilds],
            "session_id": session.session_id,
            "session_type": "normal",
            "resume_gateway_url": self.resume_gateway_url,
            "shard": [shard[0], shard[1]],
            "application": {"id": self.application_id, "flags": 0},
            "private_channels": [],
            "presences": [],
            "relationships": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": ["fake"],
            "auth": {},
            "user_settings": {},
            "_trace": ['["fake-gateway",{"micros":1}]'],
        }
        def build() -> list[dict[str, Any]]:
            conn.session = session
            session.conn = conn
            frames = [self._frame(session, "READY", ready)]
            return frames + [self._frame(session, "GUILD_CREATE", self._guild_create(g, intents)) for g in guilds]

        await self._send(conn, build=build)

    async def _resume(self, conn: GatewayConnection, data: dict[str, Any]) -> None:
        self.resumes.append(data)
        session = self.sessions.get(str(data.get("session_id")))
        if data.get("token") != self.token:
            await conn.ws.close(code=4004, message=b"Authentication failed.")
            return
        if session is None or session.invalid or not isinstance(data.get("seq"), int):
            await self._send(conn, [{"op": 9, "d": False}])
            return
        old = session.conn

        def build() -> list[dict[str, Any]]:
            conn.session = session
            session.conn = conn
            session.resumes += 1
            missed = [f for f in session.history if f["s"] > data["seq"]]
            self.replayed += len(missed)
            return [*missed, self._frame(session, "RESUMED", {"_trace": ['["fake-gateway",{"micros":1}]']})]

        await self._send(conn, build=build)
        if old is not None and old is not conn and old.open:
            await old.ws.close(code=4000)

    async def _members_chunk(self, conn: GatewayConnection, data: dict[str, Any]) -> None:
        guild = self.guilds.get(str(data.get("guild_id")))
        if guild is None or conn.session is None:
            return
        wanted = {str(u) for u in data.get("user_ids") or []}
        query = (data.get("query") or "").lower()
        members = [
            self._member(uid, guild["id"], with_user=True)
            for uid in guild["members"]
            if (not wanted or uid in wanted) and self.users[uid]["username"].lower().startswith(query)
        ]
        limit = data.get("limit") or 0
        chunk = {
            "guild_id": guild["id"],
            "members": members[:limit] if limit else members,
            "chunk_index": 0,
            "chunk_count": 1,
            "not_found": [],
        }
        if data.get("nonce") is not None:
            chunk["nonce"] = data["nonce"]
        session = conn.session
        await self._send(conn, build=lambda: [self._frame(session, "GUILD_MEMBERS_CHUNK", chunk)])

    # --- payload builders --------------------------------------------------------------------------
    def _member(self, user_id: str, guild_id: str, *, with_user: bool = False, permissions: str | None = None) -> dict[str, Any]:
        joined = _iso(snowflake_time(guild_id) if int(guild_id) > 1 << 22 else None)
        member: dict[str, Any] = {
            "roles": [],
            "nick": None,
            "avatar": None,
            "banner": None,
            "joined_at": joined,
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "communication_disabled_until": None,
        }
        if with_user:
            member["user"] = self.users[user_id]
        if permissions is not None:
            member["permissions"] = permissions
        return member

    def _guild_create(self, guild: dict[str, Any], intents: int) -> dict[str, Any]:
        gid = guild["id"]
        members = guild["members"] if intents & GUILD_MEMBERS else [self.bot_user["id"]]
        return {
            "id": gid,
            "name": guild["name"],
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "banner": None,
            "description": None,
            "owner_id": guild["members"][1] if len(guild["members"]) > 1 else self.bot_user["id"],
            "region": "deprecated",
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 1,
            "default_message_notifications": 1,
            "explicit_content_filter": 0,
            "roles": [
                {
                    "id": gid,
                    "name": "@everyone",
                    "color": 0,
                    "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
                    "hoist": False,
                    "icon": None,
                    "unicode_emoji": None,
                    "position": 0,
                    "permissions": MEMBER_PERMISSIONS,
                    "managed": False,
                    "mentionable": False,
                    "flags": 0,
                }
            ],
            "emojis": [],
            "stickers": [],
            "features": [],
            "mfa_level": 0,
            "application_id": None,
            "system_channel_id": guild["channels"][0] if guild["channels"] else None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "safety_alerts_channel_id": None,
            "max_members": 500000,
            "vanity_url_code": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": "en-US",
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "joined_at": _iso(),
            "large": False,
            "unavailable": False,
            "lazy": True,
            "member_count": len(guild["members"]),
            "voice_states": [],
            "members": [self._member(uid, gid, with_user=True) for uid in members],
            "channels": [
                {k: v for k, v in self.channels[cid].items() if k != "guild_id"}
                for cid in guild["channels"]
                if self.channels[cid]["type"] not in THREAD_TYPES
            ],
            "threads": [
                self.channels[cid]
                for cid in guild["channels"]
                if self.channels[cid]["type"] in THREAD_TYPES and not self.channels[cid]["thread_metadata"]["archived"]
            ],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
            "embedded_activities": [],
            "activity_instances": [],
            "incidents_data": None,
        }

    def _user(self, user: dict[str, Any] | str | None, default: str = USER_ID) -> dict[str, Any]:
        if user is None:
            return self.users[default]
        if isinstance(user, str):
            return self.users[user]
        self.users.setdefault(user["id"], user)
        return user

    def _channel(self, channel_id: str) -> dict[str, Any]:
        channel = self.channels.get(str(channel_id))
        if channel is None:
            raise unknown("Channel", 10003)
        return channel

    def user_thread(self, name: str, parent_id: str = CHANNEL_ID, *, owner: dict[str, Any] | str | None = None) -> dict[str, Any]:
        """A public thread a user started in `parent_id` (dispatch THREAD_CREATE with it)."""
        thread = self._new_thread(self._channel(parent_id), self.snowflake(), {"name": name}, PUBLIC_THREAD)
        who = self._user(owner)["id"]
        thread["owner_id"] = who
        thread["member"] = {**thread["member"], "user_id": who}
        return thread

    def user_message(
        self,
        content: str,
        channel_id: str = CHANNEL_ID,
        *,
        author: dict[str, Any] | str | None = None,
        guild_id: str | None = None,
        mentions: Sequence[dict[str, Any] | str] = (),
        attachments: Sequence[dict[str, Any]] = (),
        reply_to: FakeMessage | str | None = None,
    ) -> dict[str, Any]:
        """A user's message, kept in the fake; returns the MESSAGE_CREATE payload to dispatch.
        `<@id>` mentions in the content count as mentions; guild_id defaults to the channel's."""
        channel = self._channel(channel_id)
        who = self._user(author)
        guild_id = guild_id or channel.get("guild_id")
        mentioned = [self._user(m) for m in mentions]
        for uid in re.findall(r"<@!?(\d+)>", content):
            if uid in self.users and all(m["id"] != uid for m in mentioned):
                mentioned.append(self.users[uid])
        kept = [self.attachments[str(a["id"])] for a in attachments]
        msg = FakeMessage(
            self.snowflake(), channel["id"], guild_id, who, content, attachments=kept, mentions=mentioned, history=[content]
        )
        if reply_to is not None:
            ref = self.message(reply_to if isinstance(reply_to, str) else reply_to.id)
            msg.type = 19
            msg.message_reference = {"type": 0, "message_id": ref.id, "channel_id": ref.channel_id, "guild_id": ref.guild_id}
        msg.revisions.append(msg.snapshot())
        self._store(msg)
        return self._message_event(msg)

    def _message_event(self, msg: FakeMessage) -> dict[str, Any]:
        data = msg.payload(self.origin)
        if msg.message_reference is not None:
            ref = self.all_messages.get(msg.message_reference["message_id"])
            data["referenced_message"] = None if ref is None or ref.deleted else ref.payload(self.origin)
        if msg.guild_id is not None:
            data["guild_id"] = msg.guild_id
            data["member"] = self._member(msg.author["id"], msg.guild_id)
            data["mentions"] = [{**u, "member": self._member(u["id"], msg.guild_id)} for u in msg.mentions]
        return data

    def _new_interaction(
        self, type_: int, data: dict[str, Any], *, guild: bool, channel_id: str | None, user: dict[str, Any] | str | None,
        locale: str, message: FakeMessage | None = None,
    ) -> dict[str, Any]:
        who = self._user(user)
        if guild:
            channel = self._channel(channel_id or CHANNEL_ID)
            if channel["type"] == DM:
                raise ValueError("guild=True needs a guild channel")
        else:
            channel = self._channel(channel_id) if channel_id else self.dm_channel(who)
        interaction_id = self.snowflake()
        token = f"aW50ZXJhY3Rpb246{interaction_id}:{secrets.token_urlsafe(48)}"
        payload: dict[str, Any] = {
            "id": interaction_id,
            "application_id": self.application_id,
            "type": type_,
            "data": data,
            "channel_id": channel["id"],
            "channel": {**channel, "permissions": MEMBER_PERMISSIONS},
            "token": token,
            "version": 1,
            "app_permissions": BOT_PERMISSIONS,
            "locale": locale,
            "entitlements": [],
            "entitlement_sku_ids": [],
            "attachment_size_limit": self.upload_limit,
        }
        guild_id = channel.get("guild_id")
        if guild_id is not None:
            payload["guild_id"] = guild_id
            payload["guild"] = {"id": guild_id, "locale": "en-US", "features": []}
            payload["guild_locale"] = "en-US"
            payload["member"] = self._member(who["id"], guild_id, with_user=True, permissions=MEMBER_PERMISSIONS)
            payload["authorizing_integration_owners"] = {"0": guild_id}
            payload["context"] = 0  # GUILD
        else:
            payload["user"] = who
            payload["authorizing_integration_owners"] = {"0": "0"}
            payload["context"] = 1  # BOT_DM
        if message is not None:
            payload["message"] = message.payload(self.origin)
        self.interactions[interaction_id] = FakeInteraction(
            interaction_id, token, type_, payload, channel["id"], guild_id
        )
        return payload

    def slash_command(
        self,
        name: str,
        options: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
        *,
        guild: bool = True,
        channel_id: str | None = None,
        user: dict[str, Any] | str | None = None,
        locale: str = "en-US",
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE for /name (type 2). `options` is Discord's option list, or a dict
        {name: value} whose types are inferred (an attachment payload becomes an attachment option).
        guild=False: in the user's DM with the bot. Dispatch it with `await api.dispatch(...)`."""
        data: dict[str, Any] = {"id": self._command_id(name, 1, channel_id), "name": name, "type": 1}
        resolved: dict[str, Any] = {}
        if isinstance(options, dict):
            built = []
            for key, value in options.items():
                if isinstance(value, dict) and "filename" in value:
                    resolved.setdefault("attachments", {})[value["id"]] = value
                    built.append({"name": key, "type": 11, "value": value["id"]})
                else:
                    kind = 5 if isinstance(value, bool) else 4 if isinstance(value, int) else 10 if isinstance(value, float) else 3
                    built.append({"name": key, "type": kind, "value": value})
            options = built
        if options:
            data["options"] = list(options)
        if resolved:
            data["resolved"] = resolved
        payload = self._new_interaction(2, data, guild=guild, channel_id=channel_id, user=user, locale=locale)
        if "guild_id" in payload and any(c["name"] == name for c in self.guild_commands.get(payload["guild_id"], [])):
            data["guild_id"] = payload["guild_id"]
        return payload

    def button_press(
        self,
        custom_id: str,
        message: FakeMessage | str,
        *,
        user: dict[str, Any] | str | None = None,
        component_type: int = 2,
        values: Sequence[str] | None = None,
        locale: str = "en-US",
    ) -> dict[str, Any]:
        """An INTERACTION_CREATE for a click on a component (type 3) of a message the fake holds;
        AssertionError when the message has no component with that custom_id."""
        msg = message if isinstance(message, FakeMessage) else self.message(message)
        if not any(c.get("custom_id") == custom_id for c in _walk_components(msg.components)):
            raise AssertionError(f"no component {custom_id!r} in message {msg.id}: {msg.components}")
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": component_type}
        if values is not None:
            data["values"] = list(values)
        channel = self._channel(msg.channel_id)
        return self._new_interaction(
            3, data, guild=channel["type"] != DM, channel_id=msg.channel_id, user=user, locale=locale, message=msg
        )

    def _command_id(self, name: str, type_: int, channel_id: str | None) -> str:
        guild_id = self.channels.get(channel_id or CHANNEL_ID, {}).get("guild_id")
        for cmd in [*self.guild_commands.get(str(guild_id), []), *self.commands]:
            if cmd["name"] == name and cmd.get("type", 1) == type_:
                return cmd["id"]
        key = (name, type_)
        if key not in self._command_ids:
            self._command_ids[key] = self.snowflake()
        return self._command_ids[key]

    # --- REST: plumbing ----------------------------------------------------------------------------
    def _endpoint(self, template: str, handler: Callable[[_Request], Any], auth: bool) -> Callable[[web.Request], Any]:
        async def endpoint(request: web.Request) -> web.StreamResponse:
            prefix = f"/api/v{request.match_info.get('version', API_VERSION)}"
            path = request.path[len(prefix):] if request.path.startswith(prefix + "/") else request.path
            headers = {k: v for k, v in request.headers.items() if k.lower() != "authorization"}
            authorized = request.headers.get("Authorization") == f"Bot {self.token}"
            call = ApiCall(request.method, path, template, dict(request.query), None, headers, time.monotonic(), authorized=authorized)
            self.calls.append(call)
            bucket_headers: dict[str, str] = {}
            try:
                if self.latency:
                    await asyncio.sleep(self.latency)
                try:
                    body, files = await _read_body(request)
                except ValueError:
                    raise DiscordError(400, 50109, "The request body contains invalid JSON.") from None
                call.json = body
                params = {k: v for k, v in request.match_info.items() if k != "version"}
                fault = self._take_fault(request.method, path)
                bucket_headers, over_limit = self._bucket(request.method, template, params)
                if fault is not None:
                    call.status, call.response = fault.status, fault.body
                    fault_headers = {**bucket_headers, **fault.headers}
                    if fault.status == 429:
                        retry = float(fault.body.get("retry_after", 0))
                        fault_headers["X-RateLimit-Reset"] = f"{time.time() + retry:.3f}"
                        fault_headers["Via"] = "1.1 google"  # discord.py treats a 429 without Via as a ban
                    return _json_response(fault.body, status=fault.status, headers=fault_headers)
                if auth and not authorized:
                    raise DiscordError(401, 0, "401: Unauthorized")
                if over_limit:
                    retry = float(bucket_headers["X-RateLimit-Reset-After"])
                    headers = {"Retry-After": str(max(1, round(retry))), "X-RateLimit-Scope": "user"}
                    raise DiscordError(429, 0, "You are being rate limited.", headers=headers)
                status, result = await handler(_Request(request.method, path, params, dict(request.query), body, files, call))
                call.status, call.response = status, result
                if status == 204:
                    return web.Response(status=204, headers=bucket_headers)
                return _json_response(result, status=status, headers=bucket_headers)
            except DiscordError as exc:
                call.status, call.response = exc.status, exc.body
                body, headers = exc.body, {**bucket_headers, **exc.headers}
                if exc.status == 429:
                    retry = float(headers.get("X-RateLimit-Reset-After", "1"))
                    body = {**body, "retry_after": retry, "global": False}
                    call.response = body
                return _json_response(body, status=exc.status, headers=headers)
            finally:
                self._changed.set()

        return endpoint

    def _bucket(self, method: str, template: str, params: dict[str, str]) -> tuple[dict[str, str], bool]:
        """Counts the request against its route bucket: the headers Discord sends with the answer,
        and whether the request is over the limit."""
        major = "+".join(params[k] for k in ("channel_id", "guild_id", "application_id", "interaction_id", "token") if k in params)
        route = f"{method} {template}"
        key = f"{route}:{major}"
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(hashlib.md5(route.encode()).hexdigest())
        now = time.monotonic()
        if now >= bucket.started + self.bucket_window:
            bucket.started, bucket.count = now, 0
        bucket.count += 1
        reset_after = max(0.0, bucket.started + self.bucket_window - now)
        headers = {
            "X-RateLimit-Bucket": bucket.hash,
            "X-RateLimit-Limit": str(self.bucket_limit),
            "X-RateLimit-Remaining": str(max(0, self.bucket_limit - bucket.count)),
            "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "Via": "1.1 google",
        }
        return headers, bucket.count > self.bucket_limit

    async def _r_unknown(self, req: _Request) -> tuple[int, Any]:
        raise DiscordError(404, 0, "404: Not Found")

    # --- REST: gateway, users, application ---------------------------------------------------------
    async def _r_gateway(self, req: _Request) -> tuple[int, Any]:
        return 200, {"url": self.gateway_url}

    async def _r_gateway_bot(self, req: _Request) -> tuple[int, Any]:
        limit = {"total": 1000, "remaining": 1000 - len(self.identifies), "reset_after": 86_400_000, "max_concurrency": 1}
        return 200, {"url": self.gateway_url, "shards": self.shards, "session_start_limit": limit}

    async def _r_get_user(self, req: _Request) -> tuple[int, Any]:
        uid = req.params["user_id"]
        if uid == "@me":
            return 200, {**self.bot_user, "verified": True, "mfa_enabled": False, "email": None, "locale": "en-US", "bot": True}
        if uid not in self.users:
            raise unknown("User", 10013)
        return 200, self.users[uid]

    async def _r_create_dm(self, req: _Request) -> tuple[int, Any]:
        uid = str((req.json or {}).get("recipient_id"))
        if uid not in self.users:
            raise form_error({("recipient_id",): ("NUMBER_TYPE_COERCE", f"Value \"{uid}\" is not snowflake.")})
        return 200, self.dm_channel(uid)

    async def _r_application(self, req: _Request) -> tuple[int, Any]:
        if req.params.get("app", "@me") not in ("@me", self.application_id):
            raise unknown("Application", 10002)
        owner = self.users.get(USER_ID) or self.bot_user
        return 200, {
            "id": self.application_id,
            "name": self.bot_user["username"],
            "icon": None,
            "description": "",
            "summary": "",
            "type": None,
            "hook": True,
            "bot_public": True,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "flags": 0,
            "owner": owner,
            "team": None,
            "bot": self.bot_user,
            "redirect_uris": [],
            "interactions_endpoint_url": None,
            "approximate_guild_count": len(self.guilds),
            "integration_types_config": {"0": {}},
            "tags": [],
        }

    # --- REST: application commands ----------------------------------------------------------------
    def _command_list(self, req: _Request) -> list[dict[str, Any]]:
        if req.params["application_id"] != self.application_id:
            raise DiscordError(403, 50001, "Missing Access")
        gid = req.params.get("guild_id")
        if gid is None:
            return self.commands
        if gid not in self.guilds:
            raise DiscordError(403, 50001, "Missing Access")
        return self.guild_commands.setdefault(gid, [])

    def _command(self, spec: dict[str, Any], index: int | None, guild_id: str | None, old: list[dict[str, Any]]) -> dict[str, Any]:
        where: tuple[str, ...] = () if index is None else (str(index),)
        type_ = spec.get("type", 1)
        name = str(spec.get("name") or "")
        description = spec.get("description") or ""
        if not re.fullmatch(r"[-_'\w]{1,32}", name) or (type_ == 1 and name != name.lower()):
            raise form_error({(*where, "name"): ("APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")})
        if type_ == 1 and not 1 <= len(description) <= 100:
            raise form_error({(*where, "description"): ("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")})
        if len(spec.get("options") or []) > 25:
            raise form_error({(*where, "options"): ("BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")})
        previous = next((c for c in old if c["name"] == name and c.get("type", 1) == type_), None)
        cid = previous["id"] if previous else self._command_ids.get((name, type_)) or self.snowflake()
        self._command_ids[(name, type_)] = cid
        out = {
            "id": cid,
            "application_id": self.application_id,
            "version": self.snowflake(),
            "default_member_permissions": spec.get("default_member_permissions"),
            "type": type_,
            "name": name,
            "name_localizations": spec.get("name_localizations"),
            "description": description,
            "description_localizations": spec.get("description_localizations"),
            "dm_permission": spec.get("dm_permission", True),
            "contexts": spec.get("contexts"),
            "integration_types": spec.get("integration_types", [0]),
            "nsfw": spec.get("nsfw", False),
        }
        if spec.get("options"):
            out["options"] = spec["options"]
        if guild_id is not None:
            out["guild_id"] = guild_id
        return out

    async def _r_get_commands(self, req: _Request) -> tuple[int, Any]:
        return 200, self._command_list(req)

    async def _r_put_commands(self, req: _Request) -> tuple[int, Any]:
        old = self._command_list(req)
        specs = req.json
        if not isinstance(specs, list):
            raise form_error({(): ("LIST_TYPE_CONVERT", "Only iterables may be used in a ListType")})
        if len(specs) > 100:
            raise form_error({(): ("BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.")})
        gid = req.params.get("guild_id")
        new = [self._command(spec, i, gid, old) for i, spec in enumerate(specs)]
        if len({(c["name"], c["type"]) for c in new}) != len(new):
            raise form_error({(): ("APPLICATION_COMMANDS_DUPLICATE_NAME", "Application command names must be unique")})
        old[:] = new
        return 200, new

    async def _r_post_command(self, req: _Request) -> tuple[int, Any]:
        old = self._command_list(req)
        cmd = self._command(req.json or {}, None, req.params.get("guild_id"), old)
        existing = [i for i, c in enumerate(old) if c["id"] == cmd["id"]]
        if existing:
            old[existing[0]] = cmd
            return 200, cmd
        old.append(cmd)
        return 201, cmd

    # --- REST: channels and messages ---------------------------------------------------------------
    async def _r_get_channel(self, req: _Request) -> tuple[int, Any]:
        return 200, self._channel(req.params["channel_id"])

    async def _r_typing(self, req: _Request) -> tuple[int, Any]:
        self._channel(req.params["channel_id"])
        return 204, None

    def _visible(self, channel_id: str, message_id: str) -> FakeMessage:
        self._channel(channel_id)
        msg = self.all_messages.get(message_id)
        if msg is None or msg.deleted or msg.channel_id != channel_id or msg.ephemeral:
            raise unknown("Message", 10008)
        return msg

    async def _r_get_message(self, req: _Request) -> tuple[int, Any]:
        msg = self._visible(req.params["channel_id"], req.params["message_id"])
        return 200, self._rest_message(msg)

    async def _r_history(self, req: _Request) -> tuple[int, Any]:
        self._channel(req.params["channel_id"])
        found = self.messages(req.params["channel_id"], ephemeral=False)
        if "before" in req.query:
            found = [m for m in found if int(m.id) < int(req.query["before"])]
        if "after" in req.query:
            found = [m for m in found if int(m.id) > int(req.query["after"])]
        limit = max(1, min(100, int(req.query.get("limit", 50))))
        found = found[:limit] if "after" in req.query else found[-limit:]
        return 200, [self._rest_message(m) for m in reversed(found)]

    def _rest_message(self, msg: FakeMessage) -> dict[str, Any]:
        data = msg.payload(self.origin)
        if msg.thread_id and msg.thread_id in self.channels:
            data["thread"] = self.channels[msg.thread_id]
        if msg.message_reference is not None:
            ref = self.all_messages.get(msg.message_reference["message_id"])
            data["referenced_message"] = None if ref is None or ref.deleted else ref.payload(self.origin)
        return data

    def _store(self, msg: FakeMessage) -> None:
        self.all_messages[msg.id] = msg
        channel = self.channels.get(msg.channel_id)
        if channel is not None and not msg.ephemeral:
            channel["last_message_id"] = msg.id
            if channel["type"] in THREAD_TYPES:
                channel["message_count"] = channel.get("message_count", 0) + 1
                channel["total_message_sent"] = channel.get("total_message_sent", 0) + 1

    def _attachments_from(self, req: _Request, channel_id: str, body: dict[str, Any]) -> list[FakeAttachment]:
        if len(req.files) > 10:
            raise form_error({("files",): ("BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")})
        described = {str(a.get("id")): a for a in body.get("attachments") or [] if isinstance(a, dict)}
        out = []
        for index, (name, filename, content, ctype) in enumerate(req.files):
            if len(content) > self.upload_limit:
                raise DiscordError(413, 40005, "Request entity too large")
            number = name[6:-1] if name.startswith("files[") and name.endswith("]") else str(index)
            meta = described.get(number, {})
            att = FakeAttachment(
                self.snowflake(), meta.get("filename") or filename, content, ctype or _guess_type(filename), channel_id,
                meta.get("description"),
            )
            self.attachments[att.id] = att
            out.append(att)
        req.call.files = out
        return out

    def _mentions(self, content: str) -> list[dict[str, Any]]:
        return [self.users[uid] for uid in dict.fromkeys(re.findall(r"<@!?(\d+)>", content)) if uid in self.users]

    def _validate(self, state: dict[str, Any]) -> None:
        """Discord's message limits; `state` is the message as it would be (content, embeds, ...)."""
        problems: dict[tuple[str, ...], tuple[str, str]] = {}
        content = state.get("content") or ""
        if len(content) > 2000:
            problems[("content",)] = ("BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.")
        embeds = state.get("embeds") or []
        if len(embeds) > 10:
            problems[("embeds",)] = ("BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
        total = 0
        for i, embed in enumerate(embeds[:10]):
            at = ("embeds", str(i))
            for key, limit in (("title", 256), ("description", 4096)):
                text = embed.get(key) or ""
                total += len(text)
                if len(text) > limit:
                    problems[(*at, key)] = ("BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")
            for key, sub, limit in (("footer", "text", 2048), ("author", "name", 256)):
                text = (embed.get(key) or {}).get(sub) or ""
                total += len(text)
                if len(text) > limit:
                    problems[(*at, key, sub)] = ("BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")
            fields = embed.get("fields") or []
            if len(fields) > 25:
                problems[(*at, "fields")] = ("BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.")
            for j, fld in enumerate(fields):
                for key, limit in (("name", 256), ("value", 1024)):
                    text = fld.get(key) or ""
                    total += len(text)
                    if not text:
                        problems[(*at, "fields", str(j), key)] = ("BASE_TYPE_REQUIRED", "This field is required")
                    elif len(text) > limit:
                        problems[(*at, "fields", str(j), key)] = ("BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")
        if total > 6000 and ("embeds",) not in problems:
            problems[("embeds",)] = ("MAX_EMBED_SIZE_EXCEEDED", "Embed size exceeds maximum size of 6000")
        components = state.get("components") or []
        if not (state.get("flags") or 0) & IS_COMPONENTS_V2:
            if len(components) > 5:
                problems[("components",)] = ("BASE_TYPE_MAX_LENGTH", "Must be 5 or fewer in length.")
            for i, row in enumerate(components):
                children = row.get("components") or []
                if row.get("type") != 1:
                    problems[("components", str(i), "type")] = ("COMPONENT_LAYOUT_WIDTH_EXCEEDED", "Top-level components must be action rows")
                elif not 1 <= len(children) <= 5:
                    problems[("components", str(i), "components")] = ("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")
                for j, child in enumerate(children):
                    at = ("components", str(i), "components", str(j))
                    if child.get("type") == 2:
                        if len(child.get("label") or "") > 80:
                            problems[(*at, "label")] = ("BASE_TYPE_MAX_LENGTH", "Must be 80 or fewer in length.")
                        if child.get("style") == 5:
                            if not child.get("url"):
                                problems[(*at, "url")] = ("BASE_TYPE_REQUIRED", "This field is required")
                        elif child.get("style") != 6 and not child.get("custom_id"):
                            problems[(*at, "custom_id")] = ("BASE_TYPE_REQUIRED", "This field is required")
        elif sum(1 for _ in _walk_components(components)) > 40:
            problems[("components",)] = ("BASE_TYPE_MAX_LENGTH", "Must be 40 or fewer in length.")
        ids = [c["custom_id"] for c in _walk_components(components) if c.get("custom_id")]
        for custom_id in ids:
            if len(custom_id) > 100:
                problems[("components",)] = ("BASE_TYPE_MAX_LENGTH", "custom_id must be 100 or fewer in length.")
        if len(ids) != len(set(ids)):
            problems[("components",)] = ("COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated")
        if problems:
            raise form_error(problems)
        if not content.strip() and not embeds and not components and not state.get("attachments") and not state.get("sticker_ids") and not state.get("poll"):
            raise DiscordError(400, 50006, "Cannot send an empty message")

    def _create(
        self, req: _Request, channel_id: str, body: dict[str, Any], *, author: dict[str, Any] | None = None, **extra: Any
    ) -> FakeMessage:
        channel = self._channel(channel_id)
        files = self._attachments_from(req, channel_id, body)
        content = "" if body.get("content") is None else str(body["content"])
        flags = int(body.get("flags") or 0)
        state = {**body, "content": content, "attachments": files, "flags": flags}
        self._validate(state)
        msg = FakeMessage(
            self.snowflake(),
            channel_id,
            channel.get("guild_id"),
            author or self.bot_user,
            content,
            embeds=[{"type": "rich", **e} for e in body.get("embeds") or []],
            components=list(body.get("components") or []),
            attachments=files,
            flags=flags & (EPHEMERAL | IS_COMPONENTS_V2 | (1 << 2) | (1 << 12)),
            mentions=self._mentions(content),
            history=[content],
            **extra,
        )
        ref = body.get("message_reference")
        if ref and ref.get("message_id"):
            target = self.all_messages.get(str(ref["message_id"]))
            if target is None or target.deleted:
                if ref.get("fail_if_not_exists", True):
                    raise form_error({("message_reference",): ("REPLIES_UNKNOWN_MESSAGE", "Unknown message")})
            else:
                msg.type = 19
                msg.message_reference = {"type": 0, "message_id": target.id, "channel_id": target.channel_id, "guild_id": target.guild_id}
        msg.revisions.append(msg.snapshot())
        self._store(msg)
        return msg

    def _apply_edit(self, req: _Request, msg: FakeMessage, body: dict[str, Any]) -> None:
        new_files = self._attachments_from(req, msg.channel_id, body)
        attachments = msg.attachments
        if "attachments" in body:
            keep = {str(a.get("id")) for a in body["attachments"] or [] if isinstance(a, dict)}
            attachments = [a for a in msg.attachments if a.id in keep]
        attachments = attachments + new_files
        content = msg.content if "content" not in body else ("" if body["content"] is None else str(body["content"]))
        embeds = msg.embeds if "embeds" not in body else [{"type": "rich", **e} for e in body["embeds"] or []]
        components = msg.components if "components" not in body else list(body["components"] or [])
        flags = msg.flags if "flags" not in body else (msg.flags & (EPHEMERAL | IS_COMPONENTS_V2)) | (int(body["flags"] or 0) & ((1 << 2) | IS_COMPONENTS_V2))
        flags &= ~LOADING
        self._validate({"content": content, "embeds": embeds, "components": components, "attachments": attachments, "flags": flags})
        msg.content, msg.embeds, msg.components, msg.attachments, msg.flags = content, embeds, components, attachments, flags
        msg.mentions = self._mentions(content)
        msg.edited_timestamp = _iso()
        msg.history.append(content)
        msg.revisions.append(msg.snapshot())
        msg.edit_times.append(time.monotonic())

    async def _r_send(self, req: _Request) -> tuple[int, Any]:
        body = req.json or {}
        channel = self._channel(req.params["channel_id"])
        if channel["type"] in THREAD_TYPES and channel["thread_metadata"].get("locked"):
            raise DiscordError(403, 50083, "Thread is archived")
        msg = self._create(req, channel["id"], body)
        if channel["type"] in THREAD_TYPES and channel["thread_metadata"].get("archived"):
            channel["thread_metadata"]["archived"] = False  # sending unarchives
        await self._echo("MESSAGE_CREATE", self._message_event(msg))
        return 200, self._rest_message(msg)

    async def _r_edit(self, req: _Request) -> tuple[int, Any]:
        msg = self._visible(req.params["channel_id"], req.params["message_id"])
        body = req.json or {}
        if msg.author["id"] != self.bot_user["id"] and set(body) - {"flags"}:
            raise DiscordError(403, 50005, "Cannot edit a message authored by another user")
        self._apply_edit(req, msg, body)
        await self._echo("MESSAGE_UPDATE", self._message_event(msg))
        return 200, self._rest_message(msg)

    async def _r_delete(self, req: _Request) -> tuple[int, Any]:
        msg = self._visible(req.params["channel_id"], req.params["message_id"])
        await self._delete(msg)
        return 204, None

    async def _delete(self, msg: FakeMessage) -> None:
        msg.deleted = True
        data: dict[str, Any] = {"id": msg.id, "channel_id": msg.channel_id}
        if msg.guild_id:
            data["guild_id"] = msg.guild_id
        if not msg.ephemeral:
            await self._echo("MESSAGE_DELETE", data)

    def _new_thread(self, parent: dict[str, Any], thread_id: str, body: dict[str, Any], type_: int) -> dict[str, Any]:
        name = str(body.get("name") or "")
        if not 1 <= len(name) <= 100:
            raise form_error({("name",): ("BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")})
        if parent["type"] not in (GUILD_TEXT, 5):
            raise DiscordError(400, 50024, "Cannot execute action on this channel type")
        duration = body.get("auto_archive_duration") or 4320
        if duration not in (60, 1440, 4320, 10080):
            raise form_error({("auto_archive_duration",): ("BASE_TYPE_CHOICES", "Value must be one of {60, 1440, 4320, 10080}.")})
        now = _iso()
        thread: dict[str, Any] = {
            "id": thread_id,
            "type": type_,
            "guild_id": parent["guild_id"],
            "parent_id": parent["id"],
            "owner_id": self.bot_user["id"],
            "name": name,
            "last_message_id": None,
            "message_count": 0,
            "total_message_sent": 0,
            "member_count": 1,
            "rate_limit_per_user": body.get("rate_limit_per_user") or 0,
            "flags": 0,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": duration,
                "archive_timestamp": now,
                "locked": False,
                "create_timestamp": now,
            },
            "member": {"id": thread_id, "user_id": self.bot_user["id"], "join_timestamp": now, "flags": 1},
        }
        if type_ == PRIVATE_THREAD:
            thread["thread_metadata"]["invitable"] = bool(body.get("invitable", True))
        self.channels[thread_id] = thread
        self.guilds[parent["guild_id"]]["channels"].append(thread_id)
        return thread

    async def _r_thread_from_message(self, req: _Request) -> tuple[int, Any]:
        parent = self._channel(req.params["channel_id"])
        msg = self._visible(parent["id"], req.params["message_id"])
        if msg.thread_id is not None or msg.id in self.channels:
            raise DiscordError(400, 160004, "A thread has already been created for this message")
        if parent["type"] in THREAD_TYPES or parent["type"] == DM:
            raise DiscordError(400, 50024, "Cannot execute action on this channel type")
        thread = self._new_thread(parent, msg.id, req.json or {}, PUBLIC_THREAD if parent["type"] == GUILD_TEXT else ANNOUNCEMENT_THREAD)
        msg.thread_id = thread["id"]
        await self._echo("THREAD_CREATE", {**thread, "newly_created": True})
        return 201, thread

    async def _r_thread(self, req: _Request) -> tuple[int, Any]:
        parent = self._channel(req.params["channel_id"])
        if parent["type"] in THREAD_TYPES or parent["type"] == DM:
            raise DiscordError(400, 50024, "Cannot execute action on this channel type")
        body = req.json or {}
        type_ = body.get("type") or PRIVATE_THREAD
        if type_ not in (PUBLIC_THREAD, PRIVATE_THREAD):
            raise form_error({("type",): ("BASE_TYPE_CHOICES", "Value must be one of {11, 12}.")})
        thread = self._new_thread(parent, self.snowflake(), body, type_)
        await self._echo("THREAD_CREATE", {**thread, "newly_created": True})
        return 201, thread

    # --- REST: interactions ------------------------------------------------------------------------
    async def _r_callback(self, req: _Request) -> tuple[int, Any]:
        interaction = self.interactions.get(req.params["interaction_id"])
        if interaction is None or interaction.token != req.params["token"] or interaction.dispatched_at is None:
            raise unknown("interaction", 10062)
        body = req.json or {}
        kind = body.get("type")
        try:
            if interaction.acknowledged:
                raise DiscordError(400, 40060, "Interaction has already been acknowledged.")
            if interaction.expired:
                raise DiscordError(404, 10062, "Unknown interaction")
            if kind not in (4, 5, 6, 7, 8, 9, 12) or (kind in (6, 7) and interaction.type != 3) or (kind == 8 and interaction.type != 4):
                raise form_error({("type",): ("INTERACTION_RESPONSE_TYPE_INVALID", f"Interaction response type {kind} is not valid here")})
            resource = await self._answer(req, interaction, kind, body.get("data") or {})
        except DiscordError as exc:
            interaction.callbacks.append((kind, exc.status))
            raise
        interaction.callbacks.append((kind, 200))
        interaction.response_type = kind
        interaction.acked_at = time.monotonic()
        if req.query.get("with_response") not in ("1", "true", "True"):
            return 204, None
        original = self.all_messages.get(interaction.original_id or "")
        result: dict[str, Any] = {
            "interaction": {
                "id": interaction.id,
                "type": interaction.type,
                "response_message_id": interaction.original_id,
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool(original and original.ephemeral),
            }
        }
        if resource is not None:
            result["resource"] = {"type": kind, "message": resource.payload(self.origin)}
        return 200, result

    async def _answer(self, req: _Request, interaction: FakeInteraction, kind: int, data: dict[str, Any]) -> FakeMessage | None:
        if kind in (4, 5):
            meta = self._interaction_fields(interaction)
            if kind == 5:
                msg = FakeMessage(
                    self.snowflake(), interaction.channel_id, interaction.guild_id, self.bot_user,
                    flags=LOADING | (int(data.get("flags") or 0) & EPHEMERAL), history=[""], **meta,
                )
                msg.revisions.append(msg.snapshot())
                self._store(msg)
            else:
                msg = self._create(req, interaction.channel_id, data, **meta)
            interaction.original_id = msg.id
            if not msg.ephemeral:
                await self._echo("MESSAGE_CREATE", self._message_event(msg))
            return msg
        if kind in (6, 7):
            target = self.all_messages[interaction.payload["message"]["id"]]
            interaction.original_id = target.id
            if kind == 7:
                self._apply_edit(req, target, data)
                if not target.ephemeral:
                    await self._echo("MESSAGE_UPDATE", self._message_event(target))
                return target
            return None
        if kind == 8:
            interaction.choices = list(data.get("choices") or [])
        elif kind == 9:
            if not data.get("custom_id") or not data.get("title") or not data.get("components"):
                raise form_error({("data",): ("BASE_TYPE_REQUIRED", "custom_id, title and components are required")})
            interaction.modal = data
        return None

    def _interaction_fields(self, interaction: FakeInteraction) -> dict[str, Any]:
        payload = interaction.payload
        user = (payload.get("member") or {}).get("user") or payload.get("user")
        metadata: dict[str, Any] = {
            "id": interaction.id,
            "type": interaction.type,
            "user": user,
            "authorizing_integration_owners": payload["authorizing_integration_owners"],
        }
        if interaction.type == 2:
            metadata["name"] = payload["data"]["name"]
            metadata["command_type"] = payload["data"].get("type", 1)
        if interaction.type == 3:
            metadata["interacted_message_id"] = payload["message"]["id"]
        legacy = {"id": interaction.id, "type": interaction.type, "name": payload["data"].get("name", ""), "user": user}
        return {
            "webhook_id": self.application_id,
            "application_id": self.application_id,
            "interaction_id": interaction.id,
            "interaction_metadata": metadata,
            "interaction": legacy,
            "type": 20 if interaction.type == 2 else 0,
        }

    def _webhook_interaction(self, req: _Request) -> FakeInteraction:
        token = req.params["token"]
        interaction = next((i for i in self.interactions.values() if i.token == token), None)
        if req.params["application_id"] != self.application_id or interaction is None or interaction.dispatched_at is None:
            raise unknown("Webhook", 10015)
        if time.monotonic() > interaction.dispatched_at + self.token_lifetime:
            raise DiscordError(401, 50027, "Invalid Webhook Token")
        return interaction

    def _webhook_message(self, interaction: FakeInteraction, message_id: str) -> FakeMessage:
        if message_id == "@original":
            if interaction.original_id is None:
                raise unknown("Message", 10008)
            message_id = interaction.original_id
        elif message_id not in interaction.followup_ids and message_id != interaction.original_id:
            raise unknown("Message", 10008)
        msg = self.all_messages[message_id]
        if msg.deleted:
            raise unknown("Message", 10008)
        return msg

    async def _r_followup(self, req: _Request) -> tuple[int, Any]:
        interaction = self._webhook_interaction(req)
        if not interaction.acknowledged:
            raise unknown("Webhook", 10015)
        body = req.json or {}
        original = self.all_messages.get(interaction.original_id or "")
        if original is not None and original.loading and interaction.response_type == 5:
            # Discord: the first follow-up after a deferred reply replaces the "thinking…" message
            self._apply_edit(req, original, body)
            msg = original
            if not msg.ephemeral:
                await self._echo("MESSAGE_UPDATE", self._message_event(msg))
        else:
            msg = self._create(req, interaction.channel_id, body, **self._interaction_fields(interaction))
            interaction.followup_ids.append(msg.id)
            if not msg.ephemeral:
                await self._echo("MESSAGE_CREATE", self._message_event(msg))
        if req.query.get("wait") in ("1", "true", "True"):
            return 200, self._rest_message(msg)
        return 204, None

    async def _r_webhook_get(self, req: _Request) -> tuple[int, Any]:
        interaction = self._webhook_interaction(req)
        return 200, self._rest_message(self._webhook_message(interaction, req.params["message_id"]))

    async def _r_webhook_edit(self, req: _Request) -> tuple[int, Any]:
        interaction = self._webhook_interaction(req)
        msg = self._webhook_message(interaction, req.params["message_id"])
        self._apply_edit(req, msg, req.json or {})
        if not msg.ephemeral:
            await self._echo("MESSAGE_UPDATE", self._message_event(msg))
        return 200, self._rest_message(msg)

    async def _r_webhook_delete(self, req: _Request) -> tuple[int, Any]:
        interaction = self._webhook_interaction(req)
        msg = self._webhook_message(interaction, req.params["message_id"])
        await self._delete(msg)
        return 204, None

    # --- attachments -------------------------------------------------------------------------------
    async def _download(self, request: web.Request) -> web.StreamResponse:
        att = self.attachments.get(request.match_info["attachment_id"])
        self.downloads.append(request.path)
        self._changed.set()
        if att is None or att.filename != request.match_info["filename"] or att.channel_id != request.match_info["channel_id"]:
            return web.Response(status=404, text="Not Found")
        return web.Response(body=att.content, headers={"Content-Type": att.content_type or "application/octet-stream"})


def _json_response(data: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """JSON the way Discord sends it: discord.py only parses a body whose Content-Type is exactly
    "application/json" (aiohttp's json_response would add "; charset=utf-8")."""
    return web.Response(
        body=json.dumps(data).encode(), status=status, headers={**(headers or {}), "Content-Type": "application/json"}
    )


async def _read_body(request: web.Request) -> tuple[Any, list[tuple[str, str, bytes, str | None]]]:
    """The JSON body (or multipart payload_json) and the uploaded files."""
    files: list[tuple[str, str, bytes, str | None]] = []
    if not request.can_read_body:
        return None, files
    if request.content_type == "multipart/form-data":
        body: Any = None
        reader = await request.multipart()
        while True:
            part: Any = await reader.next()
            if part is None:
                break
            if part.name == "payload_json":
                body = json.loads(await part.text())
            elif part.filename:
                data = await part.read(decode=False)
                files.append((part.name or "", part.filename, bytes(data), part.headers.get("Content-Type")))
        return body, files
    raw = await request.read()
    if not raw:
        return None, files
    return json.loads(raw), files


def _guess_type(filename: str) -> str | None:
    import mimetypes

    guessed, _ = mimetypes.guess_type(filename)
    if guessed is None and filename.endswith(".md"):
        return "text/markdown; charset=utf-8"
    if guessed is not None and guessed.startswith("text/"):
        return f"{guessed}; charset=utf-8"
    return guessed
