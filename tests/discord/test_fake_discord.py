"""The fake Discord against the real discord.py client: gateway, REST, interactions, rate limits, RESUME."""

from __future__ import annotations

import asyncio
import io
import json
import zlib
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import discord
import pytest
import yarl
from discord import app_commands
from discord.gateway import DiscordWebSocket
from discord.http import Route

from tests.fakes.discord_api import (
    BOT_TOKEN,
    CHANNEL_ID,
    GUILD_ID,
    USER_ID,
    FakeDiscordAPI,
    zlib_stream_packer,
    zstd_stream_packer,
)

ORIGINAL_BASE = Route.BASE
ORIGINAL_GATEWAY = DiscordWebSocket.DEFAULT_GATEWAY


class _ZlibStreamContext:
    """discord.py's zlib-stream decompressor, which it only defines when no zstd is installed."""

    COMPRESSION_TYPE = "zlib-stream"

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.context = zlib.decompressobj()

    def decompress(self, data: bytes, /) -> str | None:
        self.buffer.extend(data)
        if len(data) < 4 or data[-4:] != b"\x00\x00\xff\xff":
            return None
        msg = self.context.decompress(self.buffer)
        self.buffer = bytearray()
        return msg.decode("utf-8")


class Bot:
    """A real discord.py client pointed at the fake, with every event it gets recorded by name."""

    EVENTS = (
        "ready",
        "resumed",
        "disconnect",
        "message",
        "message_edit",
        "interaction",
        "thread_create",
        "shard_ready",
        "guild_join",
    )

    def __init__(self, client: discord.Client) -> None:
        self.client = client
        self.seen: dict[str, list[Any]] = defaultdict(list)
        self.task: asyncio.Task[None] | None = None
        for name in self.EVENTS:
            client.event(self._recorder(name))

    def _recorder(self, name: str) -> Callable[..., Awaitable[None]]:
        async def handler(*args: Any) -> None:
            self.seen[name].append(args[0] if len(args) == 1 else args)

        handler.__name__ = f"on_{name}"
        return handler

    def messages(self, content: str | None = None) -> list[discord.Message]:
        return [m for m in self.seen["message"] if content is None or m.content == content]


@pytest.fixture(autouse=True)
def restore_discord_globals() -> Any:
    """Route.BASE, DEFAULT_GATEWAY and the decompressor are process-wide: put them back."""
    saved = discord.utils._ActiveDecompressionContext
    yield
    Route.BASE = ORIGINAL_BASE
    DiscordWebSocket.DEFAULT_GATEWAY = ORIGINAL_GATEWAY
    discord.utils._ActiveDecompressionContext = saved  # type: ignore[misc]


MakeAPI = Callable[..., Awaitable[FakeDiscordAPI]]


@pytest.fixture
async def make_api() -> AsyncIterator[MakeAPI]:
    """Fakes for a test; closed after the clients connected to them (the connect fixture needs this)."""
    fakes: list[FakeDiscordAPI] = []

    async def make(**options: Any) -> FakeDiscordAPI:
        fakes.append(await FakeDiscordAPI(**options).start())
        return fakes[-1]

    yield make
    for fake in fakes:
        await fake.close()


@pytest.fixture
async def api(make_api: MakeAPI) -> FakeDiscordAPI:
    return await make_api()


Connect = Callable[..., Awaitable[Bot]]


@pytest.fixture
async def connect(make_api: MakeAPI) -> AsyncIterator[Connect]:
    """Log a client in against a fake and run its gateway connection, as the adapter will."""
    bots: list[Bot] = []

    async def start(
        fake: FakeDiscordAPI,
        *,
        intents: discord.Intents | None = None,
        client_class: type[discord.Client] = discord.Client,
        wait_ready: bool = True,
        **options: Any,
    ) -> Bot:
        if intents is None:
            intents = discord.Intents.default()
            intents.message_content = True
        client = client_class(intents=intents, guild_ready_timeout=0.05, **options)
        bot = Bot(client)
        bots.append(bot)
        Route.BASE = fake.base_url
        await client.login(BOT_TOKEN)
        _, url, _ = await client.http.get_bot_gateway()
        if client_class is discord.Client:  # a plain Client never asks for the gateway
            DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)
        bot.task = asyncio.create_task(client.connect(reconnect=True))
        if wait_ready:
            await fake.wait_for(lambda: bot.seen["ready"] or bot.task.done())
            if bot.task.done():
                bot.task.result()
        return bot

    yield start
    for bot in bots:
        await bot.client.close()
        if bot.task is not None:
            await asyncio.wait_for(asyncio.gather(bot.task, return_exceptions=True), 10)


