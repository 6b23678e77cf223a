"""The /hotel answer's map: a PNG drawn from coordinates alone, numbered as the cards, with the
places asked about; delivered as a file by the console and Slack, never kept in the checkpoint, and
never the reason a turn fails."""

from __future__ import annotations

import asyncio
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageFont

from adapters.console.app import ask
from agents.hotel import geo
from agents.hotel.agent import HotelAgent
from agents.hotel.map import (
    FILENAME,
    HOTEL,
    HotelMap,
    MapHotel,
    MapPlace,
    covers,
    map_for,
    marker_positions,
    render_map,
)
from agents.hotel.store import HotelStore
from bot.agent import TurnInput
from bot.app import App
from bot.config import Settings, load_settings
from bot.conversation import ConversationKey
from bot.events import Attachment, Final, stream_event_adapter
from bot.runtime import ConversationRuntime
from tests.discord.conftest import api, restore_discord_globals  # noqa: F401  (fixtures)
from tests.discord.test_adapter import Start, start  # noqa: F401  (fixtures)
from tests.fakes.discord_api import FakeDiscordAPI
from tests.hotel.conftest import TODAY
from tests.slack.conftest import HarnessFactory, make_harness, slack_api  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
EIFFEL = geo.find_landmark("Eiffel Tower")[1]  # type: ignore[index]


def paris_map() -> HotelMap:
    return HotelMap(
        hotels=(
            MapHotel(1, "Hôtel du Centre", 48.8566, 2.3522, "$182/night"),  # centre
            MapHotel(2, "Hôtel de l'Est", 48.8566, 2.3900, "$140/night"),  # further east
            MapHotel(3, "Hôtel du Nord", 48.8800, 2.3522, "$160/night"),  # further north
        ),
        places=(MapPlace(EIFFEL.name, EIFFEL.lat, EIFFEL.lon),),
    )


