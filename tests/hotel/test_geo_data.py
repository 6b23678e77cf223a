"""The hotel geography as data: the packaged geo.json, an extra file from CONCIERGE_HOTEL_GEO_FILE,
and the errors a bad file gives."""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from agents.hotel import geo
from bot.config import ConfigError

ROOT = Path(__file__).resolve().parents[2]

REYKJAVIK: dict[str, Any] = {
    "name": "Reykjavik", "country": "Iceland", "currency": "ISK", "lat": 64.1466, "lon": -21.9426,
    "base_price": 25000, "price_step": 100, "aliases": ["Reykjavík", "レイキャビク"],
    "high_months": [6, 7, 8], "low_months": [1, 2, 11],
    "districts": [
        {"name": "Miðborg", "lat": 64.1470, "lon": -21.9400, "radius_km": 0.8, "price_factor": 1.2, "aliases": ["Downtown"]},
        {"name": "Vesturbær", "lat": 64.1460, "lon": -21.9600, "radius_km": 0.9, "price_factor": 0.9},
    ],
    "landmarks": [
        {"name": "Hallgrímskirkja", "lat": 64.1417, "lon": -21.9266},
        {"name": "Harpa Concert Hall", "lat": 64.1503, "lon": -21.9328},
    ],
}


def _geo_file(tmp_path: Path, *cities: dict[str, Any]) -> Path:
    path = tmp_path / "geo.json"
    path.write_text(json.dumps({"cities": list(cities)}, ensure_ascii=False), encoding="utf-8")
    return path


def _reykjavik(**changes: Any) -> dict[str, Any]:
    city = json.loads(json.dumps(REYKJAVIK))
    for key, value in changes.items():
        if value is None:
            del city[key]
        else:
            city[key] = value
    return city


def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter, so the geography is loaded at start-up as the bot loads it."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "CONCIERGE_", "SLACK_", "DISCORD_"))}
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env={**clean, "CONCIERGE_LLM": "offline", **env},
        capture_output=True, text=True, timeout=120,
    )


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return _run("-c", code, **env)


# --- the built-in file -----------------------------------------------------------------------


def test_built_in_geography_is_package_data_beside_the_module() -> None:
    data = resources.files("agents.hotel").joinpath(geo.BUILT_IN)
    assert data.is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert any(fnmatch.fnmatch("geo.json", pattern) for pattern in config["package-data"]["*"])
    assert config["packages"]["find"].get("namespaces", True)  # agents/hotel/data has no __init__.py


def test_every_built_in_city_loads_with_coordinates_districts_and_landmarks() -> None:
    cities = geo.load_cities()
    assert len(cities) == 32
    assert {c.name.lower(): c for c in cities} == geo.CITIES
    for city in cities:
        assert city.districts and city.landmarks, city.name
        places: list[geo.City | geo.District | geo.Landmark] = [city, *city.districts, *city.landmarks]
        for place in places:
            assert -90 <= place.lat <= 90 and -180 <= place.lon <= 180, (city.name, place.name)
        assert set(city.high_months).isdisjoint(city.low_months), city.name


def test_built_in_file_keeps_the_japanese_names_and_integer_prices() -> None:
    tokyo = geo.CITIES["tokyo"]
    assert "東京" in tokyo.aliases and tokyo.district("新宿").name == "Shinjuku"  # type: ignore[union-attr]
    assert type(tokyo.base_price) is int and tokyo.price_step == 100
    assert type(geo.CITIES["paris"].price_step) is float  # the default step


# --- an extra file -------------------------------------------------------------------------