async def test_client_connects_sends_edits_and_threads(api: FakeDiscordAPI, connect: Connect) -> None:
    bot = await connect(api)
    client = bot.client

    assert [g.id for g in client.guilds] == [int(GUILD_ID)]
    assert client.user is not None and client.user.bot and str(client.user.id) == api.bot_user["id"]
    assert client.application_id == int(api.application_id)
    identify = api.identifies[0]
    assert identify["token"] == BOT_TOKEN and identify["intents"] == client.intents.value
    assert api.connections[0].compress == "zstd-stream"  # zstandard is installed, so discord.py asks for it
    assert [c.path for c in api.calls[:3]] == ["/users/@me", "/oauth2/applications/@me", "/gateway/bot"]
    assert all("Authorization" not in c.headers and c.authorized for c in api.calls)

    channel = client.get_channel(int(CHANNEL_ID))
    assert isinstance(channel, discord.TextChannel)
    sent = await channel.send("hello")
    await sent.edit(content="hello, edited")
    thread = await sent.create_thread(name="A conversation")
    await thread.send("inside the thread")

    [message] = api.messages(CHANNEL_ID)
    assert message.id == str(sent.id) and message.from_bot
    assert message.content == "hello, edited" and message.history == ["hello", "hello, edited"]
    assert message.edits == 1 and message.thread_id == str(thread.id)
    assert thread.id == sent.id and api.threads[str(thread.id)]["type"] == 11
    assert [m.content for m in api.messages(str(thread.id))] == ["inside the thread"]
    posts = api.calls_to("POST", f"/channels/{CHANNEL_ID}/messages")
    assert [c.json.get("content") for c in posts if c.route.endswith("/messages")] == ["hello"]
    assert api.calls_to("PATCH", f"/channels/{CHANNEL_ID}/messages/{sent.id}")[0].json["content"] == "hello, edited"

    # Discord echoes the bot's own writes over the gateway
    await api.wait_for(lambda: bot.seen["thread_create"] and bot.messages("inside the thread"))
    assert bot.seen["thread_create"][0].id == thread.id
    echoed = next(m for m in bot.seen["message"] if m.id == sent.id)
    assert echoed.author == client.user and echoed.content == "hello, edited"  # MESSAGE_UPDATE applied


async def test_user_messages_reach_on_message_with_attachments(api: FakeDiscordAPI, connect: Connect) -> None:
    bot = await connect(api)
    attachment = api.add_attachment("notes.md", b"# Notes\n")
    await api.dispatch("MESSAGE_CREATE", api.user_message("see attached", attachments=[attachment]))
    [message] = await api.wait_for(lambda: bot.messages("see attached"))
    assert message.author.id == int(USER_ID) and isinstance(message.author, discord.Member)
    assert message.guild is not None and message.channel.id == int(CHANNEL_ID)
    [got] = message.attachments
    assert (got.filename, got.size, got.content_type) == ("notes.md", 8, "text/markdown; charset=utf-8")
    assert await got.read() == b"# Notes\n"
    assert api.downloads == [f"/attachments/{CHANNEL_ID}/{attachment['id']}/notes.md"]

    dm = api.dm_channel(USER_ID)
    await api.dispatch("MESSAGE_CREATE", api.user_message("a direct message", dm["id"]))
    [direct] = await api.wait_for(lambda: bot.messages("a direct message"))
    assert isinstance(direct.channel, discord.DMChannel) and direct.guild is None