def decoded(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    image.load()
    return image


def is_marker_colour(pixel: tuple[int, ...]) -> bool:
    return all(abs(a - b) <= 40 for a, b in zip(pixel[:3], HOTEL, strict=True))


# --- the picture ------------------------------------------------------------------------------


def test_map_is_a_png_of_slack_preview_size_and_the_same_for_the_same_input() -> None:
    png = render_map(paris_map())
    assert png.startswith(PNG_SIGNATURE)
    image = decoded(png)
    assert image.format == "PNG" and image.size == (800, 560)
    assert render_map(paris_map()) == png


def test_numbered_markers_are_placed_by_their_coordinates() -> None:
    request = paris_map()
    at = marker_positions(request)
    assert at[2][0] > at[1][0] + 20 and abs(at[2][1] - at[1][1]) < 1  # east: right, same height
    assert at[3][1] < at[1][1] - 20 and abs(at[3][0] - at[1][0]) < 1  # north: higher up
    image = decoded(render_map(request)).convert("RGB")
    for number, (x, y) in at.items():
        # the marker's disc (the number is written in white in its middle)
        ring = [image.getpixel((round(x + dx), round(y + dy))) for dx, dy in ((0, -11), (-11, 0), (11, 0), (0, 11))]
        assert sum(is_marker_colour(p) for p in ring) >= 3, (number, ring)  # type: ignore[arg-type]
        assert 0 < x < 800 and 0 < y < 560


def test_landmark_is_drawn_in_its_own_colour_where_it_is() -> None:
    request = paris_map()
    image = decoded(render_map(request)).convert("RGB")
    with_landmark_only = HotelMap(request.hotels)
    assert render_map(with_landmark_only) != render_map(request)
    reds = sum(1 for p in image.getdata() if p[0] > 170 and p[1] < 90 and p[2] < 80)  # type: ignore[index]
    assert reds > 100  # the diamond and its label


def test_japanese_names_do_not_crash_and_unknown_scripts_fall_back_to_the_number() -> None:
    request = HotelMap(
        hotels=(MapHotel(1, "ホテル新宿ステーション", 35.6938, 139.7034, "¥21,000/night"),
                MapHotel(2, "京王プラザホテル", 35.6905, 139.6925)),
        places=(MapPlace("東京タワー", 35.6586, 139.7454), MapPlace("新宿", 35.6938, 139.7034, "district", 1.0)),
    )
    image = decoded(render_map(request))
    assert image.size == (800, 560)
    assert not covers(ImageFont.load_default(18), "ホテル")  # Pillow's own font: the number only
    assert covers(ImageFont.load_default(18), "Hotel 1")


def test_one_hotel_or_hotels_on_the_same_spot_still_make_a_map() -> None:
    same = HotelMap((MapHotel(1, "A", 41.9, 12.5), MapHotel(2, "B", 41.9, 12.5)))
    assert decoded(render_map(same)).size == (800, 560)
    assert decoded(render_map(HotelMap((MapHotel(1, "A", -33.86, 151.2),)), size=(400, 280))).size == (400, 280)


# --- what the map shows, from the state -------------------------------------------------------


def hotel(name: str, lat: Any, lon: Any, price: float | None = 150.0) -> dict[str, Any]:
    return {"id": name, "name": name, "latitude": lat, "longitude": lon, "price": price, "currency": "USD"}


def state_with(recommended: list[dict[str, Any]], memory: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"metadata": {"current": {"turn_id": "t2", "recommended": recommended}, "memory": memory or []}}


def test_map_numbers_follow_the_cards_and_shows_this_turns_landmark_and_district() -> None:
    memory = [
        {"turn_id": "t1", "tool": "hotels_near_landmark", "params": {"landmark": "Louvre", "city": "Paris"}},
        {"turn_id": "t2", "tool": "search_hotels", "params": {"city": "Paris", "district": "marais"}},
        {"turn_id": "t2", "tool": "hotels_near_landmark", "params": {"landmark": "Eiffel Tower", "city": "Paris"}},
    ]
    request = map_for(state_with(
        [hotel("A", 48.85, 2.35), hotel("No coordinates", None, None), hotel("C", 48.86, 2.30, None)], memory
    ))
    assert request is not None
    assert [(h.number, h.name, h.note) for h in request.hotels] == [(1, "A", "$150/night"), (3, "C", "")]
    kinds = {(p.kind, p.name) for p in request.places}
    assert kinds == {("district", "Le Marais"), ("landmark", "Eiffel Tower")}  # not the earlier turn's Louvre
    marais = next(p for p in request.places if p.kind == "district")
    assert marais.radius_km > 0


@pytest.mark.parametrize("recommended", [[], [hotel("A", None, None)], [hotel("B", float("nan"), 2.3)],
                                         [hotel("C", 123.0, 2.3)]])
async def test_no_map_without_a_recommended_hotel_with_coordinates(recommended: list[dict[str, Any]]) -> None:
    state = state_with(recommended)
    assert map_for(state) is None
    assert await HotelAgent().attachments(state) == []


async def test_the_agent_attaches_the_map_as_a_png_file() -> None:
    files = await HotelAgent().attachments(state_with([hotel("A", 48.85, 2.35), hotel("B", 48.86, 2.36)]))
    assert [(f.filename, f.mime_type, f.is_binary) for f in files] == [(FILENAME, "image/png", True)]
    assert files[0].payload().startswith(PNG_SIGNATURE)


def test_binary_attachments_travel_as_base64_in_json_and_text_ones_as_before() -> None:
    png = render_map(paris_map())
    final = Final(text="ok", files=[Attachment(filename=FILENAME, data=png, mime_type="image/png"),
                                    Attachment(filename="report.md", content="# Report")])
    line = json.dumps(final.model_dump(mode="json"))
    assert "\\u0000" not in line
    back = stream_event_adapter.validate_json(line)
    assert isinstance(back, Final)
    assert back.files[0].payload() == png and back.files[1].payload() == b"# Report"
    assert not back.files[1].is_binary and back.files[1].content == "# Report"


# --- turns ------------------------------------------------------------------------------------


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(CONCIERGE_DATA_DIR=tmp_path / "data", CONCIERGE_LLM="offline", _env_file=None)


def stored_bytes(data_dir: Path) -> bytes:
    """Everything the bot stored (checkpoints, app database, their journals), files it saved for
    the user excepted."""
    return b"".join(p.read_bytes() for p in sorted(data_dir.rglob("*")) if p.is_file() and "files" not in p.parts)


async def test_a_hotel_turn_in_the_console_saves_the_map_png_beside_the_answer(
    settings: Settings, hotel_store: HotelStore
) -> None:
    app = App(settings, [HotelAgent(clock=lambda tz: TODAY, store=hotel_store)])
    out = io.StringIO()
    code = await ask(app, "/hotel Paris near the Eiffel Tower next weekend", thread="trip", user="u", attach=[],
                     as_json=False, out=out)
    printed = out.getvalue()
    assert code == 0, printed
    saved = settings.data_dir / "files" / "console_trip" / FILENAME
    assert re.search(rf"📎 {re.escape(FILENAME)} \([\d,]+ bytes\) → {re.escape(str(saved))}", printed)
    image = decoded(saved.read_bytes())
    assert image.size == (800, 560)
    assert printed.index("▸") < printed.index(FILENAME)  # the cards, then their map

    stored = stored_bytes(settings.data_dir)
    assert b"checkpoint" in stored or len(stored) > 10_000  # the checkpoint database is there
    assert PNG_SIGNATURE not in stored and b"iVBORw0KGgo" not in stored  # no PNG, raw or base64


class BrokenMapAgent(HotelAgent):
    async def attachments(self, state: dict[str, Any]) -> list[Attachment]:
        await asyncio.sleep(0)
        raise OSError("the map could not be drawn")


async def test_a_map_that_fails_leaves_the_answer_and_cards_intact(
    settings: Settings, hotel_store: HotelStore, caplog: pytest.LogCaptureFixture
) -> None:
    async with await ConversationRuntime.open(
        settings, agents=[BrokenMapAgent(clock=lambda tz: TODAY, store=hotel_store)]
    ) as runtime:
        events = [e async for e in runtime.handle(ConversationKey.console("broken"),
                                                  TurnInput.typed("/hotel Paris next weekend"))]
    final = events[-1]
    assert isinstance(final, Final) and final.text and final.cards and final.files == []
    assert "attachments failed" in caplog.text


async def test_a_hotel_slash_command_on_slack_uploads_the_map_in_the_thread(
    make_harness: HarnessFactory, hotel_store: HotelStore  # noqa: F811
) -> None:
    harness = await make_harness([HotelAgent(clock=lambda tz: TODAY, store=hotel_store)])
    await harness.slack.command("/hotel", "Paris near the Eiffel Tower next weekend")
    await harness.settle()
    root = harness.api.channel_messages("C0GENERAL")[0]
    uploads = [f for f in harness.api.uploaded() if f.name == FILENAME]
    assert len(uploads) == 1 and uploads[0].thread_ts == root.ts
    assert decoded(uploads[0].content).size == (800, 560)


# --- the benchmark ------------------------------------------------------------------------------


def test_map_benchmark_prints_render_time_against_its_baselines() -> None:
    out = subprocess.run([sys.executable, "-m", "bench", "hotel-map", "--runs", "5"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    assert re.search(r"empty PNG .*median\s+[\d.]+ ms", out)
    assert re.search(r"map \(3 hotels.*median\s+[\d.]+ ms.*p95\s+[\d.]+ ms", out)
    assert re.search(r"map / empty PNG:\s+[\d.]+×", out)
    assert re.search(r"event loop's longest stall .*to_thread.*[\d.]+ ms", out)


async def test_a_map_slack_refuses_is_named_in_the_thread_and_never_posted_as_text(
    make_harness: HarnessFactory, hotel_store: HotelStore  # noqa: F811
) -> None:
    harness = await make_harness([HotelAgent(clock=lambda tz: TODAY, store=hotel_store)])
    harness.api.fail("files.getUploadURLExternal", error="not_allowed_token_type", times=10)
    await harness.slack.command("/hotel", "Paris near the Eiffel Tower next weekend")
    await harness.settle()
    root = harness.api.channel_messages("C0GENERAL")[0]
    texts = [m.text for m in harness.api.thread("C0GENERAL", root.ts)]
    assert any(f"couldn't attach {FILENAME}" in t and "not_allowed_token_type" in t for t in texts), texts
    assert any("Eiffel Tower" in t for t in texts)  # the answer itself stands
    assert not any("PNG" in t or "\ufffd" in t for t in texts)
async def test_a_hotel_slash_command_on_discord_sends_the_map_in_the_thread(
    api: FakeDiscordAPI, start: Start, hotel_store: HotelStore  # noqa: F811
) -> None:
    run = await start([HotelAgent(clock=lambda tz: TODAY, store=hotel_store)])
    interaction = api.slash_command("hotel", {"query": "Paris near the Eiffel Tower next weekend"})
    await api.dispatch("INTERACTION_CREATE", interaction)

    def map_sent() -> Any:
        root = api.interactions[interaction["id"]].original_id
        files = [a for m in api.bot_messages(root) for a in m.attachments if a.filename == FILENAME] if root else []
        return files[0] if files else None

    sent = await api.wait_for(map_sent)
    await run.settle()
    assert decoded(sent.content).size == (800, 560)
