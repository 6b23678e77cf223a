"""The /hotel answer's map as a PNG, drawn from coordinates alone (no tile server): the recommended
hotels as numbered markers in the order of the answer's cards, the landmark or district asked
about, a grid and a scale bar, and a legend readable at a chat preview's size."""

from __future__ import annotations

import io
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from PIL import Image, ImageDraw, ImageFont

from agents.hotel import geo
from agents.hotel.enrich import format_money

WIDTH, HEIGHT = 800, 560
FILENAME = "hotel-map.png"
SUPERSAMPLE = 2  # drawn at twice the size and reduced: smooth circles and text
KM_PER_DEGREE = math.pi * 6371.0088 / 180
MIN_SPAN_KM = 1.0  # a single hotel still shows its surroundings
MAX_PLACES = 4
MAX_HOTELS = 6  # in the legend's height
LEGEND_LINE = 30
LEGEND_PAD = 12

BACKGROUND = (243, 240, 232)
GRID = (223, 218, 206)
LEGEND_BACKGROUND = (255, 255, 255)
INK = (33, 37, 41)
MUTED = (96, 103, 110)
HOTEL = (31, 95, 191)
LANDMARK = (192, 57, 43)
DISTRICT = (46, 125, 80)
WHITE = (255, 255, 255)

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

# Font files tried in order: ones that also cover Japanese first (coverage beats weight), then Latin.
_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts",
              "/Library/Fonts", "/System/Library/Fonts", "C:/Windows/Fonts")
_CJK_BOLD = ("NotoSansCJK-Bold.ttc", "NotoSansCJKjp-Bold.otf", "NotoSansJP-Bold.otf", "NotoSansJP-Bold.ttf")
_CJK = (
    "NotoSansCJK-Regular.ttc", "NotoSansCJKjp-Regular.otf", "NotoSansJP-Regular.otf", "NotoSansJP-Regular.ttf",
    "SourceHanSans-Regular.otf", "ipagp.ttf", "ipag.ttf", "TakaoPGothic.ttf", "VL-PGothic-Regular.ttf",
    "fonts-japanese-gothic.ttf", "DroidSansFallbackFull.ttf", "wqy-microhei.ttc", "ヒラギノ角ゴシック W3.ttc",
    "YuGothM.ttc", "msgothic.ttc", "arialuni.ttf",
)
_LATIN_BOLD = ("DejaVuSans-Bold.ttf", "LiberationSans-Bold.ttf", "Arial Bold.ttf", "arialbd.ttf")
_LATIN = ("DejaVuSans.ttf", "LiberationSans-Regular.ttf", "Arial.ttf", "arial.ttf", "Helvetica.ttc")


@dataclass(frozen=True)
class MapHotel:
    number: int  # the hotel's card is the number-th of the answer
    name: str
    lat: float
    lon: float
    note: str = ""  # "$182/night"


@dataclass(frozen=True)
class MapPlace:
    name: str
    lat: float
    lon: float
    kind: Literal["landmark", "district"] = "landmark"
    radius_km: float = 0.0


@dataclass(frozen=True)
class HotelMap:
    hotels: tuple[MapHotel, ...]
    places: tuple[MapPlace, ...] = ()


# --- what to draw, from the agent's state ------------------------------------------------------


def _coordinates(lat: Any, lon: Any) -> tuple[float, float] | None:
    try:
        la, lo = float(lat), float(lon)
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(la) and math.isfinite(lo) and -90 <= la <= 90 and -180 <= lo <= 180):
        return None
    return la, lo


def _price(hotel: Mapping[str, Any]) -> str:
    if hotel.get("price") is None or not hotel.get("currency"):
        return ""
    return format_money(float(hotel["price"]), str(hotel["currency"])) + "/night"


