"""Rendering the /hotel answer's map, against encoding an empty PNG of the same size.

    python -m bench hotel-map [--runs N]

Times `render_map` for a typical answer (3 hotels, the landmark and the district asked about) and,
in the same run, an empty 800×560 PNG (the encoding floor) and the same map without any text (what
fonts cost); then the event loop's longest stall while maps render, through `asyncio.to_thread`
(as the agent does) and inline on the loop. Prints ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import time
from collections.abc import Callable

from PIL import Image

from agents.hotel import geo
from agents.hotel.map import HEIGHT, WIDTH, HotelMap, MapHotel, MapPlace, render_map
from bench._common import describe


def typical_request() -> HotelMap:
    city = geo.find_city("Paris")
    assert city is not None
    landmark = city.landmark("Eiffel Tower")
    district = city.district("Saint-Germain") or city.districts[0]
    assert landmark is not None
    return HotelMap(
        hotels=(
            MapHotel(1, "Hôtel Lumière Saint-Germain", 48.8530, 2.3330, "$182/night"),
            MapHotel(2, "Le Petit Trocadéro", 48.8620, 2.2880, "$164/night"),
            MapHotel(3, "Maison Rive Gauche", 48.8500, 2.3100, "$139/night"),
        ),
        places=(
            MapPlace(landmark.name, landmark.lat, landmark.lon),
            MapPlace(district.name, district.lat, district.lon, "district", district.radius_km),
        ),
    )


def without_text(request: HotelMap) -> HotelMap:
    """The same markers with nothing to write but the numbers."""
    return HotelMap(
        tuple(MapHotel(h.number, "", h.lat, h.lon) for h in request.hotels),
        tuple(MapPlace("", p.lat, p.lon, p.kind, p.radius_km) for p in request.places),
    )


def empty_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (WIDTH, HEIGHT), (243, 240, 232)).save(out, "PNG")
    return out.getvalue()


def timed(work: Callable[[], object], runs: int) -> list[float]:
    work()  # warm: fonts found and loaded once per process
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return times


async def longest_stall(render: Callable[[], object], maps: int, off_loop: bool) -> float:
    """The longest gap between ticks of a 1 ms ticker while `maps` maps render one after another."""
    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    for _ in range(maps):
        if off_loop:
            await asyncio.to_thread(render)
        else:
            render()
            await asyncio.sleep(0)
    done.set()
    await task
    return max(gaps)


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench hotel-map")
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args(argv)
    request = typical_request()
    png = render_map(request)
    floor = timed(empty_png, args.runs)
    plain = timed(lambda: render_map(without_text(request)), args.runs)
    full = timed(lambda: render_map(request), args.runs)
    print(f"{args.runs} renders of {WIDTH}×{HEIGHT}; the map is {len(png):,} bytes, the empty PNG {len(empty_png()):,}")
    print(f"  empty PNG (baseline)               {describe(floor)}")
    print(f"  map without text                   {describe(plain)}")
    print(f"  map (3 hotels, landmark, district) {describe(full)}")
    print(f"  map / empty PNG: {statistics.median(full) / statistics.median(floor):.1f}×   "
          f"map / map without text: {statistics.median(full) / statistics.median(plain):.2f}×")
    maps = max(3, args.runs // 5)
    threaded = await longest_stall(lambda: render_map(request), maps, off_loop=True)
    inline = await longest_stall(lambda: render_map(request), maps, off_loop=False)
    print(f"  event loop's longest stall over {maps} maps: {threaded * 1000:.1f} ms with to_thread, "
          f"{inline * 1000:.1f} ms rendered on the loop ({inline / threaded:.1f}×)")
    return 0
