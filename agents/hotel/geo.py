"""Geography for the hotel agent: real cities, their districts and landmarks, with coordinates.

The cities are data: agents/hotel/data/geo.json, plus the file CONCIERGE_HOTEL_GEO_FILE names (same
format; its cities replace same-named built-in ones or are added after them). Both are validated
when this module is imported."""

from __future__ import annotations

import difflib
import functools
import json
import math
import unicodedata
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, model_validator

from agents.hotel.settings import HotelSettings
from bot.config import ConfigError, load

CENTRE_ALIASES = ("city centre", "city center", "the centre", "the center", "downtown", "中心部", "市内中心部", "市の中心",
                  "中心街")


@dataclass(frozen=True)
class Landmark:
    name: str
    lat: float
    lon: float
    aliases: tuple[str, ...] = ()  # other names and scripts: "浅草寺" for Sensō-ji


@dataclass(frozen=True)
class District:
    name: str
    lat: float
    lon: float
    radius_km: float
    price_factor: float  # relative to the city's base price
    aliases: tuple[str, ...] = ()

    @property
    def point(self) -> Landmark:
        """The district's centre, ranked like a sight: "which is closest to Gion?"."""
        return Landmark(self.name, self.lat, self.lon, self.aliases)


@dataclass(frozen=True)
class City:
    name: str
    country: str
    currency: str
    lat: float
    lon: float
    base_price: float  # a typical 3-star double room per night, in `currency`
    districts: tuple[District, ...]
    landmarks: tuple[Landmark, ...]
    aliases: tuple[str, ...] = ()
    high_months: tuple[int, ...] = (6, 7, 8, 12)  # prices rise
    low_months: tuple[int, ...] = (1, 2, 11)  # prices fall
    price_step: float = 1.0  # prices are rounded to a multiple of this (100 for yen)

    def district(self, text: str) -> District | None:
        """The district named (or aliased, or uniquely abbreviated) by `text`."""
        return _named(normalize(text), self._district_keys)

    def landmark(self, text: str) -> Landmark | None:
        return _named(normalize(text), self._landmark_keys)

    def centre_named(self, text: str, *, by_alias: bool) -> Landmark | None:
        """The city centre when `text` is its name ("Lisbon city centre") or, `by_alias`, one of its
        aliases in full ("downtown", 「中心部」): only where the city is already known."""
        key = normalize(text)
        return self.centre if key == normalize(self.centre.name) or (by_alias and key in self._centre_keys) else None

    @functools.cached_property
    def _district_keys(self) -> tuple[tuple[District, str, frozenset[str]], ...]:
        return _keys(self.districts)

    @functools.cached_property
    def centre(self) -> Landmark:
        """The city's own point, ranked like a sight: "near the city centre", "downtown", 「中心部に近い」."""
        return Landmark(f"{self.name} city centre", self.lat, self.lon, CENTRE_ALIASES)

    @functools.cached_property
    def _landmark_keys(self) -> tuple[tuple[Landmark, str, frozenset[str]], ...]:
        return _keys(self.landmarks)

    @functools.cached_property
    def _centre_keys(self) -> frozenset[str]:
        return frozenset(normalize(n) for n in (self.centre.name, *CENTRE_ALIASES, "centre", "center"))


_Named = TypeVar("_Named", District, Landmark)


def _keys(places: tuple[_Named, ...]) -> tuple[tuple[_Named, str, frozenset[str]], ...]:
    """Each place with its name's and its aliases' keys (`normalize`), made once per city."""
    return tuple((place, normalize(place.name), frozenset(normalize(a) for a in place.aliases)) for place in places)


def _named(key: str, keyed: tuple[tuple[_Named, str, frozenset[str]], ...]) -> _Named | None:
    """The place whose name or alias is `key`, else the one place whose name contains it."""
    if not key:
        return None
    for place, name, aliases in keyed:
        if key == name or key in aliases:
            return place
    partial = [place for place, name, _ in keyed if key in name]
    return partial[0] if len(partial) == 1 else None