def _places_asked_about(memory: Iterable[Mapping[str, Any]], turn_id: str) -> tuple[MapPlace, ...]:
    """The landmarks and districts this turn's tool calls were about, as geo knows them."""
    places: dict[tuple[str, str], MapPlace] = {}
    for entry in memory:
        if not turn_id or entry.get("turn_id") != turn_id:
            continue
        params = entry.get("params") or {}
        city = geo.find_city(str(params["city"])) if params.get("city") else None
        if entry.get("tool") == "hotels_near_landmark" and params.get("landmark"):
            found = geo.find_landmark(str(params["landmark"]), city)
            if found is not None:
                landmark = found[1]
                places[("landmark", landmark.name)] = MapPlace(landmark.name, landmark.lat, landmark.lon)
        elif entry.get("tool") == "search_hotels" and params.get("district") and city is not None:
            district = city.district(str(params["district"]))
            if district is not None:
                places[("district", district.name)] = MapPlace(
                    district.name, district.lat, district.lon, kind="district", radius_km=district.radius_km
                )
    return tuple(places.values())[:MAX_PLACES]


def map_for(state: Mapping[str, Any]) -> HotelMap | None:
    """The map of a finished turn: its recommended hotels (numbered as their cards) and the places
    it searched around; None when no recommended hotel has coordinates."""
    metadata = state.get("metadata") or {}
    turn = metadata.get("current") or {}
    hotels = []
    for number, hotel in enumerate(turn.get("recommended") or [], 1):
        where = _coordinates(hotel.get("latitude"), hotel.get("longitude"))
        if where is not None:
            hotels.append(MapHotel(number, str(hotel.get("name") or ""), *where, note=_price(hotel)))
    if not hotels:
        return None
    places = tuple(
        p for p in _places_asked_about(metadata.get("memory") or [], str(turn.get("turn_id") or ""))
        if _coordinates(p.lat, p.lon) is not None
    )
    return HotelMap(tuple(hotels), places)


# --- projection ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Projection:
    """Equirectangular around the map's centre latitude: kilometres east and north of the centre,
    then pixels (y grows downwards)."""

    lat0: float
    lon0: float
    px_per_km: float
    cx: float
    cy: float

    def km(self, lat: float, lon: float) -> tuple[float, float]:
        return (lon - self.lon0) * KM_PER_DEGREE * math.cos(math.radians(self.lat0)), (lat - self.lat0) * KM_PER_DEGREE

    def __call__(self, lat: float, lon: float) -> tuple[float, float]:
        east, north = self.km(lat, lon)
        return self.cx + east * self.px_per_km, self.cy - north * self.px_per_km


def fit(points: Sequence[tuple[float, float, float]], box: tuple[float, float, float, float], margin: float) -> Projection:
    """The projection that shows every (lat, lon, radius_km) inside `box` (x0, y0, x1, y1) with
    `margin` pixels to spare on each side."""
    lats = [p[0] for p in points]
    lons = [p[1] for p in points]
    centre = Projection((min(lats) + max(lats)) / 2, (min(lons) + max(lons)) / 2, 1.0, 0.0, 0.0)
    xs, ys = [], []
    for lat, lon, radius in points:
        east, north = centre.km(lat, lon)
        xs += [east - radius, east + radius]
        ys += [north - radius, north + radius]
    span_x, span_y = max(max(xs) - min(xs), MIN_SPAN_KM), max(max(ys) - min(ys), MIN_SPAN_KM)
    x0, y0, x1, y1 = box
    scale = min((x1 - x0 - 2 * margin) / span_x, (y1 - y0 - 2 * margin) / span_y)
    mid_x, mid_y = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    return Projection(centre.lat0, centre.lon0, scale, (x0 + x1) / 2 - mid_x * scale, (y0 + y1) / 2 + mid_y * scale)


def nice_length(km: float) -> float:
    """The largest of 1, 2, 5 × 10^k kilometres not above `km`."""
    exponent = math.floor(math.log10(km))
    for step in (5, 2, 1):
        if step * 10**exponent <= km:
            return float(step * 10**exponent)
    return float(10**exponent)