async def test_without_message_content_intent_guild_messages_arrive_empty(
    api: FakeDiscordAPI, connect: Connect
) -> None:
    bot = await connect(api, intents=discord.Intents.default())
    await api.dispatch("MESSAGE_CREATE", api.user_message("not for the bot"))
    await api.dispatch("MESSAGE_CREATE", api.user_message(f"<@{api.bot_user['id']}> for the bot"))
    await api.wait_for(lambda: len(bot.seen["message"]) == 2)
    assert [m.content for m in bot.seen["message"]] == ["", f"<@{api.bot_user['id']}> for the bot"]
    assert bot.client.user in bot.seen["message"][1].mentions


async def test_privileged_intent_not_enabled_is_refused(make_api: MakeAPI, connect: Connect) -> None:
    api = await make_api(privileged_intents=0)
    bot = await connect(api, wait_ready=False)
    assert bot.task is not None
    with pytest.raises(discord.PrivilegedIntentsRequired):
        await asyncio.wait_for(bot.task, 10)


async def test_interaction_defer_then_followup_and_edit(api: FakeDiscordAPI, connect: Connect) -> None:
    bot = await connect(api)
    payload = api.slash_command("hotel", {"city": "Kyoto", "nights": 2})
    await api.dispatch("INTERACTION_CREATE", payload)
    [interaction] = await api.wait_for(lambda: bot.seen["interaction"])
    assert isinstance(interaction, discord.Interaction)
    assert interaction.type is discord.InteractionType.application_command
    assert interaction.data is not None and interaction.data["name"] == "hotel"
    assert [o["value"] for o in interaction.data["options"]] == ["Kyoto", 2]
    assert interaction.user.id == int(USER_ID) and interaction.guild_id == int(GUILD_ID)
    assert interaction.channel is not None and interaction.channel.id == int(CHANNEL_ID)

    await interaction.response.defer(thinking=True)
    fake = api.interactions[payload["id"]]
    assert fake.response_type == 5 and fake.ack_delay is not None and fake.ack_delay < 3
    original = api.message(fake.original_id or "")
    assert original.loading and original.content == ""

    first = await interaction.followup.send("first answer", wait=True)
    assert first.id == int(original.id)  # the first follow-up replaces "thinking…"
    assert not original.loading and original.content == "first answer"
    await interaction.edit_original_response(content="edited answer")
    second = await interaction.followup.send("second answer", wait=True)

    assert [m.content for m in api.messages(CHANNEL_ID)] == ["edited answer", "second answer"]
    assert original.history == ["", "first answer", "edited answer"]
    assert api.message(second.id).interaction_metadata["id"] == payload["id"]  # type: ignore[index]
    assert api.calls_to("PATCH", f"/webhooks/{api.application_id}/{payload['token']}/messages/@original")

    with pytest.raises(discord.InteractionResponded):  # discord.py refuses a second answer itself…
        await interaction.response.defer()
    again = discord.Interaction(data=payload, state=bot.client._connection)  # type: ignore[arg-type]
    with pytest.raises(discord.HTTPException) as refused:  # …and so does Discord
        await again.response.defer()
    assert (refused.value.status, refused.value.code) == (400, 40060)
    assert fake.callbacks == [(5, 200), (5, 400)]


async def test_callback_after_the_deadline_is_unknown(make_api: MakeAPI, connect: Connect) -> None:
    api = await make_api(ack_deadline=0.2)
    bot = await connect(api)
    payload = api.slash_command("shop")
    await api.dispatch("INTERACTION_CREATE", payload)
    [interaction] = await api.wait_for(lambda: bot.seen["interaction"])
    await api.wait_for(lambda: api.interactions[payload["id"]].expired)
    with pytest.raises(discord.NotFound) as late:
        await interaction.response.defer()
    assert late.value.code == 10062
    assert api.interactions[payload["id"]].callbacks == [(5, 404)]