def normalize(text: str) -> str:
    """Case- and accent-insensitive key; non-Latin scripts (kana, hangul) keep their marks."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFC", text.strip()):
        if ord(ch) < 0x250:  # Latin: drop accents (é → e, İ → i, ł stays)
            out.extend(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        else:
            out.append(ch)
    folded = "".join(out).casefold()
    for punct in ".'’`-_,":
        folded = folded.replace(punct, " ")
    return " ".join(folded.split())


class GeoDataError(ConfigError):
    """A geography file that cannot be used; the message names the file, the entry and the field."""


BUILT_IN = "data/geo.json"  # inside this package

# An int stays an int (base prices, yen steps): the demo prices are computed from these exact values.
_Positive = Annotated[StrictInt | float, Field(gt=0, allow_inf_nan=False)]
_Month = Annotated[int, Field(ge=1, le=12)]
_Name = Annotated[str, Field(min_length=1)]


class _Place(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: _Name
    lat: float = Field(ge=-90, le=90, allow_inf_nan=False)
    lon: float = Field(ge=-180, le=180, allow_inf_nan=False)


class _LandmarkEntry(_Place):
    aliases: list[_Name] = []

    def build(self) -> Landmark:
        return Landmark(self.name, self.lat, self.lon, tuple(self.aliases))


class _DistrictEntry(_Place):
    radius_km: float = Field(gt=0, allow_inf_nan=False)
    price_factor: float = Field(gt=0, allow_inf_nan=False)
    aliases: list[_Name] = []

    def build(self) -> District:
        return District(self.name, self.lat, self.lon, self.radius_km, self.price_factor, tuple(self.aliases))


class _CityEntry(_Place):
    country: _Name
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    base_price: _Positive
    districts: list[_DistrictEntry] = Field(min_length=1)
    landmarks: list[_LandmarkEntry] = Field(min_length=1)
    aliases: list[_Name] = []
    high_months: list[_Month] = [6, 7, 8, 12]
    low_months: list[_Month] = [1, 2, 11]
    price_step: _Positive = 1.0

    @model_validator(mode="after")
    def _consistent(self) -> _CityEntry:
        both = sorted(set(self.high_months) & set(self.low_months))
        if both:
            raise ValueError(f"month {both[0]} is in both high_months and low_months")
        _unique("district name or alias", ((d.name, n) for d in self.districts for n in (d.name, *d.aliases)))
        _unique("landmark name or alias", ((lm.name, n) for lm in self.landmarks for n in (lm.name, *lm.aliases)))
        return self

    def build(self) -> City:
        return City(
            self.name, self.country, self.currency, self.lat, self.lon, self.base_price,
            tuple(d.build() for d in self.districts), tuple(lm.build() for lm in self.landmarks),
            tuple(self.aliases), tuple(self.high_months), tuple(self.low_months), self.price_step,
        )


class _GeoFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cities: list[_CityEntry]

    @model_validator(mode="after")
    def _distinct(self) -> _GeoFile:
        _unique("city name or alias", ((c.name, n) for c in self.cities for n in (c.name, *c.aliases)))
        return self


def _unique(what: str, owned_names: Any) -> None:
    """Raise when two different owners share a name (after normalizing); one owner may repeat its own."""
    owners: dict[str, str] = {}
    for owner, name in owned_names:
        key = normalize(name)
        if owners.setdefault(key, owner) != owner:
            raise ValueError(f"{what} {name!r} names both {owners[key]!r} and {owner!r}")


def _where(raw: Any, loc: tuple[int | str, ...]) -> str:
    """`cities[3] (Rome) → districts[1] (Trastevere) → lat` for a pydantic error location."""
    parts: list[str] = []
    node = raw
    for step in loc:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            node = None
        if isinstance(step, int):
            name = node.get("name") if isinstance(node, dict) else None
            label = f"[{step}]" + (f" ({name})" if isinstance(name, str) and name else "")
            if parts:
                parts[-1] += label
            else:
                parts.append(label)
        else:
            parts.append(str(step))
    return " → ".join(parts) or "the file"


def _read(text: str, source: str) -> list[_CityEntry]:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise GeoDataError(f"Invalid geography file {source}:\n  not JSON: {exc}") from None
    try:
        return _GeoFile.model_validate(raw).cities
    except ValidationError as exc:
        lines = []
        for err in exc.errors(include_url=False):
            got = err.get("input")
            shown = f" (got {got!r})" if isinstance(got, (int, float, str)) and err["type"] != "missing" else ""
            message = err["msg"].removeprefix("Value error, ")
            lines.append(f"  {_where(raw, err['loc'])}: {message}{shown}")
        raise GeoDataError(f"Invalid geography file {source}:\n" + "\n".join(lines)) from None


def load_cities(extra: Path | None = None) -> tuple[City, ...]:
    """The built-in cities; with `extra` (a file in the same format), its cities replace the
    same-named built-in ones in place and the others follow. Raises GeoDataError naming the
    file, the entry and the field of the first problems found."""
    built_in = resources.files("agents.hotel").joinpath(BUILT_IN).read_text(encoding="utf-8")
    entries = {normalize(e.name): e for e in _read(built_in, BUILT_IN)}
    if extra is not None:
        try:
            text = extra.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise GeoDataError(f"Cannot read geography file {extra}: {exc}") from None
        entries.update((normalize(e.name), e) for e in _read(text, str(extra)))
        try:  # an added city may not take a name or alias another city already answers to
            _unique("city name or alias", ((e.name, n) for e in entries.values() for n in (e.name, *e.aliases)))
        except ValueError as exc:
            raise GeoDataError(f"Invalid geography file {extra}:\n  cities: {exc}") from None
    return tuple(e.build() for e in entries.values())


_CITY_LIST: tuple[City, ...] = load_cities(load(HotelSettings).geo_file)

CITIES: dict[str, City] = {city.name.lower(): city for city in _CITY_LIST}

_BY_KEY: dict[str, City] = {}
for _city in _CITY_LIST:
    for _name in (_city.name, *_city.aliases):
        _BY_KEY.setdefault(normalize(_name), _city)


def find_city(text: str) -> City | None:
    """The city named by `text` (its name or an alias), ignoring case and accents."""
    return _BY_KEY.get(normalize(text))


def suggest_cities(text: str, n: int = 3) -> list[str]:
    """Known city names close to a misspelled or unknown one, best first."""
    key = normalize(text)
    if not key:
        return []
    matches = difflib.get_close_matches(key, list(_BY_KEY), n=n * 3, cutoff=0.6)
    names: list[str] = []
    for match in matches:
        name = _BY_KEY[match].name
        if name not in names:
            names.append(name)
    return names[:n]


def find_landmark(text: str, city: City | None = None) -> tuple[City, Landmark] | None:
    """A landmark by name, searched in `city` or else in every city; a city's centre too, and in a
    city given, a district's centre ("closest to Gion")."""
    for candidate in (city,) if city else _CITY_LIST:
        district = candidate.district(text) if city else None
        landmark = (candidate.landmark(text) or candidate.centre_named(text, by_alias=city is not None)
                    or (district.point if district else None))
        if landmark:
            return candidate, landmark
    return None


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in kilometres."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi = phi2 - phi1
    dlambda = math.radians(lon2 - lon1)
    a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlambda / 2) ** 2
    return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(a)))