def distance_label(km: float) -> str:
    return f"{km * 1000:.0f} m" if km < 1 else f"{km:g} km"


# --- fonts ------------------------------------------------------------------------------------


@cache
def _font_files() -> dict[str, Path]:
    found: dict[str, Path] = {}
    wanted = {name.lower() for name in (*_CJK_BOLD, *_CJK, *_LATIN_BOLD, *_LATIN)}
    for root in _FONT_DIRS:
        directory = Path(os.path.expanduser(root))
        if not directory.is_dir():
            continue
        for dirpath, _, filenames in os.walk(directory):
            for filename in filenames:
                if filename.lower() in wanted:
                    found.setdefault(filename.lower(), Path(dirpath) / filename)
    return found


@cache
def font(size: int, bold: bool = False) -> Font:
    """The first installed font of the preference list (Japanese-capable first); Pillow's own font
    when there is none."""
    files = _font_files()
    for name in (*_CJK_BOLD, *_CJK, *_LATIN_BOLD, *_LATIN) if bold else (*_CJK, *_LATIN):
        path = files.get(name.lower())
        if path is None:
            continue
        try:
            return ImageFont.truetype(str(path), size)
        except OSError:
            continue
    return ImageFont.load_default(size)


_coverage: dict[tuple[str, int, str], bool] = {}


def covers(face: Font, text: str) -> bool:
    """Whether the font draws every character of `text` (not its "missing glyph" box)."""
    if not isinstance(face, ImageFont.FreeTypeFont):
        return all(ord(ch) < 256 for ch in text)  # a bitmap font: Latin-1 only
    for ch in set(text):
        key = (str(face.path), int(face.size), ch)
        if key not in _coverage:
            if ch.isspace() or ord(ch) < 128:
                _coverage[key] = True
            else:
                missing = face.getmask("\U0010fffd")
                mask = face.getmask(ch)
                _coverage[key] = (mask.size, bytes(mask)) != (missing.size, bytes(missing))
        if not _coverage[key]:
            return False
    return True


def _fitted(face: Font, text: str, width: float) -> str:
    """`text` cut with an ellipsis to fit `width` pixels."""
    if face.getlength(text) <= width:
        return text
    while text and face.getlength(text + "…") > width:
        text = text[:-1]
    return text.rstrip() + "…" if text else ""


# --- drawing ------------------------------------------------------------------------------------


class _Canvas:
    """Drawing in final-image pixels on a supersampled image."""

    def __init__(self, width: int, height: int) -> None:
        self.s = SUPERSAMPLE
        self.image = Image.new("RGB", (width * self.s, height * self.s), BACKGROUND)
        self.draw = ImageDraw.Draw(self.image, "RGBA")

    def font(self, size: int, bold: bool = False) -> Font:
        return font(size * self.s, bold)

    def rect(self, box: tuple[float, float, float, float], fill: Any, outline: Any = None, radius: float = 0) -> None:
        s = self.s
        self.draw.rounded_rectangle([v * s for v in box], radius=radius * s, fill=fill, outline=outline, width=s)

    def line(self, points: Sequence[tuple[float, float]], fill: Any, width: float) -> None:
        self.draw.line([(x * self.s, y * self.s) for x, y in points], fill=fill, width=max(1, round(width * self.s)))

    def circle(self, x: float, y: float, r: float, fill: Any, outline: Any = None, width: float = 0) -> None:
        s = self.s
        self.draw.ellipse([(x - r) * s, (y - r) * s, (x + r) * s, (y + r) * s], fill=fill, outline=outline,
                          width=round(width * s))

    def diamond(self, x: float, y: float, r: float, fill: Any, outline: Any) -> None:
        s = self.s
        points = [((x + dx) * s, (y + dy) * s) for dx, dy in ((0, -r), (r, 0), (0, r), (-r, 0))]
        self.draw.polygon(points, fill=fill, outline=outline, width=2 * s)

    def text(self, x: float, y: float, text: str, face: Font, fill: Any, *, halo: bool = False,
             anchor: Literal["left", "centre"] = "left") -> None:
        """`text` with its vertical middle at y, starting (or centred) at x."""
        s = self.s
        stroke = 2 * s if halo else 0
        left, top, right, bottom = self.draw.textbbox((0, 0), text, font=face, stroke_width=stroke)
        px = x * s - (left + (right - left) / 2 if anchor == "centre" else left)
        py = y * s - (top + (bottom - top) / 2)
        self.draw.text((px, py), text, font=face, fill=fill, stroke_width=stroke, stroke_fill=WHITE if halo else None)

    def png(self) -> bytes:
        out = io.BytesIO()
        self.image.reduce(self.s).save(out, "PNG")
        return out.getvalue()