async def test_button_press_and_message_update(api: FakeDiscordAPI, connect: Connect) -> None:
    bot = await connect(api)
    channel = bot.client.get_channel(int(CHANNEL_ID))
    assert isinstance(channel, discord.TextChannel)
    view = discord.ui.View()
    view.add_item(discord.ui.Button(label="Confirm", custom_id="confirm", style=discord.ButtonStyle.primary))
    sent = await channel.send("Book it?", view=view)
    stored = api.message(sent.id)
    assert [b["custom_id"] for b in stored.buttons()] == ["confirm"]
    with pytest.raises(AssertionError):
        api.button_press("no-such-button", stored)

    payload = api.button_press("confirm", stored, user=USER_ID)
    await api.dispatch("INTERACTION_CREATE", payload)
    [interaction] = await api.wait_for(lambda: bot.seen["interaction"])
    assert interaction.type is discord.InteractionType.component
    assert interaction.data["custom_id"] == "confirm"
    assert interaction.message is not None and interaction.message.id == sent.id
    await interaction.response.edit_message(content="Booked.", view=None)
    assert stored.content == "Booked." and stored.components == []
    assert api.interactions[payload["id"]].response_type == 7


async def test_dm_slash_command_and_ephemeral_reply(api: FakeDiscordAPI, connect: Connect) -> None:
    bot = await connect(api)
    payload = api.slash_command("proofread", {"text": "teh"}, guild=False)
    await api.dispatch("INTERACTION_CREATE", payload)
    [interaction] = await api.wait_for(lambda: bot.seen["interaction"])
    assert interaction.guild is None and isinstance(interaction.channel, discord.DMChannel)
    assert interaction.user.id == int(USER_ID)
    await interaction.response.send_message("only you can see this", ephemeral=True)
    [reply] = api.messages(payload["channel_id"])
    assert reply.ephemeral and reply.content == "only you can see this"
    assert api.messages(payload["channel_id"], ephemeral=False) == []

    user = await bot.client.fetch_user(int(USER_ID))
    await user.send("a DM from the bot")
    assert [m.content for m in api.messages(payload["channel_id"], ephemeral=False)] == ["a DM from the bot"]
    assert api.calls_to("POST", "/users/@me/channels")[0].json == {"recipient_id": int(USER_ID)}


async def test_rate_limited_edit_is_retried_after_retry_after(api: FakeDiscordAPI, connect: Connect) -> None:
    bot = await connect(api)
    channel = bot.client.get_channel(int(CHANNEL_ID))
    assert isinstance(channel, discord.TextChannel)
    sent = await channel.send("draft")
    api.rate_limit(f"/channels/{CHANNEL_ID}/messages/{sent.id}", method="PATCH", retry_after=0.3)
    await sent.edit(content="final text")

    first, second = api.calls_to("PATCH", f"/channels/{CHANNEL_ID}/messages/{sent.id}")
    assert (first.status, second.status) == (429, 200)
    assert first.response == {"message": "You are being rate limited.", "retry_after": 0.3, "global": False}
    assert second.at - first.at >= 0.3
    assert api.message(sent.id).content == "final text" and api.message(sent.id).history == ["draft", "final text"]


async def test_bucket_headers_make_discord_py_wait_instead_of_429(make_api: MakeAPI, connect: Connect) -> None:
    api = await make_api(bucket_limit=2, bucket_window=0.4)
    bot = await connect(api)
    channel = bot.client.get_channel(int(CHANNEL_ID))
    assert isinstance(channel, discord.TextChannel)
    for n in range(3):
        await channel.send(f"message {n}")
    posts = api.calls_to("POST", f"/channels/{CHANNEL_ID}/messages")
    assert [c.status for c in posts] == [200, 200, 200]
    assert posts[2].at - posts[0].at >= 0.3  # the bucket was empty: discord.py slept until the reset


