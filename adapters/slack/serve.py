"""Serving Slack: the HTTP Events API (bolt's aiohttp app plus a health check) or Socket Mode,
until SIGINT/SIGTERM; turns in progress finish (or are stopped and resume later) on the way out."""

from __future__ import annotations

import logging
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.request.internals import parse_body
from slack_sdk.signature import SignatureVerifier

from adapters.slack.app import REQUIRED, SOCKET_MODE_REQUIRED, SlackBot, make_client
from adapters.slack.manifest import EVENTS_PATH
from adapters.slack.settings import SlackSettings
from bot.app import App
from bot.platform import require_settings, serving
from bot.supervisor import stop_signal

log = logging.getLogger(__name__)

MAX_TIMESTAMP_DIGITS = 12


async def refusal(request: web.Request, verifier: SignatureVerifier) -> web.Response | None:
    """Why a request to the events endpoint is refused (400 malformed, 401 not signed by Slack), or
    None. bolt parses a body before it checks the signature, so a malformed body or timestamp from
    anyone would raise inside it; here the signature is checked over the raw body first."""
    stamp = request.headers.get("X-Slack-Request-Timestamp", "")
    if not (stamp.isascii() and stamp.isdigit() and len(stamp) <= MAX_TIMESTAMP_DIGITS):
        return web.json_response({"error": "missing or malformed X-Slack-Request-Timestamp"}, status=400)
    try:
        body = (await request.read()).decode("utf-8")
    except UnicodeDecodeError:
        return web.json_response({"error": "the body is not UTF-8"}, status=400)
    if not verifier.is_valid(body, stamp, request.headers.get("X-Slack-Signature", "")):
        return web.json_response({"error": "invalid request"}, status=401)
    try:
        parsed = parse_body(body, request.headers.get("Content-Type", "").split(";")[0].strip() or None)
    except (ValueError, RecursionError):
        parsed = None
    if not isinstance(parsed, dict):
        return web.json_response({"error": "malformed body"}, status=400)
    return None


def web_app(bot: SlackBot) -> web.Application:
    """bolt's aiohttp application plus a health check for the hosting platform."""
    app = bot.app.web_app(path=EVENTS_PATH)
    assert bot.slack.signing_secret is not None  # SlackBot checked it
    verifier = SignatureVerifier(bot.slack.signing_secret.get_secret_value())

    @web.middleware
    async def verified_first(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.method == "POST" and request.path == EVENTS_PATH:
            refused = await refusal(request, verifier)
            if refused is not None:
                # Never the body: it may carry tokens.
                log.debug("Slack request refused (%d): %s", refused.status, refused.text)
                return refused
        return await handler(request)

    @web.middleware
    async def ack_first(request: web.Request, handler: Any) -> web.StreamResponse:
        async with bot.ack_first.request():
            return await handler(request)

    app.middlewares.extend([verified_first, ack_first])

    async def health(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    app.router.add_get("/healthz", health)
    return app


async def serve(app: App, *, socket: bool = False) -> None:
    """Run until SIGINT/SIGTERM: HTTP on settings.port (signature verification on), or Socket Mode.
    A configuration problem (missing setting, token Slack refuses) raises ConfigError with a
    readable, secret-free message; `python -m bot` prints it and exits with status 2."""
    settings = app.settings
    require_settings(settings.section(SlackSettings), "Slack", REQUIRED | (SOCKET_MODE_REQUIRED if socket else {}))
    async with (
        stop_signal() as stop,
        aiohttp.ClientSession() as session,
        await app.open_runtime() as runtime,
    ):
        bot = SlackBot(settings, runtime, client=make_client(settings, session=session))
        await bot.start()
        async with serving(bot):
            await (_socket_mode if socket else _http)(bot, stop)


async def _http(bot: SlackBot, stop: Any) -> None:
    runner = web.AppRunner(web_app(bot), handle_signals=False, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "0.0.0.0", bot.settings.port).start()
        log.info("Slack bot listening on port %d (%s)", bot.settings.port, EVENTS_PATH)
        await stop.wait()
    finally:
        await runner.cleanup()


async def _socket_mode(bot: SlackBot, stop: Any) -> None:
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

    assert bot.slack.app_token is not None
    handler = AsyncSocketModeHandler(bot.app, bot.slack.app_token.get_secret_value())
    handle = handler.handle

    async def acked_first(client: Any, req: Any) -> None:
        async with bot.ack_first.request():
            await handle(client, req)

    handler.client.socket_mode_request_listeners[:] = [acked_first]
    await handler.connect_async()
    log.info("Slack bot connected in Socket Mode")
    try:
        await stop.wait()
    finally:
        await handler.close_async()