def _hotel_marker(canvas: _Canvas, x: float, y: float, number: int, r: float = 15) -> None:
    canvas.circle(x, y, r, HOTEL, WHITE, 2)
    canvas.text(x, y, str(number), canvas.font(17 if number < 10 else 14, bold=True), WHITE, anchor="centre")


def _place_marker(canvas: _Canvas, place: MapPlace, x: float, y: float, px_per_km: float | None) -> None:
    if place.kind == "district":
        r = max(place.radius_km * px_per_km, 10) if px_per_km else 9
        canvas.circle(x, y, r, (*DISTRICT, 40), (*DISTRICT, 170), 2)
        if px_per_km:  # the area's centre
            canvas.circle(x, y, 3, DISTRICT)
    else:
        canvas.diamond(x, y, 11 if px_per_km else 9, LANDMARK, WHITE)


def _hotel_line(hotel: MapHotel, face: Font, places: Sequence[MapPlace]) -> str:
    """"Name — $182/night · 0.4 km to Eiffel Tower"; a name the font cannot draw is left out (the
    number beside it still matches the card)."""
    details = [hotel.note] if hotel.note and covers(face, hotel.note) else []
    landmarks = [p for p in places if p.kind == "landmark"]
    if len(landmarks) == 1:
        km = geo.haversine_km(hotel.lat, hotel.lon, landmarks[0].lat, landmarks[0].lon)
        to = f" to {landmarks[0].name}" if covers(face, landmarks[0].name) else ""
        details.append(f"{km:.1f} km{to}")
    name = hotel.name if hotel.name and covers(face, hotel.name) else ""
    return " — ".join(part for part in (name, " · ".join(details)) if part)


def _place_line(place: MapPlace, face: Font) -> str:
    kind = "district" if place.kind == "district" else "landmark"
    return f"{place.name} ({kind})" if covers(face, place.name) else kind



def _grid(canvas: _Canvas, project: Projection, step_km: float, width: float, bottom: float) -> None:
    """Light lines every `step_km`, through the map's centre."""
    every = step_km * project.px_per_km
    if every < 12:
        return
    for k in range(-math.ceil(project.cx / every), math.ceil((width - project.cx) / every) + 1):
        canvas.line([(project.cx + k * every, 0), (project.cx + k * every, bottom)], GRID, 1)
    for k in range(-math.ceil(project.cy / every), math.ceil((bottom - project.cy) / every) + 1):
        canvas.line([(0, project.cy + k * every), (width, project.cy + k * every)], GRID, 1)


def _scale_bar(canvas: _Canvas, project: Projection, step_km: float, bottom: float) -> None:
    bar = step_km * project.px_per_km
    x0, y0 = 16.0, bottom - 16.0
    canvas.rect((x0 - 8, y0 - 30, x0 + bar + 8, y0 + 8), (255, 255, 255, 215), radius=4)
    canvas.line([(x0, y0), (x0 + bar, y0)], INK, 3)
    canvas.line([(x0, y0 - 6), (x0, y0 + 3)], INK, 2)
    canvas.line([(x0 + bar, y0 - 6), (x0 + bar, y0 + 3)], INK, 2)
    canvas.text(x0 + bar / 2, y0 - 17, distance_label(step_km), canvas.font(13), INK, anchor="centre")