async def test_validation_errors_use_discord_error_json(api: FakeDiscordAPI, connect: Connect) -> None:
    bot = await connect(api)
    channel = bot.client.get_channel(int(CHANNEL_ID))
    assert isinstance(channel, discord.TextChannel)

    with pytest.raises(discord.HTTPException) as too_long:
        await channel.send("x" * 2001)
    assert (too_long.value.status, too_long.value.code) == (400, 50035)
    assert api.calls[-1].response["errors"]["content"]["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"

    with pytest.raises(discord.HTTPException) as empty:
        await bot.client.http.send_message(int(CHANNEL_ID), params=discord.http.MultipartParameters({}, None, None))
    assert empty.value.code == 50006

    embed = discord.Embed(description="d" * 4097)
    for n in range(26):
        embed.add_field(name=f"f{n}", value="v")
    with pytest.raises(discord.HTTPException):
        await channel.send(embed=embed)
    assert set(api.calls[-1].response["errors"]["embeds"]["0"]) == {"description", "fields"}

    with pytest.raises(discord.NotFound) as unknown_channel:
        await bot.client.http.get_channel(1)
    assert unknown_channel.value.code == 10003
    sent = await channel.send("ok")
    await sent.delete()
    with pytest.raises(discord.NotFound) as unknown_message:
        await sent.edit(content="gone")
    assert unknown_message.value.code == 10008
    assert api.messages(CHANNEL_ID) == [] and api.message(sent.id).deleted


async def test_files_are_uploaded_and_served(api: FakeDiscordAPI, connect: Connect) -> None:
    bot = await connect(api)
    channel = bot.client.get_channel(int(CHANNEL_ID))
    assert isinstance(channel, discord.TextChannel)
    sent = await channel.send("the report", file=discord.File(io.BytesIO(b"report body"), filename="report.md"))
    [stored] = api.message(sent.id).attachments
    assert (stored.filename, stored.content) == ("report.md", b"report body")
    assert sent.attachments[0].filename == "report.md"
    assert await sent.attachments[0].read() == b"report body"
    assert api.calls_to("POST", f"/channels/{CHANNEL_ID}/messages")[-1].files == [stored]


async def test_commands_bulk_overwrite(api: FakeDiscordAPI, connect: Connect) -> None:
    bot = await connect(api)
    tree = app_commands.CommandTree(bot.client)

    @tree.command(name="hotel", description="Find a hotel")
    async def hotel(interaction: discord.Interaction, city: str) -> None: ...

    synced = await tree.sync()
    assert [c.name for c in synced] == ["hotel"]
    assert api.commands[0]["options"][0]["name"] == "city"
    again = await tree.sync()
    assert again[0].id == synced[0].id  # an overwrite keeps the ids of commands that stay
    assert api.slash_command("hotel", {"city": "Oslo"})["data"]["id"] == str(synced[0].id)

    guild_cmds = await bot.client.http.bulk_upsert_guild_commands(
        api.application_id, GUILD_ID, [{"name": "shop", "description": "Shop", "type": 1}]
    )
    assert guild_cmds[0]["guild_id"] == GUILD_ID
    assert await bot.client.http.get_guild_commands(api.application_id, GUILD_ID) == guild_cmds
    with pytest.raises(discord.HTTPException) as bad:
        await bot.client.http.bulk_upsert_global_commands(api.application_id, [{"name": "Bad Name", "description": "x"}])
    assert bad.value.code == 50035


async def test_dropped_connection_resumes_and_replays_missed_events(api: FakeDiscordAPI, connect: Connect) -> None:
    bot = await connect(api)
    session = api.session()
    assert session is not None
    await api.drop_connection(missed=[("MESSAGE_CREATE", api.user_message("sent while you were away"))])
    await api.wait_for(lambda: bot.seen["resumed"] and bot.messages("sent while you were away"))

    resume = api.resumes[-1]
    assert resume["session_id"] == session.session_id and resume["token"] == BOT_TOKEN
    assert len(api.identifies) == 1 and api.replayed >= 1
    assert api.connections[-1].path == "/resume"  # discord.py resumes at READY's resume_gateway_url
    assert bot.seen["disconnect"]

    await api.dispatch("MESSAGE_CREATE", api.user_message("after the resume"))
    await api.wait_for(lambda: bot.messages("after the resume"))


async def test_reconnect_request_resumes(api: FakeDiscordAPI, connect: Connect) -> None:
    bot = await connect(api)
    await api.request_reconnect()
    await api.wait_for(lambda: bot.seen["resumed"])
    assert len(api.identifies) == 1 and len(api.resumes) == 1


async def test_zlib_stream_compression(api: FakeDiscordAPI, connect: Connect) -> None:
    discord.utils._ActiveDecompressionContext = _ZlibStreamContext  # type: ignore[misc,assignment]
    bot = await connect(api)
    assert api.connections[0].compress == "zlib-stream"
    await api.dispatch("MESSAGE_CREATE", api.user_message("compressed with zlib"))
    await api.wait_for(lambda: bot.messages("compressed with zlib"))


async def test_auto_sharded_client_discovers_the_gateway(make_api: MakeAPI, connect: Connect) -> None:
    class FastShards(discord.AutoShardedClient):
        async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
            """discord.py waits 5 s before every IDENTIFY but the first; the fake has no such limit."""

    api = await make_api(shards=2)
    other = next(str(n << 22) for n in range(1, 100) if n % 2 == 1)  # a guild on shard 1
    api.add_guild("Other Guild", guild_id=other, channels=["lobby"], members=[USER_ID])
    bot = await connect(api, client_class=FastShards)
    assert sorted(s.get("shard") for s in api.identifies) == [[0, 2], [1, 2]]
    assert DiscordWebSocket.DEFAULT_GATEWAY == ORIGINAL_GATEWAY  # found with GET /gateway/bot
    assert {g.id for g in bot.client.guilds} == {int(GUILD_ID), int(other)}
    lobby = api.guilds[other]["channels"][0]
    await api.dispatch("MESSAGE_CREATE", api.user_message("hello shard one", lobby))
    [message] = await api.wait_for(lambda: bot.messages("hello shard one"))
    assert message.guild is not None and message.guild.shard_id == 1
    assert "MESSAGE_CREATE" in api.sent_events(shard=1)


@pytest.mark.parametrize("compress", [None, "zlib-stream", "zstd-stream"])
async def test_raw_gateway_protocol(api: FakeDiscordAPI, compress: str | None) -> None:
    """HELLO, heartbeat ACK, IDENTIFY → READY + GUILD_CREATE, a bad RESUME → INVALID_SESSION,
    for each transport compression, decoded the way discord.py decodes it."""
    query = f"?v=10&encoding=json&compress={compress}" if compress else "?v=10&encoding=json"
    if compress == "zlib-stream":
        decoder: Any = _ZlibStreamContext()
    elif compress == "zstd-stream":
        decoder = discord.utils._ZstdDecompressionContext()  # type: ignore[attr-defined]
    async with aiohttp.ClientSession() as http, http.ws_connect(api.gateway_url + query) as ws:

        async def receive() -> dict[str, Any]:
            msg = await ws.receive(timeout=5)
            if compress is None:
                assert msg.type is aiohttp.WSMsgType.TEXT
                return json.loads(msg.data)
            assert msg.type is aiohttp.WSMsgType.BINARY
            return json.loads(decoder.decompress(msg.data))

        hello = await receive()
        assert hello["op"] == 10 and hello["d"]["heartbeat_interval"] == 41250
        await ws.send_json({"op": 1, "d": None})
        assert (await receive())["op"] == 11
        await ws.send_json({"op": 2, "d": {"token": BOT_TOKEN, "intents": 513, "properties": {}}})
        ready = await receive()
        assert (ready["op"], ready["t"], ready["s"]) == (0, "READY", 1)
        assert ready["d"]["resume_gateway_url"] == api.resume_gateway_url
        assert ready["d"]["guilds"] == [{"id": GUILD_ID, "unavailable": True}]
        guild = await receive()
        assert (guild["t"], guild["s"], guild["d"]["id"]) == ("GUILD_CREATE", 2, GUILD_ID)
        await ws.send_json({"op": 6, "d": {"token": BOT_TOKEN, "session_id": "nope", "seq": 2}})
        assert await receive() == {"op": 9, "d": False}


def test_compressors_round_trip() -> None:
    zlib_pack, zstd_pack = zlib_stream_packer(), zstd_stream_packer()
    zlib_unpack = _ZlibStreamContext()
    zstd_unpack = discord.utils._ZstdDecompressionContext()  # type: ignore[attr-defined]
    for text in ['{"op":10}', json.dumps({"d": "x" * 10_000}), "{}"]:
        packed = zlib_pack(text)
        assert isinstance(packed, bytes) and packed.endswith(b"\x00\x00\xff\xff")
        assert zlib_unpack.decompress(packed) == text
        assert zstd_unpack.decompress(zstd_pack(text)) == text