def test_extra_file_adds_a_city_that_requests_then_find(tmp_path: Path) -> None:
    extra = _geo_file(tmp_path, REYKJAVIK)
    proc = _python(
        "from agents.hotel import geo\n"
        "from agents.hotel.offline import detect_city\n"
        "print(detect_city('a quiet hotel in Reykjavík for 2 nights from July 3').name)\n"
        "print(detect_city('レイキャビクのホテル').name)\n"
        "print(geo.find_city('reykjavik').district('downtown').name)\n"
        "print(len(geo.CITIES), list(geo.CITIES)[-1], geo.suggest_cities('Reykjavick'))\n",
        CONCIERGE_HOTEL_GEO_FILE=str(extra),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["Reykjavik", "Reykjavik", "Miðborg", "33 reykjavik ['Reykjavik']"]


def test_without_an_extra_file_the_city_is_unknown() -> None:
    proc = _python("from agents.hotel.offline import detect_city\nprint(detect_city('a hotel in Reykjavik'))")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "None"


def test_extra_city_with_a_built_in_name_replaces_it_in_place(tmp_path: Path) -> None:
    built_in = geo.load_cities()
    rome = _reykjavik(name="ROME", country="Italy", currency="EUR", base_price=140, aliases=["Roma", "ローマ"])
    cities = geo.load_cities(_geo_file(tmp_path, rome, REYKJAVIK))
    names = [c.name for c in built_in]
    assert names[4] == "Rome"
    assert [c.name for c in cities] == [*names[:4], "ROME", *names[5:], "Reykjavik"]
    assert cities[4].base_price == 140 and cities[4].districts[0].name == "Miðborg"


# --- bad files -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("city", "expected"),
    [
        (_reykjavik(lat=None), "cities[0] (Reykjavik) → lat: Field required"),
        (_reykjavik(lat=95.0), "cities[0] (Reykjavik) → lat: Input should be less than or equal to 90 (got 95.0)"),
        (_reykjavik(landmarks=[]), "cities[0] (Reykjavik) → landmarks: List should have at least 1 item"),
        (
            _reykjavik(districts=[{"name": "Miðborg", "lat": 64.1, "radius_km": 1, "price_factor": 1}]),
            "cities[0] (Reykjavik) → districts[0] (Miðborg) → lon: Field required",
        ),
        (_reykjavik(aliases=["Roma"]), "city name or alias 'Roma' names both 'Rome' and 'Reykjavik'"),
        (_reykjavik(latitude=64.1), "cities[0] (Reykjavik) → latitude: Extra inputs are not permitted"),
        (_reykjavik(high_months=[6, 7], low_months=[7]), "cities[0] (Reykjavik): month 7 is in both high_months and low_months"),
        (_reykjavik(currency="kr"), "cities[0] (Reykjavik) → currency: String should match pattern"),
    ],
    ids=["missing-coordinates", "latitude-out-of-range", "no-landmarks", "district-without-longitude",
         "alias-of-another-city", "misspelt-field", "month-high-and-low", "currency"],
)
def test_bad_extra_file_names_the_file_entry_and_field(tmp_path: Path, city: dict[str, Any], expected: str) -> None:
    path = _geo_file(tmp_path, city)
    with pytest.raises(geo.GeoDataError) as caught:
        geo.load_cities(path)
    message = str(caught.value)
    assert message.startswith(f"Invalid geography file {path}:\n")
    assert expected in message


def test_two_cities_in_one_file_may_not_share_an_alias(tmp_path: Path) -> None:
    other = _reykjavik(name="Akureyri", aliases=["Reykjavík"])
    with pytest.raises(geo.GeoDataError, match="city name or alias 'Reykjavík' names both 'Reykjavik' and 'Akureyri'"):
        geo.load_cities(_geo_file(tmp_path, REYKJAVIK, other))


def test_file_that_is_not_json_says_where_it_breaks(tmp_path: Path) -> None:
    path = tmp_path / "geo.json"
    path.write_text('{"cities": [', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"not JSON: Expecting value: line 1 column 13"):
        geo.load_cities(path)


def test_bad_extra_file_stops_the_bot_at_start_up_with_the_reason(tmp_path: Path) -> None:
    path = _geo_file(tmp_path, _reykjavik(lat=None, lon=-200))
    proc = _run("-m", "bot", "ask", "hello", CONCIERGE_DATA_DIR=str(tmp_path), CONCIERGE_HOTEL_GEO_FILE=str(path))
    assert proc.returncode == 2
    assert proc.stderr == (
        f"Invalid geography file {path}:\n"
        "  cities[0] (Reykjavik) → lat: Field required\n"
        "  cities[0] (Reykjavik) → lon: Input should be greater than or equal to -180 (got -200)\n"
    )


def test_missing_extra_file_is_a_configuration_error(tmp_path: Path) -> None:
    proc = _run(
        "-m", "bot", "ask", "hello",
        CONCIERGE_DATA_DIR=str(tmp_path), CONCIERGE_HOTEL_GEO_FILE=str(tmp_path / "nowhere.json"),
    )
    assert proc.returncode == 2
    assert "CONCIERGE_HOTEL_GEO_FILE: Path does not point to a file" in proc.stderr
    assert "Traceback" not in proc.stderr