def _place_label(canvas: _Canvas, place: MapPlace, x: float, y: float, width: float) -> None:
    face = canvas.font(15, bold=True)
    if not covers(face, place.name):
        return
    if place.kind == "district":
        canvas.text(x, y - 14, place.name, face, DISTRICT, halo=True, anchor="centre")
        return
    length = face.getlength(place.name) / canvas.s
    left = x - 16 - length if x + 16 + length > width - 4 else x + 16  # no room on the right: on the left
    canvas.text(left, y, place.name, face, LANDMARK, halo=True)


def _legend(canvas: _Canvas, request: HotelMap, top: float, width: float) -> None:
    canvas.rect((0, top, width, canvas.image.height / canvas.s), LEGEND_BACKGROUND)
    canvas.line([(0, top), (width, top)], GRID, 2)
    face = canvas.font(18)
    text_x, room = 48.0, (width - 60) * canvas.s
    y = top + LEGEND_PAD + LEGEND_LINE / 2
    for hotel in request.hotels:
        _hotel_marker(canvas, 24, y, hotel.number, r=13)
        canvas.text(text_x, y, _fitted(face, _hotel_line(hotel, face, request.places), room), face, INK)
        y += LEGEND_LINE
    for place in request.places:
        _place_marker(canvas, place, 24, y, None)
        canvas.text(text_x, y, _fitted(face, _place_line(place, face), room), face, MUTED)
        y += LEGEND_LINE


def layout(request: HotelMap, size: tuple[int, int] = (WIDTH, HEIGHT)) -> tuple[HotelMap, float, Projection]:
    """What is drawn (at most MAX_HOTELS hotels and MAX_PLACES places), the map's bottom edge (the
    legend is below it) and the projection that fits everything in."""
    width, height = size
    request = HotelMap(request.hotels[:MAX_HOTELS], request.places[:MAX_PLACES])
    bottom = height - (2 * LEGEND_PAD + (len(request.hotels) + len(request.places)) * LEGEND_LINE)
    points = [(h.lat, h.lon, 0.0) for h in request.hotels] + [(p.lat, p.lon, p.radius_km) for p in request.places]
    return request, bottom, fit(points, (0, 0, width, bottom), margin=36)


def marker_positions(request: HotelMap, size: tuple[int, int] = (WIDTH, HEIGHT)) -> dict[int, tuple[float, float]]:
    """Where each hotel's numbered marker is centred, in pixels, by number."""
    request, _, project = layout(request, size)
    return {h.number: project(h.lat, h.lon) for h in request.hotels}


def render_map(request: HotelMap, size: tuple[int, int] = (WIDTH, HEIGHT)) -> bytes:
    """The map as PNG bytes; the same request gives the same bytes."""
    width, height = size
    request, bottom, project = layout(request, size)
    canvas = _Canvas(width, height)
    step_km = nice_length(width * 0.22 / project.px_per_km)
    _grid(canvas, project, step_km, width, bottom)
    _scale_bar(canvas, project, step_km, bottom)
    for place in sorted(request.places, key=lambda p: p.kind != "district"):  # areas below points
        _place_marker(canvas, place, *project(place.lat, place.lon), project.px_per_km)
    for place in request.places:
        _place_label(canvas, place, *project(place.lat, place.lon), width)
    for hotel in reversed(request.hotels):  # number 1 on top
        _hotel_marker(canvas, *project(hotel.lat, hotel.lon), hotel.number)
    _legend(canvas, request, bottom, width)
    return canvas.png()
